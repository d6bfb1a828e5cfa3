#!/usr/bin/env bash
# The one package `make bench` needs beyond scripts/install-deps.sh: Debian's
# gnuplot (no X) for the plot. Kept out of the build's list since neither
# `make` nor `make check` plots, and gnuplot pulls in cairo, pango and lua.
set -euo pipefail
command -v gnuplot >/dev/null && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: need root to install gnuplot-nox (or install it yourself)" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends gnuplot-nox ||
	{ apt-get update && apt-get install -y --no-install-recommends gnuplot-nox; }
