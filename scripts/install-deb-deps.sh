#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages `make deb` and `make check-deb` need on top of
# scripts/install-deps.sh: debhelper and dh-dkms to build the packages,
# dkms to check the module's dkms.conf, lintian, and debootstrap for the
# clean root the packages are installed into. Says what it adds first;
# idempotent.
set -euo pipefail
PKGS=(build-essential debhelper dh-dkms dkms dpkg-dev fakeroot lintian debootstrap pkg-config libdrm-dev)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null |
		grep -q '^install ok installed$' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deb-deps: adding what make deb and make check-deb need: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "install-deb-deps: need root to install: ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends "${missing[@]}" ||
	{ apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; }
