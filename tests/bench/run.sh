#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make bench: one run, every ratio. Measures, one after the other so they
# do not compete for the cores:
#   - natively on the host: B, the copy bandwidth of all cores (the
#     roofline), one thread's memcpy by size (host_bw), and Open MPI's
#     collectives between N processes, btl self,vader (mpi_coll);
#   - the devices, in one VM of N chips on a ring per N: nnptool bench
#     allreduce, broadcast, allgather, reduce_scatter, alltoall and gather,
#     on 4 chips sendrecv from rank 0 to rank 1 and to rank 2 (routed, 2
#     hops) and 32 allreduces of 8 bytes in one group (-m 32), on
#     communicators made without and with NNP_GROUP_FUSION=1, and (in the
#     first VM) nnptool bench copy, with device 1's memory copied in
#     through a dma-buf and staged through host memory; then in the same VM the guest's own
#     Open MPI (mpi_coll, N ranks) over the same sizes;
#   - the training example (examples/dist_mnist_mlp), mpirun -np 4 in one
#     VM of 4 chips: its allreduce with the copies, as it times it; then
#     once more traced (NNP_TRACE_FILE), for where that time goes;
#   - torch.distributed's all_reduce, all_gather, reduce_scatter and
#     all_to_all on "nnp" against "gloo", 64 KiB up, and the example's
#     training step (DDP, and FSDP on torch 2.x) on each, in one VM of
#     $NNP_BENCH_TORCH_CHIPS (default 4) chips (tests/bench/torch_run.sh);
#   - a 64 MiB allreduce on 4 chips across 2 chassis (tools/nnp-pod) over
#     unix sockets and over TCP, and in one QEMU (pod_job -b);
#   - the host's context switches per 8-byte allreduce on N chips
#     (tests/bench/ctxsw.sh: perf stat over two VMs);
#   - the cost of the check that ranks call a collective alike: the
#     8-byte allreduce on 4 chips with the check on and off, in turns, in
#     the firmware alone (tests/bench/call_check_fw.c) and in one VM with
#     QEMU's call-check switched (tests/bench/call_check.sh);
#   - issue 44's G1 in the firmware alone: a GROUP of 31 8-byte
#     allreduces against one, each on its own and fused
#     (tests/bench/group_fw.c);
# for N in $NNP_BENCH_CHIPS (default "2 4 8"), sizes 16 B to $NNP_BENCH_MAX
# (default 64M) in powers of 4, plus an 8-byte allreduce timed over many
# iterations (the latency, and the 8 B row). The raw outputs go to
# build/bench/raw/; tests/bench/report.py turns them into the tables on
# stdout, build/bench/results.json and build/bench/busbw.png.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$root/build/bench
raw=$out/raw
chips=${NNP_BENCH_CHIPS:-2 4 8}
max=${NNP_BENCH_MAX:-64M}
max_bytes=$(numfmt --from=iec "$max")
colls="allreduce broadcast allgather reduce_scatter alltoall gather"
# Per size the best of 3 timings (the machine is shared) of at most 10
# iterations, fewer from 8 MiB up so each timing moves about 64 MiB; the
# 8-byte latency over many more.
sweep="--min 16 --max $max_bytes --step 4 --iters 10 --bytes $((64 << 20)) --trials 3"
lat_iters=500
mem=$(((max_bytes < 4 << 20 ? 4 << 20 : max_bytes) * 4 >> 20))M

rm -rf "$raw"
mkdir -p "$raw"
stamp() { echo "bench: $(date +%T) $*" >&2; }

uptime >"$raw/load-start.txt"
stamp "host memory: roofline and memcpy"
"$out/host_bw" --max "$max_bytes" >"$raw/host_bw.txt"

for n in $chips; do
	stamp "host Open MPI, $n ranks"
	mpi=(mpirun --allow-run-as-root --oversubscribe -np "$n" --mca btl self,vader
	     "$out/mpi_coll")
	"${mpi[@]}" --coll allreduce --min 8 --max 8 --iters $((lat_iters * 4)) \
		--trials 3 >"$raw/mpi-$n-latency.txt"
	for c in $colls; do
		# shellcheck disable=SC2086 # $sweep is a list of options
		"${mpi[@]}" --coll "$c" $sweep >"$raw/mpi-$n-$c.txt"
	done
done

