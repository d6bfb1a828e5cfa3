#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Which goals install Debian packages (issue 30, item 2): `make deps`,
# `make demo`, `make check` and `make bench` run the dependency script
# (and `make check` torch's, before it builds torch's extension);
# `make`, `make install`, `make install-dkms` and `make check-debug` never
# do, and NNP_DEPS=none (a Debian package build) never does. Each goal is
# a dry run (make -n) in a scratch BUILD with a stand-in script that only
# leaves a mark: make -n still remakes an included makefile, the stamp, so
# the mark is there exactly when a real run would install. A dry run that
# stops before any recipe says nothing either way, and fails its check. Then the script's
# own plan: --dry-run exits 0, names the apt sources file it would add,
# and adds nothing; on Debian 13 it plans trixie's sources and packages,
# and on another release it refuses, naming it. `make check-fresh` refuses
# a DIST it has no root for in the same way, before it makes one.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\ntouch "%s/ran"\n' "$tmp" >"$tmp/fake-install-deps.sh"

# installs GOAL [VAR=VALUE...]: whether `make -n GOAL` would install: 0
# yes, 1 no; 2 if make stopped before any recipe (an unknown goal, a
# makefile that does not parse), which says neither (its log shown). A
# recipe may fail after the stamp's turn: here a sub-make that finds no
# kernel tree in the scratch BUILD.
installs() {
	local goal=$1
	shift
	rm -rf "$tmp/ran" "$tmp/build"
	# A make of its own, not a sub-make of `make check`'s: its own flags,
	# and its messages "make: ..." whatever runs this.
	# shellcheck disable=SC2086 # no goal means make's default, `all`
	if ! env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -n -C "$root" $goal \
		BUILD="$tmp/build" INSTALL_DEPS="$tmp/fake-install-deps.sh" "$@" \
		>"$tmp/make.log" 2>&1 &&
		! grep -qE '^make(\[[0-9]+\])?: \*\*\* \[.*\] Error [0-9]+$' "$tmp/make.log"; then
		sed 's/^/# /' "$tmp/make.log" | tail -n 5
		return 2
	fi
	test -e "$tmp/ran"
}
# installs_nothing GOAL [VAR=VALUE...]: make -n GOAL works and would not.
installs_nothing() {
	installs "$@"
	[ $? = 1 ]
}

tap_plan 19
for goal in deps demo check bench; do
	tap_check "make $goal installs the build's packages" installs "$goal"
done
for goal in "" install install-dkms check-debug; do
	tap_check "make ${goal:-(all)} installs nothing" installs_nothing "$goal"
done
tap_check "make check NNP_DEPS=none installs nothing" installs_nothing check NNP_DEPS=none
# make check builds torch's extension in a sub-make whose goals (all torch)
# install nothing, so it installs torch's packages itself, before that.
installs check
tap_check "make check installs torch's packages before the build that needs them" \
	awk '/install-torch-deps\.sh$/ && !t { t = NR } / all torch$/ && !b { b = NR }
	     END { exit !(t && b && t < b) }' "$tmp/make.log"

# Each plan from an os-release file of its own: the same on any machine.
printf 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_CODENAME=bookworm\n' >"$tmp/os12"
NNP_OS_RELEASE=$tmp/os12 NNP_APT_SOURCES=$tmp/nnp.sources \
	bash "$root/scripts/install-deps.sh" --dry-run >"$tmp/plan" 2>&1
tap_check "install-deps.sh --dry-run exits 0" test $? = 0
tap_grep "on Debian 12, install-deps.sh --dry-run says it would add $tmp/nnp.sources and bookworm-backports" \
	"$tmp/plan" "^  apt sources $tmp/nnp.sources: bookworm-backports"
tap_check "install-deps.sh --dry-run adds nothing" test ! -e "$tmp/nnp.sources"
# The plan on Debian 13 and on a release nnp does not build on, from their
# os-release files: trixie's deb-src and its own clang runtime, no backports.
printf 'PRETTY_NAME="Debian GNU/Linux 13 (trixie)"\nVERSION_CODENAME=trixie\n' >"$tmp/os13"
printf 'PRETTY_NAME="Ubuntu 24.04 LTS"\nVERSION_CODENAME=noble\n' >"$tmp/noble"
NNP_OS_RELEASE=$tmp/os13 NNP_APT_SOURCES=$tmp/nnp.sources \
	bash "$root/scripts/install-deps.sh" --dry-run >"$tmp/plan13" 2>&1
tap_grep "on Debian 13, install-deps.sh --dry-run would add trixie's deb-src" \
	"$tmp/plan13" "^  apt sources $tmp/nnp.sources: deb-src of trixie and trixie-security "
tap_check "on Debian 13, no backports and clang 19's runtime, not 14's" sh -c \
	"! grep -q backports '$tmp/plan13' && ! grep -q 'libclang-rt-14-dev' '$tmp/plan13' &&
	 { dpkg -s libclang-rt-19-dev >/dev/null 2>&1 || grep -q ' libclang-rt-19-dev' '$tmp/plan13'; }"
NNP_OS_RELEASE=$tmp/noble bash "$root/scripts/install-deps.sh" --dry-run >"$tmp/plan-noble" 2>&1
tap_check "on another release, install-deps.sh exits 1" test $? = 1
tap_grep "... naming it and the releases nnp builds on" "$tmp/plan-noble" \
	"^install-deps: nnp builds on Debian 12 \(bookworm\) and Debian 13 \(trixie\); this is Ubuntu 24.04 LTS$"
DIST=sid bash "$root/scripts/check-fresh.sh" "$tmp/fresh" >"$tmp/fresh.log" 2>&1
tap_check "check-fresh DIST=sid exits 1 and makes no root" \
	test $? = 1 -a ! -e "$tmp/fresh/root"
tap_grep "... naming the suite and the ones it makes" "$tmp/fresh.log" \
	"^debian-root: suite 'sid' is not one nnp supports \(bookworm, trixie\)$"
tap_done
