#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Events on the accel file (issue 46, item 4): events_test in the guest
# asks for each link change with a "LINK nnpN down|up PORT" line and this
# script sets it on the QEMU monitor.
#
# In detail (docs/testing.md has the summary): two chips in a ring, one
# communicator over both. Chip 0's allreduce waits for chip 1; chip 0's
# first wired port goes down: the communicator's file reads LINK (port,
# wired, down) then COMM_FAILED (its id, LINK_DOWN, no port), another
# file of chip 0 the LINK only, a file of chip 1 its own port's LINK; the
# port comes up: LINK up for each; a sysfs reset: RESET (user, its
# number) for both files of chip 0, none for chip 1's. A file that never
# reads through 25 resets keeps the newest 102 events, the oldest kept
# counting every one dropped, the RESETs numbered in order up to the last;
# two threads waiting on one handle through 10 resets take each RESET
# once, none twice, none lost
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
. "$root/tests/lib/fault_vm.sh"
fault_vm_kselftest 3 300 --chips 2 --mem-size 64M --fabric ring -- events_test
tap_context=$tmp/out tap_grep "each kind of event, in order, to the right files; the newest kept" \
	"$tmp/out" '^# PASSED: 3 / 3 tests passed'
fault_vm_clean "$tmp"
tap_done
