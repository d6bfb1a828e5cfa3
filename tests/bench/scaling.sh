#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make scaling: the seed documents' chart, training throughput against
# chips, projected from one real run (docs/trace.md). The Fashion-MNIST
# example trains on 4 chips (one VM, wired as nnp-sim's 2x2 torus) with
# NNP_TRACE_FILE set; nnp-sim --replay projects its step on 1 to 1024
# chips on a ring, a torus and a POD, once with the host's compute as
# recorded and once scaled by $NNP_SCALING_COMPUTE (default 0.01: a chip
# whose compute is 100 times this VM's). Samples per second are the
# global batch (each chip keeps the recorded per-chip batch) over the
# projected step. Writes build/scaling/{trace.*,replay-*.json,
# scaling.dat,scaling.png} and prints the table.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd -P)
out=$root/build/scaling
scale=${NNP_SCALING_COMPUTE:-0.01}
train=2048
batch=64
ranks=4
# As the chips are wired in tests/vm/trace.sh.
torus='links:0.0-1.1;0.2-2.3;1.0-0.1;1.2-3.3;2.0-3.1;2.2-0.3;3.0-2.1;3.2-1.3'
declare -A sizes=(
	[ring]=1,2,4,8,64,256,1024
	[torus]=4,8,64,256,1024
	[pod]=64,256,1024
)

rm -rf "$out"
mkdir -p "$out"
echo "scaling: $(date +%T) dist_mnist_mlp on $ranks chips, traced" >&2
"$root/tools/nnp-vm" --chips $ranks --mem-size 16M --fabric "$torus" --host-root \
	--timeout 1200 -- bash -c "
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	NNP_TRACE_FILE=/tmp/trace.%r mpirun -x NNP_TRACE_FILE -np $ranks \
		--oversubscribe dist_mnist_mlp --train $train --test 200 \
		--epochs 1 --batch $batch >&2 || exit 1
	for r in \$(seq 0 $((ranks - 1))); do sed \"s/^/trace.\$r: /\" /tmp/trace.\$r; done" \
	>"$out/vm.out"
for r in $(seq 0 $((ranks - 1))); do
	sed -n "s/^trace\.$r: //p" "$out/vm.out" >"$out/trace.$r"
done
files=$(seq -s, -f "$out/trace.%g" 0 $((ranks - 1)))
# One allreduce of the gradients a step (examples/dist_mnist_mlp).
steps=$(($(wc -l <"$out/trace.0") - 1))

for topo in ring torus pod; do
	for s in 1 "$scale"; do
		echo "scaling: $(date +%T) replay on a $topo, compute x$s" >&2
		"$root/build/bin/nnp-sim" --replay "$files" --chips "${sizes[$topo]}" \
			--topo "$topo" --steps "$steps" --compute-scale "$s" --json \
			>"$out/replay-$topo-$s.json"
	done
done
python3 "$root/tests/bench/scaling_plot.py" "$out" "$batch" "$ranks" "$scale"
