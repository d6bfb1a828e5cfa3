#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make deb: the five Debian packages (nnp-dkms, libnnp0, libnnp-dev,
# nnptool, python3-torch-nnp) built by dpkg-buildpackage from debian/, in
# a copy of this checkout's files (tracked and new, as they are now; not
# build/), so the checkout's own build is left alone. Installs the
# packaging tools and the build dependencies first
# (scripts/install-deb-deps.sh). Leaves the .debs and the .changes in
# OUTDIR.
# Usage: build-deb.sh OUTDIR
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(realpath -m "$1")
bash "$repo/scripts/install-deb-deps.sh"
version=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
make_version=$(sed -n 's/^VERSION := //p' "$repo/Makefile")
if [ "$version" != "$make_version" ]; then
	echo "build-deb: debian/changelog says $version, the Makefile $make_version" >&2
	exit 1
fi
src=$out/nnp-$version
rm -rf "$out"
mkdir -p "$src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
	xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
	tar --null -T - -cf -) | tar -xf - -C "$src"
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 ||
	{ tail -n 40 "$out/build.log"; echo "build-deb: failed, log: $out/build.log" >&2; exit 1; }
rm -rf "$src"
ls "$out"/*.deb
