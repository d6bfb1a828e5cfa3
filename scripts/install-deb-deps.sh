#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages `make deb` and `make check-deb` need on top of
# scripts/install-deps.sh: debhelper and dh-dkms to build the packages,
# dkms to check the module's dkms.conf, lintian, debootstrap for the
# clean root the packages are installed into, and the libraries
# debian/control's Build-Depends name, torch's through
# scripts/install-torch-deps.sh (python3-torch-nnp is built against it).
# Says what it adds first; idempotent.
set -euo pipefail
PKGS=(build-essential debhelper dh-dkms dkms dpkg-dev fakeroot lintian debootstrap pkg-config libdrm-dev
	nettle-dev libjson-c-dev dh-python python3-dev)

bash "$(dirname "$0")/install-torch-deps.sh"
. "$(dirname "$0")/lib/apt.sh"
mapfile -t missing < <(missing "${PKGS[@]}")
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deb-deps: adding what make deb and make check-deb need: ${missing[*]}"
apt_add install-deb-deps "${missing[@]}"