first=1
for n in $chips; do
	stamp "devices: $n chips on a ring (one VM)"
	# --json: the report reads the times unrounded.
	cmd="echo '## latency'; nnptool --json bench allreduce --min 8 --max 8 --iters $lat_iters --trials 3"
	for c in $colls; do
		cmd+="; echo '## $c'; nnptool --json bench $c $sweep"
	done
	if [ "$n" = 4 ]; then
		for peer in 1 2; do
			cmd+="; echo '## sendrecv$peer'; nnptool --json bench sendrecv --peer $peer $sweep"
		done
		# 32 allreduces of 8 bytes in one group, beside the latency row.
		# The same, run as one allreduce (hardware interface 1.25).
		for fusion in 0 1; do
			cmd+="; echo '## group32-fusion$fusion'; NNP_GROUP_FUSION=$fusion"
			cmd+=" nnptool --json bench allreduce -b 8 -e 8 -m 32"
			cmd+=" --iters $((lat_iters / 32)) --trials 3"
		done
	fi
	if [ "$first" = 1 ]; then
		# With device 1's memory imported as a dma-buf (issue 47's D1).
		cmd+="; echo '## copy'; nnptool --json bench copy --max $max_bytes --peer 1"
	fi
	# The baseline a user of this VM would pick: its own Open MPI, ranks
	# in the guest, host memory, after the devices are done.
	gmpi="mpirun -np $n mpi_coll"
	cmd+="; echo '## gmpi-latency'; $gmpi --coll allreduce --min 8 --max 8"
	cmd+=" --iters $((lat_iters * 4)) --trials 3"
	for c in $colls; do
		cmd+="; echo '## gmpi-$c'; $gmpi --coll $c $sweep"
	done
	first=0
	# Per chip: send and receive buffers of $max (and copy's two); the
	# guest: host buffers of 2 x $max per chip (inputs, results) and more.
	if ! "$root/tools/nnp-vm" --chips "$n" --fabric ring --mem-size "$mem" \
		--guest-mem $((1024 + 3 * n * max_bytes / 1048576)) \
		-- sh -c "$cmd" >"$raw/device-$n.txt" 2>&1; then
		cat "$raw/device-$n.txt" >&2
		echo "bench: the $n-chip VM failed" >&2
		exit 1
	fi
done
# What the check of the ranks' calls costs: the 8-byte allreduce on 4
# chips with it on and off, in turns, in the firmware alone and in one VM
# (switched from the monitor).
stamp "the call check's cost: an 8-byte allreduce on 4 chips, on and off"
"$out/call_check_fw" >"$raw/call-check-fw.txt"
bash "$root/tests/bench/call_check.sh" >"$raw/call-check.txt"
# Issue 44's G1 with nothing but the firmware's own work: a GROUP of 31
# 8-byte allreduces against one, on 4 in-process chips.
stamp "G1 in the firmware alone: a group of 31 8-byte allreduces against one"
"$out/group_fw" >"$raw/group-fw.txt"
# The training example as users run it, 4 ranks of mpirun in one guest of 4
# chips: the allreduce with its copies, as the example times it.
stamp "the training example, mpirun -np 4, 4 chips (one VM)"
if ! "$root/tools/nnp-vm" --chips 4 --fabric ring --mem-size 16M \
	-- sh -c 'mpirun -np 4 dist_mnist_mlp --train 4096 --test 500 --epochs 1' \
	>"$raw/example-4.txt" 2>&1; then
	cat "$raw/example-4.txt" >&2
	echo "bench: the example's VM failed" >&2
	exit 1
fi
# Again with NNP_TRACE_FILE, for where S4's time goes: every rank's call
# and return of each allreduce, on one clock (one guest). A run of its own,
# so that the stamps the trace adds stay out of S4's figure.
if ! "$root/tools/nnp-vm" --chips 4 --fabric ring --mem-size 16M -- sh -c \
	'NNP_TRACE_FILE=/tmp/rank%r.jsonl mpirun -np 4 -x NNP_TRACE_FILE \
		dist_mnist_mlp --train 4096 --test 500 --epochs 1 >/dev/null &&
	cat /tmp/rank?.jsonl' >"$raw/example-4-trace.txt" 2>&1; then
	cat "$raw/example-4-trace.txt" >&2
	echo "bench: the example's traced VM failed" >&2
	exit 1
fi
stamp "torch.distributed on nnp and on gloo, ${NNP_BENCH_TORCH_CHIPS:-4} chips (one VM)"
bash "$root/tests/bench/torch_run.sh" "$raw" "$max_bytes"
# A 64 MiB allreduce on a ring of 4 chips: across 2 chassis of 2 (two
# QEMUs) over unix sockets (shared memory) and over TCP, and the same 4
# chips in one QEMU, each rank a process (pod_job, 40 back to back).
pod_bench='for i in $(seq 0 $((${NNP_POD_CHIPS:-4} - 1))); do
	pod_job -c $((16 << 20)) -b 40 X "$i" & done; wait'
for link in unix tcp; do
	stamp "a 64 MiB allreduce across 2 chassis of 2 chips, $link links"
	if ! "$root/tools/nnp-pod" --chassis 2 --chips 2 --link "$link" --mem-size 256M \
		-- sh -c "$pod_bench" >"$raw/pod-$link.txt" 2>&1; then
		cat "$raw/pod-$link.txt" >&2
		echo "bench: the $link POD failed" >&2
		exit 1
	fi
done
stamp "the same allreduce on 4 chips in one QEMU"
if ! NNP_COMM_SECRET=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n') \
	"$root/tools/nnp-vm" --chips 4 --fabric ring --mem-size 256M --env NNP_JOB=0:4 \
	--env NNP_COMM_ID=127.0.0.1:29500 --env NNP_COMM_SECRET \
	-- sh -c "$pod_bench" >"$raw/pod-one.txt" 2>&1; then
	cat "$raw/pod-one.txt" >&2
	echo "bench: the one-QEMU run failed" >&2
	exit 1
fi
for n in $chips; do
	stamp "QEMU's context switches per 8-byte allreduce, $n chips"
	bash "$root/tests/bench/ctxsw.sh" "$n" >"$raw/ctxsw-$n.txt"
done
uptime >"$raw/load-end.txt"

stamp "report"
python3 "$root/tests/bench/report.py" "$out"
