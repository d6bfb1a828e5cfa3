#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# device_del of a chip while its fabric peer sends to it: a VM of 2 chips
# on a ring, each behind a hotplug PCIe root port, runs allreduces between
# them in a loop; the host unplugs chip 1 from the QEMU monitor in the
# middle of it. QEMU must not die: the unplug completes, the monitor
# answers afterwards, and the guest goes on to the end of its loop. (The
# race itself, a send into a chip being freed, is caught reliably by
# host-test_fw_lifetime under AddressSanitizer.) A process holding a queue
# of chip 1, made before the unplug, rings it after: DRM's unplug
# contract wants loads and stores to complete, not SIGBUS, and libnnp to
# say DEVICE_LOST.
#
# In detail (docs/testing.md has the summary):
# `nnptool bench allreduce` in a loop between the two chips while the host
# runs `device_del nnp1`: the unplug completes (`info qtree` shows nnp0
# only), the monitor answers, QEMU does not die, the guest's loop ends with
# one device left and the VM exits 0 (the driver unloads, no WARN or oops);
# a process holding a queue of chip 1 made before the unplug rings its
# doorbell after it and gets DEVICE_LOST, not SIGBUS (DRM's unplug contract:
# the doorbell is the dummy page). A smoke test: the race it aims at is
# caught reliably by `host-test_fw_lifetime`
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 6

guest='
fault_test --unplug-wait 1 &
holder=$!
echo TRAFFIC-START
end=$(($(date +%s) + 40))
while [ "$(date +%s)" -lt "$end" ]; do
	nnptool bench allreduce >/dev/null 2>&1
done
echo "TRAFFIC-END devices=$(ls /dev/accel | wc -l)"
wait $holder
echo "HOLDER-STATUS=$?"'

vm_start vm "$root/tools/nnp-vm" --chips 2 --mem-size 64M --guest-mem 1024 \
	--fabric ring --hotplug --monitor "$tmp/mon" --timeout 300 -- sh -c "$guest"

python3 - "$root/tests/vm" "$tmp/mon" "$tmp/vm" >"$tmp/host" 2>&1 <<'PY'
import os, sys, time
sys.path.insert(0, sys.argv[1])
from icl_peer import Monitor
mon, out = sys.argv[2], sys.argv[3]


def wait_for(text, secs):
    end = time.time() + secs
    while time.time() < end:
        if text in open(out, errors="replace").read():
            return True
        time.sleep(0.2)
    return False


if not wait_for("TRAFFIC-START", 200):
    sys.exit("the guest never started its traffic")
time.sleep(5)                   # well inside a run of allreduces
m = Monitor(mon)
if m.cmd("device_del nnp1", 10) is None:
    sys.exit("device_del did not return")
print("device_del sent")
end = time.time() + 60
while time.time() < end:
    took = m.cmd("info qtree", 10)
    if took is None:
        sys.exit("the monitor stopped answering after device_del")
    if b"id \"nnp1\"" not in m.last and b"id \"nnp0\"" in m.last:
        print("nnp1 unplugged, nnp0 still there")
        break
    time.sleep(0.5)
else:
    sys.exit("nnp1 was never unplugged")
if m.cmd("info version", 10) is None:
    sys.exit("the monitor does not answer")
print("monitor answers")
PY
host=$?
wait "$pid_vm"
echo "vm-status=$?" >>"$tmp/vm"
tap_context="$tmp/host $tmp/vm" tap_check "device_del nnp1 under traffic completes; the monitor answers" \
	test "$host" = 0
tap_context=$tmp/vm tap_grep "the guest ran to the end with one device left" "$tmp/vm" \
	'^TRAFFIC-END devices=1$'
tap_context=$tmp/vm tap_grep "a queue made before the unplug rings its doorbell after it: DEVICE_LOST" \
	"$tmp/vm" '^UNPLUG-RESULT nnp device was removed or reset$'
tap_context=$tmp/vm tap_grep "and no SIGBUS: the doorbell store completes" "$tmp/vm" '^HOLDER-STATUS=0$'
tap_context=$tmp/vm tap_check "QEMU did not die" \
	eval '! grep -q "QEMU exit" "$tmp/vm"'
tap_context=$tmp/vm tap_grep "the VM exits 0: the driver unloads, no WARN or oops" "$tmp/vm" \
	'^vm-status=0$'
tap_done
