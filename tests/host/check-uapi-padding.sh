#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails if any struct in the uapi header or the hardware interface header
# has implicit padding (holes or tail padding), as gcc -Wpadded sees it on
# x86_64. First proves, on a struct known to be padded, that the check bites.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# padded HEADER: print the -Wpadded warnings gcc reports inside HEADER;
# succeeds if there are any.
padded() {
	echo "#include \"$1\"" >"$tmp/probe.c"
	gcc -std=gnu11 -Wpadded -fsyntax-only -I/usr/include/libdrm \
		"$tmp/probe.c" 2>&1 | grep -F "$(basename "$1"):" | grep -F -- '-Wpadded'
}

tap_plan 4
printf '#include <stdint.h>\nstruct has_hole { uint8_t a; uint32_t b; };\n' >"$tmp/padded.h"
if padded "$tmp/padded.h" >/dev/null; then
	tap_ok "padding check detects a known hole"
else
	tap_not_ok "padding check detects a known hole"
fi
for h in uapi/drm/nnp_accel.h uapi/drm/nnp_coredump.h hw/nnp_hw.h; do
	if padded "$root/$h" >"$tmp/out"; then
		sed 's/^/# /' "$tmp/out"
		tap_not_ok "no implicit padding in $h"
	else
		tap_ok "no implicit padding in $h"
	fi
done
tap_done
