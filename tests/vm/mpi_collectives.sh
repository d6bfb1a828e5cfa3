#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One process per device: `mpirun -np 4 coll_mpi` with the unique id
# broadcast by MPI and nnp_comm_init_rank on each rank, on a ring and on a
# 2x2 torus (rank order is no ring there: libnnp finds one), then split
# by rank parity (on the ring each half crosses the other's chips as
# transits). On chips with no ring between them every rank is told
# NNP_ERROR_NO_PATH.
#
# In detail (docs/testing.md has the summary):
# `mpirun -np 4 coll_mpi`: one process per device, unique id by `MPI_Bcast`,
# `nnp_comm_init_rank`; allreduce of every type, op and count, broadcast
# from every root, allgather, reduce-scatter, exact on every rank; no host
# DMA and exactly 2(n-1)/n of the buffer per rank over all links together
# (each rank within what its algorithm's segments round it to); split by
# rank parity, each half's int32 allreduce its members' exact sum and a
# message to its next rank byte-exact (on the ring over transits); every rank
# told `NNP_ERROR_NO_PATH` when only chips 0 and 1 are joined
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 5
for topo in ring torus:2x2; do
	"$root/tools/nnp-vm" --chips 4 --mem-size 64M --guest-mem 1024 --fabric "$topo" -- \
		mpirun -np 4 coll_mpi >"$out" 2>&1
	echo "vm-status=$?" >>"$out"
	tap_context=$out tap_check "mpirun -np 4 on a $topo: 8 checks pass, exit 0" sh -c \
		"test \$(grep -c '^ok [1-9] - ' $out) = 9 && ! grep -q '^not ok' $out &&
		 grep -q '^vm-status=0$' $out"
done
tap_context=$out tap_grep "links carry exactly 2(n-1)/n of the buffer from each rank" "$out" \
	'^# link bytes of all 4 ranks: 2400072 for 400012 bytes$'
# Only chips 0 and 1 are joined: no ring through all four.
"$root/tools/nnp-vm" --chips 4 --mem-size 64M --fabric 'links:0.0-1.1' -- \
	mpirun -np 4 coll_mpi >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_check "unjoined chips: every rank gets NNP_ERROR_NO_PATH" sh -c \
	"test \$(grep -c '^# rank [0-3]: nnp_comm_init_rank: .*link' $out) = 4"
tap_context=$out tap_grep "and the job fails" "$out" '^vm-status=[1-9]'
tap_done
