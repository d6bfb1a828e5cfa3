#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Open MPI in the guest: a plain `mpirun -np 4 mpi_hello` on 4 devices (as
# root, loopback only, more ranks than vCPUs: the guest's defaults must make
# that work) runs 4 ranks of a 4-rank job, rank r on device r, and MPI
# collectives between them work. A rank that fails (no device 2 and 3 on a
# 2-chip VM) makes mpirun, and so nnp-vm, exit non-zero.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 5
"$root/tools/nnp-vm" --chips 4 --mem-size 16M -- mpirun -np 4 mpi_hello >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "mpirun -np 4 mpi_hello exits 0" "$out" '^vm-status=0$'
tap_check "4 distinct ranks 0..3, each of a job of size 4" sh -c \
	"test \"\$(sed -n 's/^mpi_hello: rank \([0-9]*\) of 4 on .*/\1/p' $out | sort -n | tr '\n' ' ')\" = '0 1 2 3 '"
tap_check "rank r opened device r, chip id r" sh -c \
	"test \$(grep -cE '^mpi_hello: rank ([0-9]+) of 4 on [^ ]+, device \1 chip \1$' $out) = 4"
tap_context=$out tap_grep "MPI_Allreduce across the ranks: sums 6 and 6" "$out" \
	'^mpi_hello: sum of ranks 6, sum of chip ids 6$'
"$root/tools/nnp-vm" --chips 2 --mem-size 16M -- mpirun -np 4 mpi_hello >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "a failing rank (no device 2) fails mpirun" "$out" '^vm-status=[1-9]'
tap_done
