#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A chip of an 8-chip ring reset under its peers (issue 9): ring_reset_test
# in the guest. An idle chip reset on demand fails the ranks waiting on it
# within 1 s; a chip that hangs in the middle of an allreduce (the guest
# asks for the faults with "FAULT nnpN SPEC" lines, this script sets them
# on the QEMU monitor) is found by the watchdog and every rank returns an
# error within 1 s of the detection; after each, a new communicator over
# all 8 chips is exact. nnp-vm fails on any WARN, BUG or oops.
#
# In detail (docs/testing.md has the summary):
# `ring_reset_test` (faults set by `tests/lib/fault_host.py`,
# `watchdog_ms=400`): ranks 1..7 blocked in a 4 MiB allreduce chip 0 never
# joins (30-minute `NNP_COLL_TIMEOUT_S`) fail within 1 s of
# `nnp_device_reset()` of chip 0 returning, LINK_DOWN or ABORTED, at least
# one LINK_DOWN; all 8 ranks in a 4 MiB allreduce slowed by
# `link-delay=1:20` on chip 0, chip 3 hangs: exactly one watchdog line in
# the kernel log, every rank returns within 1 s of its time (kernel log
# clock mapped onto CLOCK_MONOTONIC with a line the test writes after the
# ranks return), none more than 50 ms before it, chip 3 DEVICE_LOST and the
# others a failed command, chip 3's reset count 1 and reason heartbeat;
# after each, the reset chip reopened, a new communicator over all 8 chips
# and a byte-exact allreduce on every rank; prints `RINGRESET
# worst_return_after_detection_ms=`
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
