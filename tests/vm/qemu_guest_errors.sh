#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The device survives a guest writing nonsense to its registers with no
# driver bound: QEMU logs each mistake as a guest error, keeps running, and
# read-only registers keep their values.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp) log=$(mktemp)
trap 'rm -f "$out" "$log"' EXIT
tap_context="$out $log"
tap_plan 5
"$root/tools/nnp-vm" --chips 1 --no-load --qemu-log "$log" -- sh -c '
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat $d/vendor):$(cat $d/device)" = "0x1234:0x4e50" ] || continue
		echo 1 >$d/enable
		bar0=$(head -n 1 $d/resource | cut -d" " -f1)
	done
	reg() { printf "0x%x" $((bar0 + $1)); }
	devmem $(reg 0x0c) 32 0x63          # CHIP_ID is read-only
	devmem $(reg 0x3f0) 32 0x1          # no register there
	devmem $(reg 0x124) 32 0x99         # CQ head with the queue disabled
	devmem $(reg 0x110) 32 0x3          # bad depth ...
	devmem $(reg 0x114) 32 0x1          # ... then enable
	devmem $(reg 0x10000) 32 0xffffffff # doorbell of a queue that does not exist
	echo "chip-id-after=$(devmem $(reg 0x0c) 32)"
	echo "aq-status-after=$(devmem $(reg 0x118) 32)"
	echo "id-after=$(devmem $(reg 0x0) 32)"' >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_grep "read-only CHIP_ID unchanged" "$out" 'chip-id-after=0x0+$'
tap_grep "bad admin queue setup reported as ERROR status" "$out" 'aq-status-after=0x0+2$'
tap_grep "device still answers after the bad writes" "$out" 'id-after=0x54504E4E'
tap_grep "QEMU ran on to a clean guest exit" "$out" '^vm-status=0$'
tap_grep "QEMU logged the guest errors" "$log" 'write 0x63 to read-only register 0xc'
tap_done
