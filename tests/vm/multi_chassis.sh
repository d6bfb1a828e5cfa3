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
# over (a copied chunk counted as returned ahead of lent ones). Last the
# job splits by rank parity, each half a ring over the other's chips.
# Then a POD of 2 chassis of 4 chips wired as a 4x2 torus (rows inside a
# chassis, columns across): the 8-rank job the same, exact, and then the
# Fashion-MNIST training (examples/dist_mnist_mlp) as one 8-rank job over
# both chassis, its gradients averaged over the torus.
#
# In detail (docs/testing.md has the summary):
# one 4-rank job across two QEMU processes started by `tools/nnp-pod
# --chassis 2 --chips 2`: local links 0-1 and 2-3, shared unix socket
# links 1.0-2.1 and 3.0-0.1 closing the ring; each chassis runs `mpirun
# -np 2 coll_mpi` as its half, the rendezvous at chassis 0's LAN address
# through nnp-pod's switch; all eight checks pass in both chassis (the
# last splits the job by rank parity: each half's ring crosses the other
# half's chips as transits, over the socket links too), each line
# comes out prefixed with its chassis, nnp-pod exits 0, and both ends of
# each socket link agree byte for byte on what crossed, `nnptool topo` in
# each chassis lists its two links to the other, up; the same for 8
# ranks on `--chassis 2 --chips 4 --topo torus`, each rank's allreduce
# on the torus (NNP_ALGO auto, as libnnp logs it), the job's link bytes
# summed by the devices exactly 2 x 7 x 400012 in both chassis, the 8
# column links
# between the chassis agreeing; then `mpirun -np 4 dist_mnist_mlp` on each
# chassis as one job of 8 ranks: rank 0 reports 8 ranks, the losses of the
# same training on 1 and 4 ranks in one VM (1.9767 -> 1.3921, to 0.001),
# weights identical on all 8 ranks and its verdict ok, and no rank of
# either chassis fails
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 13

# pod NAME CHIPS NNP-POD-OPTIONS...: coll_mpi on every chassis of the POD
# (then $then, if set, failing the chassis if it fails), its output in
# $tmp/NAME, each chassis's lines in $tmp/NAME.C
pod() {
	local name=$1 chips=$2 c
	shift 2
	"$root/tools/nnp-pod" --chassis 2 --chips "$chips" --env NNP_COMM_TIMEOUT_S=120 "$@" -- \
		sh -c "mpirun -np $chips --oversubscribe coll_mpi; rc=\$?; nnptool links; nnptool topo${then:+; $then || rc=1}; exit \$rc" \
		>"$tmp/$name" 2>&1
	echo "pod-status=$?" >>"$tmp/$name"
	for c in 0 1; do
		sed -n "s/^\\[chassis $c\\] //p" "$tmp/$name" >"$tmp/$name.$c"
	done
}

# checks NAME CHIPS: nnp-pod's status and each chassis's 8 checks
checks() {
	local c
	tap_context=$tmp/$1 tap_grep "$1: nnp-pod exits 0" "$tmp/$1" '^pod-status=0$'
	for c in 0 1; do
		tap_context=$tmp/$1 tap_check "$1: chassis $c: 8 checks pass on its $2 ranks" sh -c \
			"test \$(grep -c '^ok [1-9] - ' $tmp/$1.$c) = 9 && ! grep -q '^not ok' $tmp/$1.$c"
	done
}

pod ring 2
checks ring 2
# The crossing links carried the ring's traffic, and both ends of each
# agree on it byte for byte: 1.0 -> 2.1 and 3.0 -> 0.1.
tap_context=$tmp/ring tap_check "ring: the socket links carried the ring's bytes, both ends agreeing" \
	python3 "$root/tests/lib/links_agree.py" "$tmp/ring.0" "$tmp/ring.1" '1.0>2.1' '3.0>0.1'
tap_context=$tmp/ring tap_grep "ring: ranks 2 and 3 joined rank 0's rendezvous over the LAN" \
	"$tmp/ring.1" '^ok 1 - nnp_comm_init_rank'
# nnptool topo in each chassis: its two links to the other, up.
tap_context=$tmp/ring tap_check "ring: nnptool topo in each chassis lists its 2 links to the other, up" sh -c \
	"grep -qx '  dev1 port 0 -> chip 2 port 1  up' $tmp/ring.0 &&
	 grep -qx '  dev0 port 1 -> chip 3 port 0  up' $tmp/ring.0 &&
	 grep -qx '  dev0 port 1 -> chip 1 port 0  up' $tmp/ring.1 &&
	 grep -qx '  dev1 port 0 -> chip 0 port 1  up' $tmp/ring.1 &&
	 test \$(grep -c ' -> chip ' $tmp/ring.0) = 2"

then="mpirun -np 4 --oversubscribe dist_mnist_mlp --train 512 --test 200 --epochs 2" \
	pod torus 4 --topo torus --guest-mem 2048 --env NNP_DEBUG=INFO
checks torus 4
# NNP_ALGO=auto: every rank's allreduce runs the torus algorithm, in
# coll_mpi (its job's communicator and the one that fuses groups) and in
# the training (libnnp says so once per communicator).
tap_context=$tmp/torus tap_check "torus: every rank's allreduce on the torus (NNP_ALGO auto), in both jobs" sh -c \
	"test \$(grep -c 'NNP INFO rank [0-7]: allreduce auto on the torus: dim 0 4 chips' $tmp/torus) = 24"
# Column x runs from chip x (chassis 0) port 2 to chip 4+x port 3, and
# back from chip 4+x port 2 to chip x port 3.
columns=()
for x in 0 1 2 3; do
	columns+=("$x.2>$((4 + x)).3" "$((4 + x)).2>$x.3")
done
# The job's link bytes, summed by the devices over both chassis: on the
# torus as on a ring, 2(n-1) x the buffer.
tap_context=$tmp/torus tap_check "torus: the 8 ranks' allreduce sent exactly 2(n-1) x its buffer, in both chassis' count" sh -c \
	"test \$(cat $tmp/torus.0 $tmp/torus.1 | grep -cx '# link bytes of all 8 ranks: 5600168 for 400012 bytes') = 2"
tap_context=$tmp/torus tap_check "torus: the 8 column links carried bytes, both ends agreeing" \
	python3 "$root/tests/lib/links_agree.py" "$tmp/torus.0" "$tmp/torus.1" "${columns[@]}"
# Fashion-MNIST across both chassis: one job of 8 ranks, an mpirun on each.
# The same global batch trains alike on any number of ranks: its losses are
# those of 1 and of 4 ranks in one VM (1.9767 -> 1.3921, vm-dist_mnist_mlp's
# short run), to 0.001.
tap_context=$tmp/torus tap_check "torus: Fashion-MNIST trains as one 8-rank job over both chassis" sh -c \
	"grep -q '^dist_mnist_mlp: 8 ranks, 512 training' $tmp/torus.0 &&
	 grep -Eq '^loss: 1\.97(6|7)[0-9] -> 1\.39(1|2)[0-9], fell$' $tmp/torus.0 &&
	 grep -q '^weights: identical on all 8 ranks' $tmp/torus.0 &&
	 grep -qx 'dist_mnist_mlp: ok' $tmp/torus.0 &&
	 ! grep -q 'dist_mnist_mlp: rank' $tmp/torus.0 $tmp/torus.1"
grep -E '^(dist_mnist_mlp:|epoch |training:|links:|weights:|loss:)' "$tmp/torus.0" | sed 's/^/# /'
tap_done
