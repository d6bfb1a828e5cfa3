#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# rmmod nnp right after a test was killed in the middle of a collective
# (issue 9): comm_fault_test's harness is killed with kill -9 while its
# test, a child in a process group of its own, is blocked in an allreduce.
# The child lives on holding the devices, so rmmod fails with EAGAIN (the
# module is in use); the guest's init names and kills such leftovers
# before it unloads the module, and the unload then works.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 4
"$root/tools/nnp-vm" --chips 3 --mem-size 16M --fabric ring -- sh -c '
	comm_fault_test -t synchronize_follows_coll_timeout_past_60s >/dev/null 2>&1 &
	harness=$!
	sleep 10
	kill -9 $harness
	wait $harness
	echo "rmmod: $(rmmod nnp 2>&1 && echo unloaded)"
	echo "holders: $(ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c " /dev/accel/")"
' >"$out" 2>&1
echo "vm-status=$?" >>"$out"
grep -E '^(rmmod|holders|nnp-vm):' "$out" | sed 's/^/# /'
tap_context=$out tap_grep "with the test's child alive rmmod fails with EAGAIN" "$out" \
	'^rmmod: .*Resource temporarily unavailable'
tap_context=$out tap_grep "the child still holds device files" "$out" '^holders: [1-9]'
tap_context=$out tap_grep "init names the leftover and kills it" "$out" \
	'^nnp-vm: killing pid [0-9]+ \(comm_fault_test\), left holding an nnp device$'
tap_context=$out tap_grep "then rmmod works and the VM exits 0" "$out" '^vm-status=0$'
tap_done
