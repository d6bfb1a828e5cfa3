#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The heartbeat against one user's long command (docs/security.md): an
# admin command that waits for a 3.5 GiB copy to finish must not stop the
# firmware's heartbeat, which the watchdog reads to reset the device
# under every user.
#
# In detail (docs/testing.md has the summary):
# one device of 8 GiB, heartbeat every 2 ms, no watchdog; admin_wait_test
# frees an object while a 3.5 GiB copy runs, three times: the copy was
# not done when the free began and was when it returned, the free took
# 10 beats or more, and the heartbeat (read every millisecond) never
# stood still for half of that; the copies complete and no reset happens.
# The driver waits up to 60 s for the chip's boot, not 5: on some hosts
# the first reset of 8 GiB took longer after other VMs had run, though
# QEMU hands the pages back rather than reading them.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 2
"$root/tools/nnp-vm" --chips 1 --mem-size 8G --device-opt heartbeat-ms=2 \
	--modparam watchdog_ms=0 --modparam fw_timeout_ms=60000 --timeout 300 \
	-- admin_wait_test >"$out" 2>&1
echo "vm-status=$?" >>"$out"
sed -n 's/^# .*:close_during_a_long_copy:\(round .*\)/# \1/p' "$out"
tap_context=$out tap_grep "the heartbeat goes on while a free waits for a 3.5 GiB copy, 3 times; no reset" \
	"$out" '^# PASSED: 1 / 1 tests passed'
tap_context=$out tap_grep "the VM exits 0" "$out" '^vm-status=0$'
tap_done
