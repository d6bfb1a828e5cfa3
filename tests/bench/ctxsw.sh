#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Host context switches and CPU migrations per 8-byte allreduce on a ring
# of N chips: `perf stat` over two runs of the same VM that differ only in
# how many allreduces the guest runs (nnptool bench: a warm-up and one
# timing, in and out of place), so boot and power-off cancel out. Every
# thread counts: QEMU's vCPUs, its nnp workers and the VM's helpers.
# Usage: ctxsw.sh N [ITERS]    (NNP_QEMU picks another QEMU, as for nnp-vm)
# Prints: ctxsw chips=N allreduces=A context_switches=X cpu_migrations=Y
# with X and Y per allreduce.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=$1
iters=${2:-2000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

count() { # ITERS: writes $tmp/ITERS.csv
	perf stat -x, -e context-switches,cpu-migrations -o "$tmp/$1.csv" -- \
		"$root/tools/nnp-vm" --chips "$n" --mem-size 16M --fabric ring -- \
		nnptool bench allreduce --min 8 --max 8 --iters "$1" --trials 1 \
		>"$tmp/$1.out" 2>&1 ||
		{ cat "$tmp/$1.out" >&2; echo "ctxsw: the VM failed" >&2; exit 1; }
}
count 1
count "$iters"
# Per run 2 x (1 warm-up + ITERS timed) allreduces.
awk -F, -v n="$n" -v runs=$((2 * (iters - 1))) '
	FNR == 1 { f++ }
	$3 == "context-switches" { cs[f] = $1 }
	$3 == "cpu-migrations" { mig[f] = $1 }
	END { printf "ctxsw chips=%d allreduces=%d context_switches=%.1f cpu_migrations=%.2f\n",
		n, runs, (cs[2] - cs[1]) / runs, (mig[2] - mig[1]) / runs }' \
	"$tmp/1.csv" "$tmp/$iters.csv"
