#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Install every Debian package the build and tests need, on Debian 12
# (bookworm: adding the bookworm-backports suite, binary and source, and
# bookworm deb-src on the way) or Debian 13 (trixie: adding trixie's
# deb-src). Run by `make deps`, `make demo`, `make check` and `make bench`
# only (never by `make install`): it first prints what it will add, the
# apt sources file and each package, then adds them. Idempotent: a second
# run with everything present adds nothing and prints nothing.
# Usage: install-deps.sh [--dry-run]   (--dry-run: print the plan, add nothing)
set -euo pipefail

PKGS=(
	build-essential gcc make pkg-config git xz-utils bzip2 cpio kmod file
	dwarves bc flex bison libelf-dev libssl-dev
	libdrm-dev nettle-dev libjson-c-dev libcmocka-dev busybox-static
	libglib2.0-dev libpixman-1-dev libfdt-dev ninja-build python3-venv
	ccache clang
	linux-source-6.12
	openmpi-bin libopenmpi-dev zlib1g-dev dataset-fashion-mnist
	dkms udev sparse procps abigail-tools
	# Slurm (and munge, which it needs) for the Slurm tests: Slurm's
	# daemons start only once /etc/slurm/slurm.conf exists; munged, where
	# systemd runs, at once, with the key its package makes.
	slurmd slurmctld slurm-client
)
# Which Debian (the test of this plan points it at another os-release).
. "$(dirname "$0")/lib/debian-release.sh"
codename=$(debian_codename)
case "$codename" in
bookworm)
	# clang 14's runtime (the fuzzers' libFuzzer); Debian 12's meson
	# (1.0) is too old for QEMU 10, and pycotap and QEMU 10's data are
	# not in it: those from bookworm-backports.
	PKGS+=(libclang-rt-14-dev)
	BACKPORTS_PKGS=(meson python3-pycotap qemu-system-data)
	suites="bookworm-backports (deb, deb-src),
    deb-src of bookworm and bookworm-security"
	default_list=/etc/apt/sources.list.d/nnp-backports.sources
	;;
trixie)
	PKGS+=(libclang-rt-19-dev meson python3-pycotap qemu-system-data)
	BACKPORTS_PKGS=()
	suites="deb-src of trixie and trixie-security"
	default_list=/etc/apt/sources.list.d/nnp-deb-src.sources
	;;
*)
	echo "install-deps: nnp builds on Debian 12 (bookworm) and Debian 13 (trixie);" \
		"this is $(debian_pretty)" >&2
	exit 1
	;;
esac
# Where the sources go (the test of this plan points it elsewhere).
src_list=${NNP_APT_SOURCES:-$default_list}
dry_run=0
[ "${1:-}" = --dry-run ] && dry_run=1

. "$(dirname "$0")/lib/apt.sh"

mapfile -t want < <(missing "${PKGS[@]}")
want_bp=()
if [ "$codename" = bookworm ]; then
	mapfile -t want_bp < <(missing "${BACKPORTS_PKGS[@]}")
	# meson must be >= 1.5: bookworm's 1.0 does not count.
	if ! dpkg --compare-versions "$(dpkg-query -W -f='${Version}' meson 2>/dev/null || echo 0)" ge 1.5 &&
		[[ " ${want_bp[*]} " != *" meson "* ]]; then
		want_bp+=(meson)
	fi
fi
need_sources=0
[ -f "$src_list" ] || need_sources=1
if [ "$need_sources" = 0 ] && [ ${#want[@]} -eq 0 ] && [ ${#want_bp[@]} -eq 0 ]; then
	exit 0
fi

echo "install-deps: this machine lacks what the nnp build needs; adding:"
if [ "$need_sources" = 1 ]; then
	echo "  apt sources $src_list: $suites (QEMU's and the kernel's sources)"
fi
[ ${#want[@]} -eq 0 ] || echo "  packages: ${want[*]}"
[ ${#want_bp[@]} -eq 0 ] || echo "  packages from bookworm-backports: ${want_bp[*]}"
[ "$dry_run" = 0 ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: need root to add these (or add them yourself)" >&2
	exit 1
fi

# stanza TYPES ARCHIVE SUITE: one entry of the deb822 sources file.
stanza() {
	printf 'Types: %s\nURIs: http://deb.debian.org/%s\nSuites: %s\nComponents: main\n' "$1" "$2" "$3"
	printf 'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n'
}
if [ "$need_sources" = 1 ] && [ "$codename" = trixie ]; then
	{ stanza deb-src debian trixie; echo; stanza deb-src debian-security trixie-security; } >"$src_list"
elif [ "$need_sources" = 1 ]; then
	{
		stanza "deb deb-src" debian bookworm-backports
		echo
		stanza deb-src debian bookworm
		echo
		stanza deb-src debian-security bookworm-security
	} >"$src_list"
fi
# The lists of the sources just added: bookworm-backports' packages, or
# trixie's source packages.
lists='bookworm-backports*Packages'
[ "$codename" = trixie ] && lists='*trixie*Sources'
# shellcheck disable=SC2086 # $lists is a glob
if [ "$need_sources" = 1 ] || ! ls /var/lib/apt/lists/$lists >/dev/null 2>&1; then
	apt-get update -q
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#want[@]} -gt 0 ]; then
	apt-get install -y -q --no-install-recommends "${want[@]}"
fi
if [ ${#want_bp[@]} -gt 0 ]; then
	apt-get install -y -q --no-install-recommends -t bookworm-backports "${want_bp[@]}"
fi
