#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fetch QEMU 10.0.x's source from Debian's source package (bookworm-backports'
# on Debian 12, trixie's own on Debian 13) and unpack it into DEST. Only the orig tarball is used: apt-get reports 404s
# for the .dsc and the Debian diff and exits non-zero, so we check for the
# tarball rather than the exit code.
# Usage: fetch-qemu.sh DEST
set -euo pipefail
dest=$1
[ -f "$dest/.nnp-fetched" ] && exit 0
dl=$(mktemp -d)
trap 'rm -rf "$dl"' EXIT
. "$(dirname "$0")/lib/debian-release.sh"
suite=$(debian_codename)
[ "$suite" = bookworm ] && suite=bookworm-backports
(cd "$dl" && apt-get source --download-only -q -t "$suite" qemu >/dev/null 2>&1) || true
tarball=$(ls "$dl"/qemu_10.0.*+ds.orig.tar.xz 2>/dev/null | head -n 1)
if [ -z "$tarball" ]; then
	echo "fetch-qemu: no qemu_10.0.x+ds.orig.tar.xz from $suite deb-src" >&2
	exit 1
fi
rm -rf "$dest.tmp"
mkdir -p "$dest.tmp"
tar -xf "$tarball" -C "$dest.tmp" --strip-components=1
# The +ds tarball has no firmware blobs; meson wants the compressed EDK2
# images to exist. Empty files get past it (we install no blobs).
for f in $(sed -n "s/.*'\(edk2-[a-z0-9_.-]*\.fd\)'.*/\1/p" "$dest.tmp/pc-bios/meson.build"); do
	[ -e "$dest.tmp/pc-bios/$f.bz2" ] || bzip2 -c </dev/null >"$dest.tmp/pc-bios/$f.bz2"
done
rm -rf "$dest"
touch "$dest.tmp/.nnp-fetched"
mv "$dest.tmp" "$dest"
