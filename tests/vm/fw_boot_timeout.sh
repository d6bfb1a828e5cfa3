#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A chip whose firmware never becomes ready: probe gives up after the
# driver's timeout with a clear message, no node appears, the module still
# unloads, and the kernel log has no WARN (nnp-vm checks that).
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 4
"$root/tools/nnp-vm" --chips 1 --no-load --device-opt fw-boot-ms=3600000 -- sh -c '
	nnp-load fw_timeout_ms=300 || exit 1
	dmesg | grep -E "nnp .*(firmware not ready|probe with driver nnp failed)"
	nnptool list; echo "list-status=$?"' >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_grep "probe reports the firmware timeout" "$out" 'firmware not ready after 300 ms \(status booting\)'
tap_grep "probe fails with -ETIMEDOUT" "$out" 'probe with driver nnp failed with error -110'
tap_grep "no device appears and nnptool says so" "$out" 'list-status=1'
tap_grep "module unloads, kernel log clean" "$out" '^vm-status=0$'
tap_done
