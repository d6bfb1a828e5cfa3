#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/vm/torch_dist_compare.py, which judges torch's suite on nnp
# against gloo (vm-torch_dist_suite), on logs and a table written for it:
# a test passing on gloo and failing on nnp is NEW unless the table lists
# it for the logs' torch version, a listed one that passes on nnp or did
# not pass on gloo is STALE, rows of another version count for nothing,
# and logs of two versions, or of none, are bad input (exit 2), as is a
# table with no row for the version.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 6
compare() {
	python3 "$root/tests/vm/torch_dist_compare.py" "$@" >"$tmp/out" 2>&1
	echo "status=$?" >>"$tmp/out"
}

cat >"$tmp/doc.md" <<'MD'
# PyTorch

### What nnp does not pass of torch's suite

| test | torch | why |
|---|---|---|
| `test_tag` | 1.13, 2.6 | tags |
| `test_old` | 1.13 | gone on 2.6 |
| `test_fixed` | 2.6 | passes now |
| `test_gloo_fails` | 2.6 | not on gloo either |

## Next
| `test_after` | 2.6 | not in the table: another heading |
MD
cat >"$tmp/gloo.log" <<'LOG'
console noise
DISTTEST torch 2.6.0+dfsg
DISTTEST test_a: pass (1.0 s)
DISTTEST test_tag: pass (1.0 s)
DISTTEST test_old: pass (1.0 s)
DISTTEST test_fixed: pass (1.0 s)
DISTTEST test_gloo_fails: FAIL: AssertionError: x (1.0 s)
DISTTEST test_after: pass (1.0 s)
DISTTEST test_skip: skip: no GPU (0.1 s)
LOG
cat >"$tmp/nnp.log" <<'LOG'
[    1.0] guest console
DISTTEST torch 2.6.0+dfsg
DISTTEST test_a: pass (1.0 s)
DISTTEST test_tag: error: RuntimeError: nnp: tag (1.0 s)
DISTTEST test_old: FAIL: AssertionError: y (1.0 s)
DISTTEST test_fixed: pass (1.0 s)
DISTTEST test_after: error: RuntimeError: z (1.0 s)
LOG
compare "$tmp/gloo.log" "$tmp/nnp.log" "$tmp/doc.md"
tap_check "torch 2.6: KNOWN, NEW (a 1.13 row and a row under another heading count for nothing), STALE twice, exit 1" \
	test "$(cat "$tmp/out")" = "NEW test_after: passes on gloo, error on nnp: RuntimeError: z
STALE test_fixed: passes on nnp, but docs/torch.md lists it
NEW test_old: passes on gloo, FAIL on nnp: AssertionError: y
KNOWN test_tag: error on nnp: tags
STALE test_gloo_fails: listed in docs/torch.md, but did not pass on gloo
DISTCOMPARE torch 2.6: 2 of the 5 tests that pass on gloo pass on nnp; 3 documented, 4 unexplained or stale
status=1"

sed -i 's/2\.6\.0+dfsg/1.13.1/' "$tmp/gloo.log" "$tmp/nnp.log"
compare "$tmp/gloo.log" "$tmp/nnp.log" "$tmp/doc.md"
tap_context=$tmp/out tap_grep "torch 1.13: the 1.13 rows alone, test_old known" "$tmp/out" \
	'^KNOWN test_old: FAIL on nnp: gone on 2\.6$'
tap_context=$tmp/out tap_grep "torch 1.13: 2.6's rows count for nothing" "$tmp/out" \
	'^DISTCOMPARE torch 1\.13: 2 of the 5 tests that pass on gloo pass on nnp; 2 documented, 1 unexplained or stale$'

sed -i 's/^DISTTEST torch 1\.13\.1$/DISTTEST torch 2.6.0/' "$tmp/nnp.log"
compare "$tmp/gloo.log" "$tmp/nnp.log" "$tmp/doc.md"
tap_context=$tmp/out tap_check "logs of two torch versions: exit 2, both named" \
	test "$(cat "$tmp/out")" = "torch_dist_compare: the logs name torch 1.13 and 2.6
status=2"

sed -i '/^DISTTEST torch/d' "$tmp/gloo.log" "$tmp/nnp.log"
compare "$tmp/gloo.log" "$tmp/nnp.log" "$tmp/doc.md"
tap_context=$tmp/out tap_check "logs naming no torch version: exit 2" \
	test "$(cat "$tmp/out")" = "torch_dist_compare: the logs name torch None and None
status=2"

sed -i '1i DISTTEST torch 2.7.0' "$tmp/gloo.log" "$tmp/nnp.log"
compare "$tmp/gloo.log" "$tmp/nnp.log" "$tmp/doc.md"
tap_context=$tmp/out tap_check "a version the table has no row for: exit 2, named" \
	test "$(cat "$tmp/out")" = "torch_dist_compare: no row for torch 2.7 under 'What nnp does not pass of torch's suite' in $tmp/doc.md
status=2"
tap_done
