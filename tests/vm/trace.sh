#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# NNP_TRACE_FILE and nnp-sim --replay (issue 31, docs/trace.md), in one
# boot of 4 chips wired as nnp-sim wires a 2x2 torus, run from the
# checkout with --host-root: the training example traced on 4 ranks and
# replayed on nnp-sim's 2x2 torus; trace_job's known sequence on chips 0
# and 1, every line of both ranks' traces checked
# (tests/vm/trace_check.py); and an 8-byte allreduce timed with and
# without a trace (a figure for the notes, not a test).
#
# In detail (docs/testing.md has the summary): `mpirun -np 4
# dist_mnist_mlp` traced, its 4 files replayed with `nnp-sim --replay
# --chips 4 --topo torus`: the replayed communication within 1% of the
# recorded (the latest rank's modeled end less the latest rank's start,
# summed over the operations); trace_job: both files start with the
# version-1 header; every line has the 18 keys in order; the operations,
# exactly (op, type, count, bytes, op, root, peer, status): allreduce f32
# x 1024 sum, broadcast i32 x 100 from 1, allgather bf16 x 64,
# reduce_scatter f64 x 32 max, then a send to 1 on rank 0 and a receive
# from 0 on rank 1, and on rank 1 a lone receive that fails with
# peer_timeout (after its 1 s timeout) and an allreduce behind it,
# not_run; seq from 0 on each rank; header start <= issue <= wait <=
# done; the allreduce's wait 50 ms after its issue; the broadcast's gap
# exactly its issue less the allreduce's done, and at least 50 ms; modeled
# start < end where the operation ran, both null where it did not; no
# line twice though each rank forked a child that exited; one
# communicator name on both ranks; the file's mode 600; an NNP_TRACE_FILE in a missing
# directory fails each rank's communicator naming the path (about 60 s);
# an NNP_TRACE_FILE that user 65534 made a symbolic link to a file of
# root's, in a directory every user may write (not sticky, where
# fs.protected_symlinks does not apply), fails `nnptool bench`, saying
# the link was not followed, and leaves the file as it was; `nnptool
# bench` on 4 devices of one process, traced to /tmp/bench.%r, leaves
# /tmp/bench.0 to .3, each with its own rank's lines only, and `nnp-sim
# --replay` takes them as a job (exit 0)
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
tap_needs_host_root
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The guest's half, in the checkout. The example first, while the chips'
# clocks are alike: trace_job moves chips 0 and 1 ahead of 2 and 3.
guest='set -u
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
NNP_TRACE_FILE=/tmp/mnist.%r mpirun -x NNP_TRACE_FILE -np 4 --oversubscribe \
	dist_mnist_mlp --train 512 --test 200 --epochs 1 >/tmp/mnist.out 2>&1
echo "mnist-status=$?"
echo "mnist-lines=$(cat /tmp/mnist.? | wc -l)"
nnp-sim --replay /tmp/mnist.0,/tmp/mnist.1,/tmp/mnist.2,/tmp/mnist.3 \
	--chips 4 --topo torus --json | sed "s/^/replay: /"
export NNP_COLL_TIMEOUT_S=1
NNP_TRACE_FILE=/tmp/job.%r build/tests/guest/trace_job
echo "job-status=$?"
python3 tests/vm/trace_check.py /tmp/job.0 /tmp/job.1
echo "check-status=$?"
echo "trace-mode=$(stat -c %a /tmp/job.0)"
NNP_TRACE_FILE=/nonexistent/job.%r build/tests/guest/trace_job >/tmp/unwritable 2>&1
echo "unwritable-status=$?"
sed "s/^/unwritable: /" /tmp/unwritable
# A directory every user may write, not sticky: there the kernel follows
# the link whatever fs.protected_symlinks says.
mkdir -m 0777 /tmp/shared
echo kept >/tmp/roots-file
env -i PATH=/usr/bin:/bin setpriv --reuid=65534 --regid=65534 --clear-groups \
	ln -s /tmp/roots-file /tmp/shared/planted
NNP_TRACE_FILE=/tmp/shared/planted nnptool bench allreduce --min 8 --max 8 --iters 1 \
	--trials 1 2>&1 | sed "s/^/planted: /"
