#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where QEMU's CPU goes while its chips run one allreduce size in a loop:
# each kind of thread's share of the host's cores over SECONDS (from
# /proc, so nothing is traced), then `perf record` over the same loop
# and its hottest symbols. A data path bound by memory shows the workers
# busy in the reduction kernels and memmove; one bound by waiting shows
# them idle. Run it on a quiet machine: other load takes cores from
# QEMU and the shares with them.
# Usage: profile_threads.sh N SIZE [SECONDS]  (NNP_QEMU picks another QEMU)
# e.g. profile_threads.sh 2 16M 8; NNP_PROFILE_CMD replaces the guest's
# loop, e.g. NNP_PROFILE_CMD='nnptool bench copy --max 4M --iters 100000'.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
n=$1 size=$2 secs=${3:-8}
cmd=${NNP_PROFILE_CMD:-nnptool bench allreduce --min $size --max $size --iters 100000 --trials 100}
tmp=$(mktemp -d)
vm=
cleanup() {
	[ -z "$vm" ] || kill -- "-$vm" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

setsid "$root/tools/nnp-vm" --chips "$n" --fabric ring --mem-size 256M \
	--guest-mem $((1024 + 48 * n)) --qemu-arg -name --qemu-arg debug-threads=on -- \
	sh -c "echo PROFILE-START; $cmd" \
	>"$tmp/vm.out" 2>&1 </dev/null &
vm=$!
for _ in $(seq 120); do
	grep -q PROFILE-START "$tmp/vm.out" && break
	sleep 0.5
done
grep -q PROFILE-START "$tmp/vm.out" ||
	{ cat "$tmp/vm.out" >&2; echo "profile_threads: the VM did not start" >&2; exit 1; }
sleep 3	# the warm-up allreduce
qemu=$(pgrep -s "$vm" -x qemu-system-x86 || true)
[ -n "$qemu" ] || { cat "$tmp/vm.out" >&2; echo "profile_threads: no QEMU" >&2; exit 1; }

python3 - "$qemu" "$secs" <<'PY'
import collections, os, sys, time
pid, secs = sys.argv[1], float(sys.argv[2])
hz = os.sysconf("SC_CLK_TCK")

def sample():
    out = {}
    for tid in os.listdir("/proc/%s/task" % pid):
        try:
            with open("/proc/%s/task/%s/stat" % (pid, tid)) as f:
                s = f.read()
        except OSError:
            continue
        comm = s[s.index("(") + 1:s.rindex(")")]
        f = s[s.rindex(")") + 2:].split()
        out[tid] = (comm, int(f[11]) + int(f[12]))	# utime + stime
    return out

a, t0 = sample(), time.time()
time.sleep(secs)
b, t1 = sample(), time.time()
kinds = collections.Counter()
for tid, (comm, ticks) in b.items():
    kind = "vCPU" if "/TCG" in comm or "/KVM" in comm else comm
    kinds[kind] += ticks - a.get(tid, (comm, 0))[1]
wall = t1 - t0
print("profile_threads: QEMU's threads over %.1f s, in cores (%d on the host)"
      % (wall, os.cpu_count()))
for kind, ticks in kinds.most_common():
    if ticks:
        print("  %-16s %5.2f" % (kind, ticks / hz / wall))
print("  %-16s %5.2f" % ("all", sum(kinds.values()) / hz / wall))
PY
perf record -q -F 499 -g -p "$qemu" -o "$tmp/perf.data" -- sleep "$secs" >/dev/null 2>&1
echo "profile_threads: hottest symbols (perf, self time, by thread name)"
perf report -q -i "$tmp/perf.data" --no-children --sort comm,sym --stdio -g none 2>/dev/null |
	grep -v '^$' | head -n 25
