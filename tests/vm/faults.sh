#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Faults on demand, detection, reset and recovery (issue 9): fault_test in
# the guest asks for each fault with a "FAULT nnpN SPEC" line and this
# script sets it on the QEMU monitor. The guest checks each is found within
# its bound, the reset count and reason, ECANCELED for contexts a reset
# took, the uevents, and another process's exact copies on device 1;
# nnp-vm fails on any WARN, BUG or oops.
#
# In detail (docs/testing.md has the summary):
# `fault_test` asks for each fault (`FAULT nnp0 SPEC`), the host sets it
# (`tests/lib/fault_host.py`); with `watchdog_ms=400`,
# `job_timeout_ms=1000`: a hang and a dying chip end a waiting stream with
# DEVICE_LOST within 400 + 100 ms plus the monitor's round trip (2.5 s of
# slack), a stuck queue within 1000 + 100 ms plus slack; a lost MSI-X costs
# no reset and the copy completes, a failed DMA fails the command and no
# more; after each reset the count and reason are exact in the info query
# and sysfs, a new context's fill is byte-exact, the old handle's every call
# is DEVICE_LOST; three threads of one fd racing a reset see only 0 or
# ECANCELED, the old doorbell mapping takes a store (no SIGBUS), mmap of it
# is ECANCELED, close works; a reset with 512 MiB of copies queued; the
# sysfs reset file refused to nobody, `nnptool reset` as root, `nnptool
# info` showing 6 resets; device 1 never reset; one KOBJ_CHANGE uevent per
# reset with its reason, in order; another process's copies on device 1
# exact all along
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
