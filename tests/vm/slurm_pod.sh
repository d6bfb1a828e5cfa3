#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Slurm across the chassis of a POD: tools/nnp-pod, 2 chassis of 4 chips
# on one ring of 8 (links 3.0-4.1 and 7.0-0.1 cross between the QEMUs),
# each chassis a Slurm node (pod0 at 10.0.0.1 with slurmctld, pod1 at
# 10.0.0.2) of a cluster on the POD's LAN (tests/lib/slurm_node.sh,
# MpiParams=ports=12000-12999), the host's Debian Slurm through
# --host-root, one munge key made for the run and handed to both
# (nnp-pod's environment, never a command line), the chips named gpu
# (docs/slurm.md), tools/slurm/nnp-task-prolog as TaskProlog. Every line
# is timed on the host (tests/lib/pod_driver.py).
#
# In detail (docs/testing.md has the summary): both nodes come up idle,
# the key mode 600 on each; a job of `srun -N2 --ntasks-per-node=1
# --gres=gpu:4 --resv-ports=1` gets from the prolog NNP_JOB 0:8 on pod0 and
# 4:8 on pod1, the rendezvous at pod0's address on the first port Slurm
# reserved for the step, and trains examples/dist_mnist_mlp with
# `mpirun -np 4` on each node as one job of 8 ranks, to the
# program's own verdict ok; the same job without NNP_COMM_SECRET is
# stopped on both nodes before its command runs, the reason said; a job
# of pod_job ranks over both nodes (1 MiB allreduces, each checked) is
# running exact when chassis 1's QEMU is killed (SIGKILL): every rank on
# pod0 fails with an error within 10 s, none with a wrong element; Slurm
# marks pod1 down within 60 s; the next job of --gres=gpu:4 runs on pod0,
# an exact allreduce.
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
tap_needs_host_root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 10

# The nodes' munge key: 32 random bytes, as hex (munged wants 32 bytes or
# more), through nnp-pod's environment into each chassis's, root's alone.
NNP_SLURM_KEY=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')
export NNP_SLURM_KEY
guest='
. tests/lib/slurm_node.sh
c=$NNP_POD_CHASSIS key=$NNP_SLURM_KEY
# What the prolog gives each job, not what nnp-pod gave the chassis.
unset NNP_SLURM_KEY NNP_JOB NNP_COMM_ID
# slurmctld and slurmd know themselves by the host name.
hostname pod$c
if slurm_conf gpu pod0:10.0.0.1 pod1:10.0.0.2 &&
	slurm_gres $SLURM_DIR/gres.conf && slurm_munge_up "$key" &&
	{ [ "$c" != 0 ] || slurmctld; } && slurmd; then
	echo "=== up"
else
	echo "=== down"; tail -n 20 $SLURM_DIR/log/*; exit 1
fi
stat -c "key %a %U" $SLURM_DIR/munge/munge.key
if [ "$c" != 0 ]; then
	# Serve until the controller, on chassis 0, is gone (or never came).
	seen=0 i=0
	while [ $i -lt 300 ]; do
		if scontrol ping 2>/dev/null | grep -q UP; then seen=1
		elif [ $seen = 1 ] || [ $i -gt 60 ]; then exit $((1 - seen)); fi
		sleep 1; i=$((i + 1))
	done
	exit 1
fi
if slurm_wait_idle 2; then echo "=== idle"; else sinfo -N; tail -n 20 $SLURM_DIR/log/*; exit 1; fi
# mpirun of this node alone: Open MPI must not spread it over the allocation.
mpi="mpirun --allow-run-as-root --oversubscribe --mca plm ^slurm --mca ras ^slurm -np 4"
show="echo \"\$SLURMD_NODENAME job=\$NNP_JOB id=\$NNP_COMM_ID vis=\$NNP_VISIBLE_DEVICES\""
echo "=== train"
job T -N2 --ntasks-per-node=1 --gres=gpu:4 --resv-ports=1 sh -c "$show ports=\$SLURM_STEP_RESV_PORTS; $mpi dist_mnist_mlp --train 512 --test 200 --epochs 2"
echo "=== secretless"
(unset NNP_COMM_SECRET; job S -N2 --ntasks-per-node=1 --gres=gpu:4 sh -c "$show")
echo "=== lost"
job K -N2 --ntasks-per-node=1 --gres=gpu:4 sh -c "PATH=\$PWD/build/tests/guest:\$PATH; . tests/lib/pod_guest_job.sh; NNP_POD_CHIPS=4 job K -t 170; exit \$st"
st= i=0
while [ $i -lt 90 ]; do
	st=$(scontrol show node pod1 | sed -n "s/.* State=\([^ ]*\).*/\1/p")
	case $st in DOWN*) break ;; esac
	sleep 1; i=$((i + 1))
done
echo "=== pod1 $st after $i s: $(scontrol show node pod1 | grep -o "Reason=.*")"
job N --gres=gpu:2 sh -c "$show; nnptool bench allreduce --min 1M --max 1M --iters 5 --trials 1 | grep \"^ *1048576 \""
echo "=== end"'
log=$tmp/log
python3 "$root/tests/lib/pod_driver.py" "$log" "$tmp/control" \
	--on '^\[chassis 0\] K: POD K rank 7: looping$' 'kill 1' \
	-- "$root/tools/nnp-pod" --chassis 2 --chips 4 --topo ring --mem-size 16M \
	--guest-mem 1536 --timeout 420 --vm-arg=--host-root --env NNP_SLURM_KEY \
	--control "$tmp/control" -- sh -c "$guest"
