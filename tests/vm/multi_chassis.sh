#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One job across two chassis, as tools/nnp-pod starts them: two QEMU
# processes of two chips each, wired as one ring 0 -> 1 -> 2 -> 3 -> 0
# (1.0-2.1 and 3.0-0.1 cross between them, over unix sockets, so the
# peers lend each other chunks of their shared device memory), on one
# management LAN (nnp-pod's switch) over which the job's rendezvous runs.
# Each chassis runs `mpirun -np 2 coll_mpi` as ranks 0-1 and 2-3 of the
# 4-rank job (NNP_JOB, NNP_COMM_ID and a fresh NNP_COMM_SECRET from
# nnp-pod): allreduce of every type, op and count, broadcast from every
# root, allgather and reduce-scatter, exact on every rank, no host DMA.
# Reduce-scatter here once read chunks its lender had already written
# over (a copied chunk counted as returned ahead of lent ones).
#
# In detail (docs/testing.md has the summary):
# one 4-rank job across two QEMU processes started by `tools/nnp-pod
# --chassis 2 --chips 2`: local links 0-1 and 2-3, shared unix socket
# links 1.0-2.1 and 3.0-0.1 closing the ring; each chassis runs `mpirun
# -np 2 coll_mpi` as its half, the rendezvous at chassis 0's LAN address
# through nnp-pod's switch; all six checks pass in both chassis, each line
# comes out prefixed with its chassis, nnp-pod exits 0, and both ends of
# each socket link agree byte for byte on what crossed
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 5

"$root/tools/nnp-pod" --chassis 2 --chips 2 --env NNP_COMM_TIMEOUT_S=120 -- \
	sh -c 'mpirun -np 2 coll_mpi; rc=$?; nnptool links; exit $rc' >"$tmp/out" 2>&1
echo "pod-status=$?" >>"$tmp/out"
for c in 0 1; do
	sed -n "s/^\\[chassis $c\\] //p" "$tmp/out" >"$tmp/$c"
done

tap_context=$tmp/out tap_grep "nnp-pod exits 0" "$tmp/out" '^pod-status=0$'
for c in 0 1; do
	tap_context=$tmp/out tap_check "chassis $c: 6 checks pass on its 2 ranks" sh -c \
		"test \$(grep -c '^ok [1-6] - ' $tmp/$c) = 6 && ! grep -q '^not ok' $tmp/$c"
done
# The crossing links carried the ring's traffic, and both ends of each
# agree on it byte for byte: 1.0 -> 2.1 and 3.0 -> 0.1.
tap_context=$tmp/out tap_check "the socket links carried the ring's bytes, both ends agreeing" \
	python3 "$root/tests/lib/links_agree.py" "$tmp/0" "$tmp/1" '1.0>2.1' '3.0>0.1'
tap_context=$tmp/out tap_grep "ranks 2 and 3 joined rank 0's rendezvous over the LAN" "$tmp/1" \
	'^ok 1 - nnp_comm_init_rank'
tap_done
