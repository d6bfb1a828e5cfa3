#!/usr/bin/env bash
# Style: the driver passes the kernel's checkpatch.pl --strict (from
# linux-source-6.12), the QEMU glue passes QEMU's own checkpatch.pl.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 2
perl "$root/build/linux-src/scripts/checkpatch.pl" --strict --no-tree --terse \
	--show-types -f "$root"/driver/*.[ch] >"$tmp/kernel" 2>&1
echo "status=$?" >>"$tmp/kernel"
tap_grep "kernel checkpatch --strict on driver/" "$tmp/kernel" '^status=0$'
perl "$root/build/qemu-src/scripts/checkpatch.pl" --no-tree -f \
	"$root"/qemu-device/*.c >"$tmp/qemu" 2>&1
echo "status=$?" >>"$tmp/qemu"
tap_grep "QEMU checkpatch on qemu-device/" "$tmp/qemu" '^status=0$'
tap_done
