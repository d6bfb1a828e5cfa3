#!/usr/bin/env bash
# Fails if any struct in the uapi header or the hardware interface header
# has implicit padding (holes or tail padding), as gcc -Wpadded sees it on
# x86_64. First proves, on a struct known to be padded, that the check bites.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

# padded_structs HEADER: the -Wpadded warnings gcc reports inside HEADER
padded_structs() {
	echo "#include \"$1\"" >"$tmp/probe.c"
	gcc -std=gnu11 -Wpadded -fsyntax-only -I/usr/include/libdrm \
		"$tmp/probe.c" 2>&1 | grep -F "$(basename "$1"):" | grep -F -- '-Wpadded'
}

report() { # NAME OK?
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok $n $1"; else echo "not ok $n $1"; failed=$((failed + 1)); fi
}

echo "TAP version 13"
echo "1..3"
printf '#include <stdint.h>\nstruct has_hole { uint8_t a; uint32_t b; };\n' >"$tmp/padded.h"
padded_structs "$tmp/padded.h" >/dev/null
report "padding check detects a known hole" $?

for h in uapi/drm/nnp_accel.h hw/nnp_hw.h; do
	if out=$(padded_structs "$root/$h"); then
		echo "$out" | sed 's/^/# /'
		report "no implicit padding in $h" 1
	else
		report "no implicit padding in $h" 0
	fi
done
[ "$failed" = 0 ]
