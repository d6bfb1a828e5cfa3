#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The device coredump a watchdog reset leaves (issue 46, item 3):
# coredump_test in the guest asks for each fault with a "FAULT nnpN SPEC"
# line and this script sets it on the QEMU monitor.
#
# In detail (docs/testing.md has the summary): two chips in a ring, one
# communicator over both, job timeout 1000 ms, watchdog 400 ms. Queue 0
# of chip 0 made stuck behind a fill: one dump of chip 0 and none of chip
# 1; its header (job-timeout, the reset's number, queue 0 stuck, the
# firmware asked); the copy done before, the fill at the head (its byte
# written 0) and the copy queued after, field by field; the owner's pid
# and name; the communicator as fdinfo shows it; the ports as the device
# reported them; another user's queue, whose 32-byte pattern in host and
# device memory appears nowhere in the dump; the dump mode 0600, root's,
# EACCES for nobody. A second job timeout keeps the first dump; once it
# is cleared, a firmware hang makes one for reason heartbeat, with
# neither the firmware's answers nor ports. On a kernel that keeps no
# dumps (the debug kernel) the faults and the capture run, and the checks
# of the dumps are skipped
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
. "$root/tests/lib/fault_vm.sh"
fault_vm_kselftest 3 300 --chips 2 --mem-size 64M --fabric ring -- coredump_test
if grep -q '^ok [0-9]* cd\.[a-z_]* # SKIP' "$tmp/out"; then
	tap_ok "every dump as the faults left it, exact # SKIP the kernel keeps no device coredump"
else
	tap_context=$tmp/out tap_grep "every dump as the faults left it, exact" "$tmp/out" \
		'^# PASSED: 2 / 2 tests passed'
fi
fault_vm_clean "$tmp"
tap_done
