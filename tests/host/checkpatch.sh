#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Style: the driver and the headers it shares pass the kernel's
# checkpatch.pl --strict (from linux-source-6.12), the driver passes
# Debian's sparse with no warning, the QEMU glue passes QEMU's own
# checkpatch.pl.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 4
# The four checks are independent: they run side by side (2 cores), and
# are reported in order.
(perl "$root/build/linux-src/scripts/checkpatch.pl" --strict --no-tree --terse \
	--show-types -f "$root"/driver/*.[ch] >"$tmp/kernel" 2>&1
echo "status=$?" >>"$tmp/kernel") &
# The uapi and hardware headers are built outside the kernel too: no BIT()
# and no u8 there.
(perl "$root/build/linux-src/scripts/checkpatch.pl" --strict --no-tree --terse \
	--show-types --ignore BIT_MACRO,PREFER_KERNEL_TYPES \
	-f "$root"/uapi/drm/nnp_accel.h "$root"/uapi/drm/nnp_coredump.h \
	"$root"/hw/nnp_hw.h >"$tmp/headers" 2>&1
echo "status=$?" >>"$tmp/headers") &
# Kbuild does not fail on sparse's warnings: any line of one fails the test.
(make -C "$root" --no-print-directory sparse >"$tmp/sparse" 2>&1
st=$?
grep -qE ': (warning|error):' "$tmp/sparse" && st=1
echo "status=$st" >>"$tmp/sparse") &
(perl "$root/build/qemu-src/scripts/checkpatch.pl" --no-tree -f \
	"$root"/qemu-device/*.c >"$tmp/qemu" 2>&1
echo "status=$?" >>"$tmp/qemu") &
wait
tap_grep "kernel checkpatch --strict on driver/" "$tmp/kernel" '^status=0$'
tap_grep "kernel checkpatch --strict on the uapi headers and nnp_hw.h" "$tmp/headers" '^status=0$'
tap_grep "sparse on driver/, no warning" "$tmp/sparse" '^status=0$'
tap_grep "QEMU checkpatch on qemu-device/" "$tmp/qemu" '^status=0$'
tap_done
