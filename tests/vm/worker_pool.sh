#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The process's pool of nnp workers (qemu-device/nnp_workers.c), shared by
# every chip of one QEMU:
# - 8 chips on a ring run by one pool thread (-global nnp.workers=1):
#   coll_test's every collective exact, with exact link bytes and guard
#   bytes; QEMU has exactly 1 nnp-worker thread and 8 nnp-fw (admin) ones;
# - 4 chips by default: min(host cores, 8) nnp-worker threads; chip 1 is
#   unplugged (device_del) while the guest runs allreduces over all four:
#   no hang, the guest's loop ends with 3 devices, each run either worked
#   or failed with a link or device failure, and the ring is gone after;
# - 4 chips looping on 8-byte allreduces wake a second pool thread at
#   most once per allreduce (traced by nnp_worker_wake);
# - workers=65 refused with the property's bounds.
#
# In detail (docs/testing.md has the summary):
# the QEMU process's one pool of queue workers
# (`qemu-device/nnp_workers.c`): 8 chips run by one pool thread, `coll_test`
# exact (every collective, results, guard bytes, link bytes, no host DMA),
# and QEMU has exactly 1 `nnp-worker` thread and 8 `nnp-fw` (admin) threads
# (`-name debug-threads=on`); 4 chips by default have min(host cores, 8)
# `nnp-worker` threads; `device_del nnp1` while the guest runs `nnptool
# bench allreduce` in a loop over all four: the unplug completes, no hang
# (the loop ends with 3 devices), every run worked or failed with a stopped
# stream, a failed collective, a lost device (never SIGBUS), no such device
# (counted just before it went) or no path, and the last run finds no ring;
# 2000 allreduces of 8 bytes on 4 chips wake a second pool thread at most
# 2000 times (`nnp_worker_wake` traces each wake with the threads awake;
# waking every idle thread made 8 a collective);
# `workers=65` refused with `nnp: workers must be 0 (automatic) to 64`
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 11
name=nnp-pool-$$

