#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A link taken down from the QEMU monitor while 4 chips run allreduces:
# link_down_test (in the guest) sees every rank fail within a bound and,
# after this script brings the link back, the ring work again. The failed
# allreduces are no guest error in QEMU's log, but nnp_link_failure trace
# events.
#
# In detail (docs/testing.md has the summary):
# `link_down_test` runs 8 MiB allreduces; the host takes a link down from
# the monitor: every rank's stream fails with LINK_DOWN, PEER_TIMEOUT or
# ABORTED, the last within 10 s of the first; the host brings it back and
# after stream resets and a new communicator the allreduce is exact; QEMU's
# log has the `nnp_link_failure` trace line of a communicator failed by the
# link, and no guest error
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 6

"$root/tools/nnp-vm" --chips 4 --mem-size 64M --guest-mem 1024 --fabric ring \
	--monitor "$tmp/mon" --qemu-log "$tmp/qlog" \
	--qemu-arg -trace --qemu-arg nnp_link_failure \
	-- link_down_test >"$tmp/out" 2>&1 &
vm=$!
python3 - "$tmp/mon" "$tmp/out" >"$tmp/host" 2>&1 <<'PY'
import os, socket, sys, time
mon, out = sys.argv[1], sys.argv[2]

def wait_for(text, secs):
    end = time.time() + secs
    while time.time() < end:
        if os.path.exists(out) and text in open(out, errors="replace").read():
            return True
        time.sleep(0.1)
    return False

def monitor(cmd):
    s = socket.socket(socket.AF_UNIX)
    s.connect(mon)
    s.sendall(cmd.encode() + b"\n")
    time.sleep(0.5)
    s.close()

if not wait_for("LINKTEST running", 120):
    sys.exit("the guest never started its collectives")
time.sleep(1.0)		# well inside a run of allreduces
monitor("qom-set /machine/peripheral/nnp1 link-down 0")
print("link down")
if not wait_for("LINKTEST failed", 120):
    sys.exit("the guest never saw the failure")
monitor("qom-set /machine/peripheral/nnp1 link-up 0")
print("link up")
PY
host=$?
wait $vm
echo "vm-status=$?" >>"$tmp/out"
tap_context=$tmp/host tap_check "the host took the link down mid-collective and back up" test $host = 0
tap_context=$tmp/out tap_grep "every rank failed, within the bound" "$tmp/out" \
	'^# LINKTEST every rank failed within [0-9.]+ s of the first: inside the [0-9]+ s bound$'
tap_context=$tmp/out tap_grep "collectives work again after the link is back: 4 of 4 ranks exact" \
	"$tmp/out" '^# LINKTEST after the link came back: 4 of 4 ranks exact$'
tap_context=$tmp/out tap_grep "and the VM exits 0" "$tmp/out" '^vm-status=0$'
# Since hw 1.23 the chips at the link fail the communicator when it goes
# down, allreduce in flight or not, and trace that.
tap_context=$tmp/qlog tap_grep "the failures are traced as link failures" "$tmp/qlog" \
	'nnp_link_failure chip [0-9]+: comm [0-9]+ failed: its link on port [0-9]+ went down$'
tap_context=$tmp/qlog tap_check "and logged as no guest error" eval '! grep -q "^nnp\[chip" "$tmp/qlog"'
tap_done
