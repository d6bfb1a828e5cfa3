#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nnptool bench reports wrong results, exactly, and fails: a planted wrong
# result through the whole stack. QEMU's timing-only=on chips move no
# byte of data (docs/hw-interface.md), so every result the bench checks
# is whatever the output held.
#
# In detail (docs/testing.md has the summary): on a ring of 2 timing-only
# chips, `-n 1` (one warm-up and one timed run, both checked):
# - allreduce of 1 KiB (256 floats): out of place every element of both
#   devices on both runs is wrong, 1024; in place some elements already
#   held the sum, so fewer but some; the summary line counts both, says
#   FAILED, and nnptool exits 1; `--json` the same numbers, "passed"
#   false, exit 1;
# - alltoall: out of place 1024 (each rank's own segment is not copied
#   either), in place 512 (exactly the peer's segments: its own stay);
# - sendrecv from rank 0 to rank 1: the receiver's 256 elements on both
#   runs, 512 each pass.
# nnptool bench's checks were before seen only passing ("0 wrong").
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 10
"$root/tools/nnp-vm" --chips 2 --mem-size 16M --fabric ring --device-opt timing-only=on -- sh -c '
	for op in allreduce alltoall sendrecv; do
		echo "== $op"
		nnptool bench $op -b 1K -e 1K -n 1 --trials 1
		echo "$op-status=$?"
	done
	echo "== json"
	nnptool --json bench allreduce -b 1K -e 1K -n 1 --trials 1
	echo "json-status=$?"' >"$out" 2>&1
echo "vm-status=$?" >>"$out"

# The row of @1's section: its out-of-place and in-place #wrong columns.
wrong_of() {
	sed -n "/^== $1\$/,/^$1-status/p" "$out" | awk '$1 == 1024 { print $9, $15 }'
}
# The summary's count of @1's section.
summary_of() {
	sed -n "/^== $1\$/,/^$1-status/p" "$out" |
		sed -n 's/^# Out of bounds values : \([0-9]*\) FAILED$/\1/p'
}

read -r oop ip <<<"$(wrong_of allreduce)"
tap_context=$out tap_check "allreduce: out of place all 1024 wrong, in place some ($oop, $ip)" \
	test "$oop" = 1024 -a "${ip:-0}" -gt 0 -a "${ip:-0}" -lt 1024
tap_context=$out tap_check "allreduce: the summary counts both and says FAILED" \
	test "$(summary_of allreduce)" = "$((oop + ${ip:-0}))"
tap_context=$out tap_grep "allreduce: nnptool exits 1" "$out" '^allreduce-status=1$'
read -r a_oop a_ip <<<"$(wrong_of alltoall)"
tap_context=$out tap_check "alltoall: 1024 out of place, the peer's 512 in place ($a_oop, $a_ip)" \
	test "$a_oop" = 1024 -a "$a_ip" = 512
tap_context=$out tap_grep "alltoall: the summary says 1536 FAILED" "$out" \
	'^# Out of bounds values : 1536 FAILED$'
read -r s_oop s_ip <<<"$(wrong_of sendrecv)"
tap_context=$out tap_check "sendrecv: the receiver's 512 each pass ($s_oop, $s_ip)" \
	test "$s_oop" = 512 -a "$s_ip" = 512
tap_context=$out tap_grep "sendrecv: nnptool exits 1" "$out" '^sendrecv-status=1$'
tap_context=$out tap_grep "json: the same counts, passed false" "$out" \
	"\"out_of_place\": \\{[^}]*\"wrong\": 1024,.*\"in_place\": \\{[^}]*\"wrong\": ${ip:-x},.*\"wrong\": $((oop + ${ip:-0})), \"passed\": false"
tap_context=$out tap_grep "json: nnptool exits 1" "$out" '^json-status=1$'
tap_context=$out tap_grep "the VM exits 0" "$out" '^vm-status=0$'
tap_done
