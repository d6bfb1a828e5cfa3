#!/usr/bin/env bash
# tools/nnp-vm --chips 3 -- nnptool list --json prints 3 devices with chip
# ids 0, 1, 2 and the configured memory size, as valid JSON.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "TAP version 13"
echo "1..2"
"$root/tools/nnp-vm" --chips 3 --mem-size 64M -- nnptool list --json >"$out" 2>&1
rc=$?
if [ $rc = 0 ]; then echo "ok 1 nnp-vm --chips 3 -- nnptool list --json exits 0"; else
	sed 's/^/# /' "$out"; echo "not ok 1 nnp-vm --chips 3 -- nnptool list --json exits 0 (got $rc)"; fi
if python3 - "$out" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('{"devices"')]
assert len(lines) == 1, lines
devs = json.loads(lines[0])["devices"]
assert len(devs) == 3, devs
assert sorted(d["chip_id"] for d in devs) == [0, 1, 2], devs
assert all(d["mem_size"] == 64 << 20 for d in devs), devs
assert [d["index"] for d in devs] == [0, 1, 2], devs
PY
then echo "ok 2 the JSON lists 3 devices, chip ids 0..2, 64 MiB each"
else sed 's/^/# /' "$out"; echo "not ok 2 the JSON lists 3 devices, chip ids 0..2, 64 MiB each"; exit 1; fi
[ $rc = 0 ]
