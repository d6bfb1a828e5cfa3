#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Jobs placed by Slurm on nnp chips: in one VM of 4 chips on a ring, with
# the host's root (--host-root: Debian's munged, slurmctld and slurmd) and
# a LAN address for Slurm to resolve, a one-node cluster
# (tests/lib/slurm_node.sh) whose gres.conf `nnptool gres --name gpu`
# wrote (so that ConstrainDevices confines jobs: docs/slurm.md; without
# Links= on Slurm 24.05 and later, which pick by them the wrong way) and whose
# TaskProlog is tools/slurm/nnp-task-prolog.
#
# In detail (docs/testing.md has the summary): the node comes up idle, its
# munge key made for this run, mode 600; two jobs of --gres=gpu:2 at once
# get chips 0,1 and 2,3, libnnp lists those two alone (NNP_VISIBLE_DEVICES
# 0,1 in each: confined, a job counts only its own chips), each opens its two device files and is refused the other two
# (EPERM: Slurm's device cgroup), as a hostile job would try, and each runs an exact
# 1 MiB allreduce on its pair while the other runs; a job of
# --gres=gpu:4 asked meanwhile waits ("queued and waiting for resources")
# and runs once both ended, on all 4 in ring order; a job given chips 1
# and 3, which share no link (chips 0 and 2 held by other jobs), is
# stopped before its command runs, exit 1, the reason naming the chips.
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
tap_needs_host_root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 7

guest='
. tests/lib/slurm_node.sh
slurm_node_start || exit 1
stat -c "key %a %U" $SLURM_DIR/munge/munge.key
pair='"'"'echo "vis=$NNP_VISIBLE_DEVICES"
echo "list=$(nnptool list | awk "NR > 1 { print \$2 }" | paste -sd " " -)"
# As a hostile job would: the device file of every chip, given or not.
for i in 0 1 2 3; do
	if err=$( (exec 3</dev/accel/accel$i) 2>&1); then echo "open$i=ok"; else echo "open$i=${err##*: }"; fi
done
# Both jobs in before either starts: their allreduces overlap however late one came.
touch /tmp/slurm/in.$SLURM_JOB_ID; i=0
while [ "$(ls /tmp/slurm/in.* | wc -l)" -lt 2 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
echo "start=$(date +%s.%N)"
nnptool bench allreduce --min 1M --max 1M --iters 40 --trials 1 | grep "^ *1048576 "
echo "end=$(date +%s.%N)"; sleep 2'"'"'
echo "=== jobs"
job A --gres=gpu:2 sh -c "$pair" & a=$!
sleep 0.5
job B --gres=gpu:2 sh -c "$pair" & b=$!
sleep 1
job W --gres=gpu:4 sh -c '"'"'echo "vis=$NNP_VISIBLE_DEVICES"; echo "start=$(date +%s.%N)"'"'"'
wait $a $b
echo "=== refused"
job C --gres=gpu:1 sleep 15 & c=$!
sleep 1
job D --gres=gpu:1 sleep 2 & d=$!
sleep 1
job F --gres=gpu:1 sleep 15 & f=$!
wait $d
job E --gres=gpu:2 sh -c '"'"'echo "vis=$NNP_VISIBLE_DEVICES"'"'"'
scancel -u root; wait
echo "=== end"'
"$root/tools/nnp-vm" --chips 4 --fabric ring --mem-size 16M --host-root \
	--lan "listen:unix:$tmp/lan:10.0.0.1/24" -- sh -c "$guest" >"$tmp/out" 2>&1
echo "vm-status=$?" >>"$tmp/out"
python3 - "$tmp/out" >"$tmp/checks" <<'PY'
import re, sys

text = open(sys.argv[1], errors="replace").read()


def check(name, ok, why=""):
    """One TAP verdict a line: @why (what was seen) on the same line."""
    print("%s %s%s" % ("ok" if ok else "not ok", name,
                       "" if ok else ": " + why.replace("\n", "\\n")))


def said(name):
    return [l[len(name) + 2:] for l in text.splitlines() if l.startswith(name + ": ")]


def value(name, key):
    for l in said(name):
        if l.startswith(key + "="):
            return l[len(key) + 1:]
    return None


check("the node comes up idle, its munge key made for this run, mode 600",
      "=== up\nkey 600 root\n" in text, text[-2000:])
ok = True
for name, chips in (("A", (0, 1)), ("B", (2, 3))):
    nodes = ["/dev/accel/accel%d" % c for c in chips]
    # Confined, a job counts its own chips alone: 0 and 1 are its two.
    ok &= value(name, "vis") == "0,1" and value(name, "list") == " ".join(nodes)
check("two jobs of gpu:2 get chips 0,1 and 2,3, and libnnp lists each its two alone",
      ok, repr(said("A") + said("B")))
ok = True
for name, chips in (("A", (0, 1)), ("B", (2, 3))):
    for c in range(4):
        ok &= value(name, "open%d" % c) == ("ok" if c in chips else "Operation not permitted")
check("each opens its two chips' device files and is refused the others (EPERM)",
      ok, repr(said("A") + said("B")))
rows = [l.split() for n in "AB" for l in said(n) if l.split()[:1] == ["1048576"]]
times = {n: (float(value(n, "start") or 0), float(value(n, "end") or 0)) for n in "AB"}
check("each runs an exact 1 MiB allreduce on its pair, the two at the same time",
      len(rows) == 2 and all(r[8] == "0" and r[-3] == "0" for r in rows) and
      times["A"][0] < times["B"][1] and times["B"][0] < times["A"][1],
      repr((rows, times)))
check("a job of gpu:4 asked meanwhile waits, then runs on all 4 after both",
      any(re.fullmatch(r"srun: job \d+ queued and waiting for resources", l) for l in said("W"))
      and value("W", "vis") == "0,1,2,3"
      and float(value("W", "start") or 0) >= max(t[1] for t in times.values()),
      repr(said("W")))
refusal = [l for l in said("E") if l.startswith(
    "nnp: the 2 chips Slurm gave this job on nnp-vm (1,3) form no ring of links that are up: ")]
check("a job given chips 1 and 3 (no link between them) is stopped, exit 1, saying why",
      len(refusal) == 1 and value("E", "vis") is None and value("E", "status") == "1",
      repr(said("E")))
check("and the VM exits 0", "vm-status=0" in text, text[-500:])
PY
while read -r verdict rest; do
	if [ "$verdict" = ok ]; then tap_ok "$rest"; else tap_not_ok "${rest#ok }"; fi
done <"$tmp/checks"
tap_done