# threads PATTERN: "NAME COUNT" per thread name of the QEMU whose command
# line matches PATTERN (QEMU names its threads with -name debug-threads=on)
threads() {
	local pid
	for pid in $(pgrep -f -- "$1"); do
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = qemu-system-x86 ] || continue
		cat /proc/"$pid"/task/*/comm | sort | uniq -c | awk '{ print $2, $1 }'
		return
	done
}

wait_for() { # FILE TEXT SECS
	local end=$((SECONDS + $3))
	until grep -q "$2" "$1" 2>/dev/null; do
		[ $SECONDS -lt $end ] || return 1
		sleep 0.5
	done
}

# 1. One pool thread for 8 chips.
vm_start one "$root/tools/nnp-vm" --chips 8 --mem-size 128M --guest-mem 2048 \
	--fabric ring --qemu-arg -global --qemu-arg nnp.workers=1 \
	--qemu-arg -name --qemu-arg "$name-one,debug-threads=on" \
	-- sh -c 'echo POOL-UP; coll_test'
wait_for "$tmp/one" POOL-UP 600 && threads "$name-one" >"$tmp/one-threads"
wait "$pid_one"
echo "vm-status=$?" >>"$tmp/one"
tap_context=$tmp/one tap_grep "8 chips, 1 pool thread: coll_test exact" "$tmp/one" '^vm-status=0$'
tap_context=$tmp/one-threads tap_grep "exactly 1 nnp-worker thread" "$tmp/one-threads" '^nnp-worker 1$'
tap_context=$tmp/one-threads tap_grep "and 8 nnp-fw threads" "$tmp/one-threads" '^nnp-fw 8$'

# 2. The default pool of 4 chips, and device_del of one under traffic.
# The loop ends once a run over the 3 chips left finds no ring, or after
# 60 s (a failure, below); the guest stays up while the host polls the
# monitor for the unplug.
guest='
echo TRAFFIC-START
end=$(($(date +%s) + 60))
while [ "$(date +%s)" -lt "$end" ]; do
	nnptool bench allreduce --max 1M --iters 2 >/dev/null 2>/tmp/err
	echo "RUN $? $(cat /tmp/err)"
	grep -q "not connected by a usable" /tmp/err &&
		[ "$(ls /dev/accel | wc -l)" = 3 ] && break
done
echo "TRAFFIC-END devices=$(ls /dev/accel | wc -l)"
sleep 2 # for the host to see nnp1 gone from the monitor before power-off'
vm_start del "$root/tools/nnp-vm" --chips 4 --mem-size 64M --guest-mem 1024 \
	--fabric ring --hotplug --monitor "$tmp/mon" --timeout 400 \
	--qemu-arg -name --qemu-arg "$name-del,debug-threads=on" -- sh -c "$guest"
wait_for "$tmp/del" TRAFFIC-START 300 && threads "$name-del" >"$tmp/del-threads"
sleep 5                         # well inside a run of allreduces
python3 - "$root/tests/vm" "$tmp/mon" >"$tmp/host" 2>&1 <<'PY'
import sys, time
sys.path.insert(0, sys.argv[1])
from icl_peer import Monitor
m = Monitor(sys.argv[2])
if m.cmd("device_del nnp1", 10) is None:
    sys.exit("device_del did not return")
end = time.time() + 60
while time.time() < end:
    if m.cmd("info qtree", 10) is None:
        sys.exit("the monitor stopped answering after device_del")
    if b"id \"nnp1\"" not in m.last:
        print("nnp1 unplugged")
        sys.exit(0)
    time.sleep(0.5)
sys.exit("nnp1 was never unplugged")
PY
host=$?
wait "$pid_del"
echo "vm-status=$?" >>"$tmp/del"
cores=$(nproc)
tap_context=$tmp/del-threads tap_grep "4 chips: min(cores, 8) = $((cores < 8 ? cores : 8)) nnp-worker threads" \
	"$tmp/del-threads" "^nnp-worker $((cores < 8 ? cores : 8))\$"
tap_context="$tmp/host $tmp/del" tap_check "device_del nnp1 under traffic completes" test "$host" = 0
tap_context=$tmp/del tap_grep "the guest's loop ran to its end with 3 devices" "$tmp/del" \
	'^TRAFFIC-END devices=3$'
# Every run worked, or failed for the lost chip or its links; the ring is
# gone once nnp1 is (no path from chip 0 to chip 2). A run that counted
# nnp1 just before it went finds no such device when it opens it. No run
# dies of SIGBUS: an unplugged chip's doorbell is the dummy page
# (vm-device_del).
allowed='^RUN (0 |1 nnptool: allreduce: (the device refused a queued command; the stream is stopped|a collective of the communicator failed; abort it and make a new one|nnp device was removed or reset|no such nnp device|the chips are not connected by a usable inter-chip link)( \(.*\))?)$'
grep '^RUN ' "$tmp/del" >"$tmp/runs"
tap_context=$tmp/runs tap_check "every run worked or failed with a link or device failure" \
	sh -c "test -s '$tmp/runs' && ! grep -vE '$allowed' '$tmp/runs'"
tap_context=$tmp/runs tap_check "the last run found no ring" sh -c \
	"tail -n 1 '$tmp/runs' | grep -q 'not connected by a usable inter-chip link'"

# 3. Small collectives keep to the awake thread: a kick wakes a second one
# only for work that waited longer than a wake-up (30 us), which 8-byte
# allreduces' few-microsecond steps never do unless the host preempts the
# awake one. Each wake is traced with the number of threads awake: waking
# every idle thread, as the pool did before, made 8 wakes of a second
# thread per allreduce here, this policy 0.25 (a 2-core host).
"$root/tools/nnp-vm" --chips 4 --fabric ring --mem-size 16M \
	--qemu-arg -trace --qemu-arg nnp_worker_wake \
	--qemu-arg -D --qemu-arg "$tmp/wakes" -- \
	nnptool bench allreduce --min 8 --max 8 --iters 1000 --trials 1 \
	>"$tmp/small" 2>&1
echo "vm-status=$?" >>"$tmp/small"
# The first kick of each burst finds no thread awake: a trace without
# such a wake is no trace, and would pass the count below unread.
helps=$(grep -c 'nnp_worker_wake awake [1-9]' "$tmp/wakes")
firsts=$(grep -c 'nnp_worker_wake awake 0' "$tmp/wakes")
tap_context=$tmp/small tap_check "2000 allreduces of 8 bytes, none wrong" sh -c \
	"grep -qx 'vm-status=0' '$tmp/small' &&
	 grep -Eq '^ +8 +2 +float +sum +-1( +[0-9.]+){3} +0( +[0-9.]+){5} +0 ' '$tmp/small'"
tap_context=$tmp/wakes tap_check "at most one wake of a second thread per allreduce ($helps; $firsts with none awake)" \
	sh -c "test '$firsts' -gt 0 && test '$helps' -le 2000"

# 4. Bounds of the property.
"$root/tools/nnp-vm" --chips 1 --device-opt workers=65 -- true >"$tmp/bad" 2>&1
tap_context=$tmp/bad tap_grep "workers=65 refused" "$tmp/bad" \
	'nnp: workers must be 0 \(automatic\) to 64'
tap_done
