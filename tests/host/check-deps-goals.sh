#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Which goals install Debian packages (issue 30, item 2): `make deps`,
# `make demo`, `make check` and `make bench` run the dependency script;
# `make`, `make install`, `make install-dkms` and `make check-debug` never
# do, and NNP_DEPS=none (a Debian package build) never does. Each goal is
# a dry run (make -n) in a scratch BUILD with a stand-in script that only
# leaves a mark: make -n still remakes an included makefile, the stamp, so
# the mark is there exactly when a real run would install. Then the script's
# own plan: --dry-run names the apt sources file it would add, and adds
# nothing.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\ntouch "%s/ran"\n' "$tmp" >"$tmp/fake-install-deps.sh"

# installs GOAL [VAR=VALUE...]: whether `make -n GOAL` would install.
installs() {
	local goal=$1
	shift
	rm -rf "$tmp/ran" "$tmp/build"
	# shellcheck disable=SC2086 # no goal means make's default, `all`
	make -n -C "$root" $goal BUILD="$tmp/build" \
		INSTALL_DEPS="$tmp/fake-install-deps.sh" "$@" >"$tmp/make.log" 2>&1
	test -e "$tmp/ran"
}

tap_plan 11
for goal in deps demo check bench; do
	tap_check "make $goal installs the build's packages" installs "$goal"
done
for goal in "" install install-dkms check-debug; do
	tap_check "make ${goal:-(all)} installs nothing" eval '! installs "$goal"'
done
tap_check "make check NNP_DEPS=none installs nothing" eval '! installs check NNP_DEPS=none'

NNP_APT_SOURCES=$tmp/nnp.sources bash "$root/scripts/install-deps.sh" --dry-run >"$tmp/plan" 2>&1
tap_grep "install-deps.sh --dry-run says it would add $tmp/nnp.sources and bookworm-backports" \
	"$tmp/plan" "^  apt sources $tmp/nnp.sources: bookworm-backports"
tap_check "install-deps.sh --dry-run adds nothing" test ! -e "$tmp/nnp.sources"
tap_done
