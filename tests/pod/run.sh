#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make pod: the POD of issue 29 at full size, not part of make check.
# - a 16-chip POD (4 chassis of 4 chips, a 4x4 torus whose columns cross
#   the chassis): every collective of coll_mpi exact on all 16 ranks, then
#   the Fashion-MNIST training (dist_mnist_mlp) as one 16-rank job;
# - the failures across chassis (tests/vm/pod_faults.sh) on that POD: a
#   chip reset, two neighbours reset at once, a chassis killed and started
#   again, with the time to error and to recover;
# - a crossing link flapped under 256 MiB allreduces, over unix sockets
#   and over TCP (tests/pod/link_flap.sh).
# Each prints TAP and its figures; fails if any of them fails.
root=$(cd "$(dirname "$0")/../.." && pwd)
fail=0

t0=$SECONDS
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$root/tools/nnp-pod" --chassis 4 --chips 4 --topo torus --guest-mem 2048 \
	--env NNP_COMM_TIMEOUT_S=300 -- sh -c 'mpirun -np 4 --oversubscribe coll_mpi &&
	mpirun -np 4 --oversubscribe dist_mnist_mlp --train 1024 --test 500 --epochs 2' \
	>"$out" 2>&1
st=$?
checks=$(grep -cE '^\[chassis [0-3]\] ok [1-7] - ' "$out")
if [ "$st" = 0 ] && [ "$checks" = 28 ] && ! grep -q 'not ok' "$out"; then
	echo "ok - 16-chip POD, 4x4 torus: coll_mpi's 7 checks in all 4 chassis ($((SECONDS - t0)) s)"
else
	cat "$out"
	echo "not ok - 16-chip POD, 4x4 torus: nnp-pod $st, $checks of 28 checks"
	fail=1
fi
if [ "$st" = 0 ] && grep -q '^\[chassis 0\] weights: identical on all 16 ranks' "$out" &&
	grep -qE '^\[chassis 0\] loss: [0-9.]+ -> [0-9.]+, fell$' "$out"; then
	echo "ok - 16-chip POD: Fashion-MNIST trains as one 16-rank job, weights identical"
else
	echo "not ok - 16-chip POD: Fashion-MNIST across the POD"
	fail=1
fi
grep -E '^\[chassis 0\] (epoch |training:|weights:|loss:)' "$out" | sed 's/^/# /'
POD_SHAPE="4 4 torus" bash "$root/tests/vm/pod_faults.sh" || fail=1
for link in unix tcp; do
	bash "$root/tests/pod/link_flap.sh" "$link" || fail=1
done
echo "# make pod: $((SECONDS - t0)) s"
exit $fail
