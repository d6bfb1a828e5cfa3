#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# QEMU's trace events for the device (qemu-device/trace-events), enabled
# with -trace: the driver's probe reads the ID register, rings the admin
# doorbell for its first command (IDENTIFY: SQ tail 1) and gets the
# completion's interrupt on vector 0.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp) log=$(mktemp)
trap 'rm -f "$out" "$log" "$log.head"' EXIT
# On a failure, the start of the log: all of it is every register access.
tap_context="$out $log.head"
tap_plan 4
"$root/tools/nnp-vm" --chips 1 --qemu-log "$log" --qemu-arg -trace \
	--qemu-arg 'nnp_*' -- true >"$out" 2>&1
echo "vm-status=$?" >>"$out"
head -n 60 "$log" >"$log.head"
tap_grep "QEMU ran the guest with tracing on" "$out" '^vm-status=0$'
tap_grep "MMIO read of the ID register traced" "$log" \
	'nnp_mmio_read chip 0 addr 0x0 val 0x54504e4e$'
tap_grep "admin doorbell kick traced" "$log" \
	'nnp_doorbell chip 0 addr 0x120 val 1 kick 0x1$'
tap_grep "admin completion interrupt traced" "$log" \
	'nnp_irq chip 0 vector 0 msix-enabled 1$'
tap_done