echo "roots-file=$(cat /tmp/roots-file)"
for trace in "" /tmp/bench.%r; do
	NNP_TRACE_FILE=$trace nnptool bench allreduce --min 8 --max 8 \
		--iters 200 --trials 3 2>&1 | sed "s|^|cost${trace:+ traced}: |"
done
echo "bench-files=$(echo /tmp/bench.*)"
for r in 0 1 2 3; do
	echo "bench-ranks-$r=$(grep -o "\"rank\":[0-9]*" /tmp/bench.$r | sort -u | tr "\n" " ")"
done
nnp-sim --replay /tmp/bench.0,/tmp/bench.1,/tmp/bench.2,/tmp/bench.3 \
	--chips 4 --topo torus --json >/tmp/bench.replay 2>&1
echo "bench-replay-status=$?"
sed "s/^/bench-replay: /" /tmp/bench.replay'
# nnp-sim's 2x2 torus: port 0 to the next in the row, port 2 to the next in
# the column, so that the replay runs on the fabric the job ran on.
torus='links:0.0-1.1;0.2-2.3;1.0-0.1;1.2-3.3;2.0-3.1;2.2-0.3;3.0-2.1;3.2-1.3'
tap_plan 13
"$root/tools/nnp-vm" --chips 4 --mem-size 16M --fabric "$torus" --host-root \
	--timeout 600 -- bash -c "$guest" >"$out" 2>&1
echo "vm-status=$?" >>"$out"
grep -E '^(not ok|cost|mnist|replay)' "$out" | sed 's/^/# /'
tap_context=$out tap_grep "mpirun -np 4 dist_mnist_mlp, traced, exits 0" "$out" '^mnist-status=0$'
tap_check "the example's traces replayed on nnp-sim's 2x2 torus: communication within 1% of the recorded" \
	python3 -c 'import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith("replay: {")][0]
run = json.loads(line[len("replay: "):])["runs"][0]
print("# recorded %d ns, replayed %d ns, ratio %.4f" % (run["recorded_comm_ns"], run["replayed_comm_ns"], run["comm_ratio"]))
sys.exit(not (run["recorded_comm_ns"] > 0 and abs(run["comm_ratio"] - 1) <= 0.01))' "$out"
tap_context=$out tap_grep "trace_job's operations all did what they should" "$out" '^job-status=0$'
tap_check "every check of both ranks' lines passed (tests/vm/trace_check.py)" \
	awk '/^ok - / { ok++ } /^not ok - / { bad++ } END { exit !(ok == 21 && !bad) }' "$out"
tap_context=$out tap_grep "the checker exits 0" "$out" '^check-status=0$'
tap_context=$out tap_grep "a trace is its user's alone (mode 600)" "$out" '^trace-mode=600$'
tap_context=$out tap_check "an unwritable NNP_TRACE_FILE fails each rank's communicator, naming its path" \
	sh -c 'for r in 0 1; do grep -q "^unwritable: rank $r: comm: .*(NNP_TRACE_FILE: cannot write /nonexistent/job\.$r: No such file or directory)\$" "$1" || exit 1; done' sh "$out"
tap_context=$out tap_grep "and that job exits 1" "$out" '^unwritable-status=1$'
tap_context=$out tap_grep "a trace name that user 65534 made a link to root's file: refused, saying so" \
	"$out" '^planted: nnptool: allreduce: invalid argument \(NNP_TRACE_FILE: cannot write /tmp/shared/planted: it is a symbolic link, not followed\)$'
tap_context=$out tap_grep "and root's file is as it was" "$out" '^roots-file=kept$'
tap_context=$out tap_check "nnptool bench traced with %r on 4 devices of one process: a file per device, each with its own rank's lines only" \
	sh -c 'grep -qx "bench-files=/tmp/bench.0 /tmp/bench.1 /tmp/bench.2 /tmp/bench.3" "$1" &&
		for r in 0 1 2 3; do grep -qx "bench-ranks-$r=\"rank\":$r " "$1" || exit 1; done' sh "$out"
tap_context=$out tap_grep "and nnp-sim --replay takes those 4 files as a job" "$out" '^bench-replay-status=0$'
tap_context=$out tap_grep "and the VM exits 0" "$out" '^vm-status=0$'
tap_done
