#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make scaling: the seed documents' chart, training throughput against
# chips, projected from real runs (docs/trace.md). Two jobs train on 4
# chips (one VM each, wired as nnp-sim's 2x2 torus) with NNP_TRACE_FILE
# set: the C example (examples/dist_mnist_mlp) and the PyTorch DDP one
# (examples/ddp_fashion_mnist, backend nnp), both launched by mpirun.
# nnp-sim --replay projects each step on 1 to 1024 chips on a ring, a
# torus and a POD, once with the host's compute as recorded and once
# scaled by $NNP_SCALING_COMPUTE (default 0.01: a chip whose compute is
# 100 times this VM's). Samples per second are the global batch (each
# chip keeps the recorded per-chip batch) over the projected step.
# Writes build/scaling/{JOB.trace.R,replay-JOB-TOPO-SCALE.json,
# scaling.dat,scaling.png} and prints the tables.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd -P)
out=$root/build/scaling
scale=${NNP_SCALING_COMPUTE:-0.01}
ranks=4
mlp_steps=32 mlp_batch=16
ddp_steps=20 ddp_batch=32
# As the chips are wired in tests/vm/trace.sh.
torus='links:0.0-1.1;0.2-2.3;1.0-0.1;1.2-3.3;2.0-3.1;2.2-0.3;3.0-2.1;3.2-1.3'
declare -A sizes=(
	[ring]=1,2,4,8,64,256,1024
	[torus]=4,8,64,256,1024
	[pod]=64,256,1024
)
declare -A cmd=(
	[mlp]="dist_mnist_mlp --train $((mlp_steps * mlp_batch * ranks)) --test 200 --epochs 1 --batch $((mlp_batch * ranks))"
	[ddp]="/usr/bin/python3 $root/examples/ddp_fashion_mnist/train.py --backend nnp --steps $ddp_steps --batch $ddp_batch --images $((ddp_steps * ddp_batch * ranks))"
)

rm -rf "$out"
mkdir -p "$out"
for job in mlp ddp; do
	echo "scaling: $(date +%T) $job on $ranks chips, traced" >&2
	"$root/tools/nnp-vm" --chips $ranks --mem-size 64M --guest-mem 2048 \
		--fabric "$torus" --host-root --timeout 1800 \
		--env PYTHONPATH="$root/build/torch" --env OMPI_ALLOW_RUN_AS_ROOT=1 \
		--env OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 -- bash -c "
		NNP_TRACE_FILE=/tmp/trace.%r mpirun -x NNP_TRACE_FILE -np $ranks \
			--oversubscribe ${cmd[$job]} >&2 || exit 1
		for r in \$(seq 0 $((ranks - 1))); do sed \"s/^/trace.\$r: /\" /tmp/trace.\$r; done" \
		>"$out/$job.vm.out"
	for r in $(seq 0 $((ranks - 1))); do
		sed -n "s/^trace\.$r: //p" "$out/$job.vm.out" >"$out/$job.trace.$r"
	done
	files=$(seq -s, -f "$out/$job.trace.%g" 0 $((ranks - 1)))
	steps=${job}_steps
	for topo in ring torus pod; do
		for s in 1 "$scale"; do
			echo "scaling: $(date +%T) $job replayed on a $topo, compute x$s" >&2
			"$root/build/bin/nnp-sim" --replay "$files" --chips "${sizes[$topo]}" \
				--topo "$topo" --steps "${!steps}" --compute-scale "$s" \
				--json >"$out/replay-$job-$topo-$s.json"
		done
	done
done
python3 "$root/tests/bench/scaling_plot.py" "$out" "$scale" \
	"mlp:$mlp_batch:C example (MLP)" "ddp:$ddp_batch:PyTorch DDP (CNN)"