echo "pod-status=$?" >>"$log"
python3 - "$log" >"$tmp/checks" <<'PY'
import re, sys

lines = open(sys.argv[1], errors="replace").read().splitlines()


def check(name, ok, why=""):
    """One TAP verdict a line: @why (what was seen) on the same line."""
    print("%s %s%s" % ("ok" if ok else "not ok", name,
                       "" if ok else ": " + why.replace("\n", "\\n")))


def timed(prefix):
    """(seconds, rest) of each line that chassis 0 printed after @prefix."""
    out = []
    for l in lines:
        m = re.match(r"([0-9.]+) \[chassis 0\] " + re.escape(prefix) + "(.*)$", l)
        if m:
            out.append((float(m.group(1)), m.group(2)))
    return out


def said(name):
    return [rest for _, rest in timed(name + ": ")]


text = "\n".join(lines)
check("both nodes come up and are idle, each one's munge key mode 600",
      len(re.findall(r"\[chassis [01]\] key 600 root$", text, re.M)) == 2 and
      [r for _, r in timed("=== ")][:2] == ["up", "idle"], text[-2000:])
t = said("T")
ids = [re.fullmatch(r"(pod[01]) job=(\d+:\d+) id=10\.0\.0\.1:(\d+) vis=(.*) ports=(\d+)\b.*", l)
       for l in t]
got = sorted((m.group(1), m.group(2), m.group(4)) for m in ids if m)
ports = {(int(m.group(3)), int(m.group(5))) for m in ids if m}
check("a job of -N2 --gres=gpu:4 --resv-ports=1 gets NNP_JOB 0:8 on pod0 and 4:8 on pod1, one rendezvous at pod0, its port the step's first reserved",
      got == [("pod0", "0:8", "0,1,2,3"), ("pod1", "4:8", "0,1,2,3")] and
      len(ports) == 1 and all(a == b and 12000 <= a <= 12999 for a, b in ports),
      repr(t[:4]))
check("it trains dist_mnist_mlp as one job of 8 ranks over both chassis: the program says ok",
      any(l.startswith("dist_mnist_mlp: 8 ranks") for l in t) and
      "weights: identical on all 8 ranks" in " ".join(t) and
      "dist_mnist_mlp: ok" in t and t[-1:] == ["status=0"], repr(t[-8:]))
s_ = said("S")
check("the same job without NNP_COMM_SECRET is stopped on both nodes, exit 1, saying why",
      sum(l.startswith("nnp: a job across 2 nodes needs NNP_COMM_SECRET") for l in s_) == 2 and
      not any(" job=" in l for l in s_) and s_[-1:] == ["status=1"], repr(s_))
k = timed("K: ")
kill = [float(l.split()[0]) for l in lines if l.endswith(" CONTROL kill 1")]
fail = {}
for ts, rest in k:
    m = re.match(r"POD K rank (\d+): failed after [1-9][0-9]* exact: ", rest)
    if m:
        fail.setdefault(int(m.group(1)), ts)
check("chassis 1 killed mid-job: every rank on pod0 fails with an error within 10 s",
      len(kill) == 1 and sorted(fail) == [0, 1, 2, 3] and
      all(0 <= ts - kill[0] < 10 for ts in fail.values()) and
      "JOB K status=2" in [r for _, r in k], repr((kill, fail)))
check("the ranks at the lost links name them down: rank 3's port 0, rank 0's port 1",
      "POD K rank 3: port 0 to chip 4.1 down" in [r for _, r in k] and
      "POD K rank 0: port 1 to chip 7.0 down" in [r for _, r in k], repr(k[-16:]))
check("its srun ends, non-zero, with Slurm's node failure on pod1",
      any(r == "srun: error: Node failure on pod1" for _, r in k) and
      k[-1:] and k[-1][1] not in ("status=0", "status=124"), repr(k[-4:]))
down = [r for _, r in timed("=== ") if r.startswith("pod1 ")]
check("Slurm marks pod1 DOWN", down[:1] and down[0].startswith("pod1 DOWN"), repr(down))
n = said("N")
rows = [l.split() for l in n if l.split()[:1] == ["1048576"]]
check("the next job of --gres=gpu:2 runs on pod0, an exact allreduce",
      any(l.startswith("pod0 job= id= vis=0,1") for l in n) and len(rows) == 1 and
      rows[0][8] == "0" and rows[0][-3] == "0" and n[-1:] == ["status=0"], repr(n))
check("and nnp-pod exits 0", lines[-1:] == ["pod-status=0"], repr(lines[-3:]))
PY
while read -r verdict rest; do
	if [ "$verdict" = ok ]; then tap_ok "$rest"; else tap_not_ok "${rest#ok }"; fi
done <"$tmp/checks"
# How long the kill took to reach Slurm, and the node's reason.
grep -E "=== pod1 |Node failure" "$log" | sed 's/^/# /'
tap_done
