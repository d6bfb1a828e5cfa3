#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# One job across two QEMU processes, as across two chassis: each VM has
# two chips joined locally, and two socket links join the VMs' chips into
# a ring 0 -> 1 -> 2 -> 3 -> 0 (1.2-2.2 and 3.3-0.3 cross between them).
# The VMs share an Ethernet LAN (the management network) over which the
# job's rendezvous runs: NNP_COMM_ID names rank 0's address, and only
# ranks showing NNP_COMM_SECRET (fresh for each run) get in. Each VM runs
# `mpirun -np 2 coll_mpi` as ranks 0-1 and 2-3 of the 4-rank job
# (NNP_JOB): allreduce of every type, op and count, broadcast from every
# root, allgather and reduce-scatter, exact on every rank, no host DMA.
#
# In detail (docs/testing.md has the summary):
# one 4-rank job across two QEMU processes: local links 0-1 and 2-3, socket
# links 1.2-2.2 and 3.3-0.3 closing the ring; each VM runs `mpirun -np 2
# coll_mpi` as its half (`NNP_JOB`), the rendezvous at rank 0's LAN address
# (`NNP_COMM_ID`, with a fresh `NNP_COMM_SECRET` per run); all six checks
# pass in both VMs, and both ends of each socket link agree byte for byte on
# what crossed
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 4

icl_a=$(free_port) icl_b=$(free_port) lan=$(free_port)
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' 
')
printf %s "$secret" >"$tmp/secret"	# the ICL links' copy
job=(--env NNP_COMM_ID=10.0.0.1:29500 --env "NNP_COMM_SECRET=$secret"
	--env NNP_COMM_TIMEOUT_S=120 --icl-secret "$tmp/secret")
run='mpirun -np 2 coll_mpi; rc=$?; nnptool links; exit $rc'

vm_start a "$root/tools/nnp-vm" --chips 2 --chip-base 0 --mem-size 64M --guest-mem 1024 \
	--fabric 'links:0.0-1.1' --remote "1.2-2.2=listen:127.0.0.1:$icl_a" \
	--remote "0.3-3.3=listen:127.0.0.1:$icl_b" --lan "listen:$lan:10.0.0.1/24" \
	"${job[@]}" --env NNP_JOB=0:4 -- sh -c "$run"
vm_start b "$root/tools/nnp-vm" --chips 2 --chip-base 2 --mem-size 64M --guest-mem 1024 \
	--fabric 'links:2.0-3.1' --remote "2.2-1.2=connect:127.0.0.1:$icl_a" \
	--remote "3.3-0.3=connect:127.0.0.1:$icl_b" --lan "connect:$lan:10.0.0.2/24" \
	"${job[@]}" --env NNP_JOB=2:4 -- sh -c "$run"
wait "$pid_a"
echo "vm-status=$?" >>"$tmp/a"
wait "$pid_b"
echo "vm-status=$?" >>"$tmp/b"

for vm in a b; do
	tap_context=$tmp/$vm tap_check "chassis $vm: 6 checks pass on its 2 ranks, exit 0" sh -c \
		"test \$(grep -c '^ok [1-6] - ' $tmp/$vm) = 6 && ! grep -q '^not ok' $tmp/$vm &&
		 grep -q '^vm-status=0$' $tmp/$vm"
done
# The crossing links carried the ring's traffic, and both ends of each
# agree on it byte for byte: 1.2 -> 2.2 and 3.3 -> 0.3.
crossing() {
	python3 "$root/tests/lib/links_agree.py" "$tmp/a" "$tmp/b" '1.2>2.2' '3.3>0.3'
}
tap_check "the socket links carried the ring's bytes, both ends agreeing" crossing
tap_context=$tmp/b tap_grep "ranks 2 and 3 joined rank 0's rendezvous over the LAN" "$tmp/b" \
	'^ok 1 - nnp_comm_init_rank'
tap_done
