#!/usr/bin/env bash
# A chip whose firmware never becomes ready: probe gives up after the
# driver's timeout with a clear message, no node appears, the module still
# unloads, and the kernel log has no WARN (nnp-vm checks that).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "TAP version 13"
echo "1..3"
"$root/tools/nnp-vm" --chips 1 --no-load --device-opt fw-boot-ms=3600000 -- sh -c '
	nnp-load fw_timeout_ms=300 || exit 1
	ls /dev/accel 2>/dev/null | grep -c accel
	dmesg | grep -E "nnp .*(firmware not ready|probe with driver nnp failed)"
	nnptool list; echo "list-status=$?"' >"$out" 2>&1
rc=$?
check() { # N NAME PATTERN
	if grep -qE "$3" "$out"; then echo "ok $1 $2"; else sed 's/^/# /' "$out"; echo "not ok $1 $2"; rc=1; fi
}
check 1 "probe reports the firmware timeout" 'firmware not ready after 300 ms \(status booting\)'
check 2 "probe fails with -ETIMEDOUT" 'probe with driver nnp failed with error -110'
check 3 "no device appears and nnptool says so" 'list-status=1'
exit $rc
