#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A chip of an 8-chip ring reset under its peers (issue 9): ring_reset_test
# in the guest. An idle chip reset on demand fails the ranks waiting on it
# within 1 s; a chip that hangs in the middle of an allreduce (the guest
# asks for the faults with "FAULT nnpN SPEC" lines, this script sets them
# on the QEMU monitor) is found by the watchdog and every rank returns an
# error within 1 s of the detection; after each, a new communicator over
# all 8 chips is exact. nnp-vm fails on any WARN, BUG or oops.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
. "$root/tests/lib/fault_vm.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 5

fault_vm "$tmp" "# Totals:" 600 --chips 8 --mem-size 16M --guest-mem 1024 --fabric ring \
	-- ring_reset_test
host=$?
grep -E '^(not )?ok |^# (RINGRESET|tests/guest/ring_reset_test)' "$tmp/out" | sed 's/^/# /'
tap_context=$tmp/host tap_check "the host set every fault the guest asked for" test $host = 0
tap_context=$tmp/out tap_grep "an idle chip reset: the waiting ranks fail within 1 s; a new communicator exact" \
	"$tmp/out" '^ok [0-9]+ ring\.reset_idle_chip_fails_waiting_ranks$'
tap_context=$tmp/out tap_grep "a chip hangs mid-allreduce: every rank errs within 1 s of detection; a new communicator exact" \
	"$tmp/out" '^ok [0-9]+ ring\.hang_mid_allreduce_every_rank_errs_within_1s$'
tap_context=$tmp/out tap_grep "the worst return after the detection is printed" "$tmp/out" \
	'^# RINGRESET worst_return_after_detection_ms=[0-9]+$'
tap_context=$tmp/out tap_grep "no WARN, BUG or oops; the module unloads" "$tmp/out" '^vm-status=0$'
tap_done
