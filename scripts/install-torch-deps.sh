#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages the PyTorch backend (runtimes/torch/, docs/torch.md)
# needs on top of scripts/install-deps.sh: Debian's torch 1.13 (Python and
# C++), pybind11 and setuptools to build the extension, g++. Run by `make
# torch`, so by `make check`; never by `make` or `make install`, since on a
# machine without them it is about 444 packages, 324 MiB to download and
# 1.36 GiB installed. Idempotent: with all of them present it only checks.
set -euo pipefail
PKGS=(python3-torch libtorch-dev pybind11-dev python3-setuptools g++)

. "$(dirname "$0")/lib/apt.sh"
mapfile -t missing < <(missing "${PKGS[@]}")
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-torch-deps: installing ${missing[*]} for the torch backend" \
	"(on a machine without torch: about 324 MiB to download, 1.36 GiB installed)"
apt_add install-torch-deps "${missing[@]}"
