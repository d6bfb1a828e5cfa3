#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The packages `make bench` needs beyond scripts/install-deps.sh: Debian's
# gnuplot (no X) for the plot and perf (linux-perf) for the context
# switches per allreduce. Kept out of the build's list since neither `make`
# nor `make check` plots or profiles, and gnuplot pulls in cairo, pango and
# lua.
set -euo pipefail
pkgs=()
command -v gnuplot >/dev/null || pkgs+=(gnuplot-nox)
command -v perf >/dev/null || pkgs+=(linux-perf)
[ ${#pkgs[@]} = 0 ] && exit 0
echo "bench: adding the packages the benchmark needs: ${pkgs[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: need root to install ${pkgs[*]} (or install them yourself)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends "${pkgs[@]}" ||
	{ apt-get update && apt-get install -y --no-install-recommends "${pkgs[@]}"; }
