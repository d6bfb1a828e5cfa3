#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Download Debian's Linux 6.12 image and headers (the newest 6.12.N that has
# both) and extract them into a sysroot; no kernel is installed on the host.
# Usage: fetch-kernel.sh SYSROOT
# Leaves SYSROOT/kernel-release holding the release string (6.12.N+deb12-amd64
# on Debian 12, 6.12.N+deb13-amd64 on Debian 13)
# and SYSROOT/build as the directory to build modules against.
set -euo pipefail
sysroot=$1
[ -f "$sysroot/kernel-release" ] && exit 0

. "$(dirname "$0")/lib/debian-release.sh"
deb=deb$(debian_major)
pkgs() { apt-cache search --names-only "$1" | awk '{print $1}'; }
ver_of() { sed -E "s/^linux-[a-z]+-(6\.12\.[0-9]+)\+$deb-amd64\$/\1/"; }
images=$(pkgs "^linux-image-6\.12\.[0-9]+\+$deb-amd64\$" | ver_of)
headers=$(pkgs "^linux-headers-6\.12\.[0-9]+\+$deb-amd64\$" | ver_of)
ver=$(comm -12 <(sort <<<"$images") <(sort <<<"$headers") | sort -V | tail -n 1)
if [ -z "$ver" ]; then
	echo "fetch-kernel: no linux-image/linux-headers 6.12 pair in the archive" >&2
	echo "fetch-kernel: are $(debian_codename)'s sources configured and 'apt-get update' done?" >&2
	exit 1
fi
rel="$ver+$deb-amd64"
dl=$(mktemp -d)
trap 'rm -rf "$dl"' EXIT
(cd "$dl" && apt-get download -q "linux-image-$rel" "linux-headers-$rel" \
	"linux-headers-$ver+$deb-common" "linux-kbuild-$ver+$deb")
rm -rf "$sysroot.tmp"
mkdir -p "$sysroot.tmp"
for deb in "$dl"/*.deb; do
	dpkg -x "$deb" "$sysroot.tmp"
done
# The headers' Makefile includes the common tree by absolute path: point it
# at the extracted copy.
hdr="$sysroot.tmp/usr/src/linux-headers-$rel"
sed -i "s|^include /usr/src/|include $(realpath "$sysroot")/usr/src/|" "$hdr/Makefile"
# Debian 13's packages put the modules under /usr/lib (its /lib is a link
# to usr/lib); depmod and the initramfs look in lib/modules.
if [ ! -e "$sysroot.tmp/lib" ] && [ -d "$sysroot.tmp/usr/lib/modules" ]; then
	ln -s usr/lib "$sysroot.tmp/lib"
fi
# The packages ship no modules.dep (depmod runs at install): make it here.
depmod -b "$sysroot.tmp" "$rel"
rm -rf "$sysroot"
mv "$sysroot.tmp" "$sysroot"
ln -sfn "usr/src/linux-headers-$rel" "$sysroot/build"
echo "$rel" >"$sysroot/kernel-release"
