#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/nnp-vm --chips 3 -- nnptool list --json prints 3 devices with chip
# ids 0, 1, 2 and the configured memory size, as valid JSON.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 2
"$root/tools/nnp-vm" --chips 3 --mem-size 64M -- nnptool list --json >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_grep "nnp-vm --chips 3 -- nnptool list --json exits 0" "$out" '^vm-status=0$'
tap_check "the JSON lists 3 devices, chip ids 0..2, 64 MiB each" python3 - "$out" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('{"devices"')]
assert len(lines) == 1, lines
devs = json.loads(lines[0])["devices"]
assert len(devs) == 3, devs
assert sorted(d["chip_id"] for d in devs) == [0, 1, 2], devs
assert all(d["mem_size"] == 64 << 20 for d in devs), devs
assert [d["index"] for d in devs] == [0, 1, 2], devs
PY
tap_done
