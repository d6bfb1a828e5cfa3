#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults on demand, detection, reset and recovery (issue 9): fault_test in
# the guest asks for each fault with a "FAULT nnpN SPEC" line and this
# script sets it on the QEMU monitor. The guest checks each is found within
# its bound, the reset count and reason, ECANCELED for contexts a reset
# took, the uevents, and another process's exact copies on device 1;
# nnp-vm fails on any WARN, BUG or oops.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
. "$root/tests/lib/fault_vm.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 3

fault_vm "$tmp" "FAULTTEST " 600 --chips 2 --mem-size 64M --guest-mem 1024 --fabric ring \
	-- fault_test
host=$?
grep -E '^(not )?ok |^# ' "$tmp/out" | sed 's/^/# /'
tap_context=$tmp/host tap_check "the host set every fault the guest asked for" test $host = 0
tap_context=$tmp/out tap_grep "every fault found in bound, the device back, counts exact" "$tmp/out" '^FAULTTEST passed'
tap_context=$tmp/out tap_grep "no WARN, BUG or oops; the module unloads" "$tmp/out" '^vm-status=0$'
tap_done
