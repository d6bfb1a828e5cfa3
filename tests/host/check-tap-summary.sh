#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/lib/tap-summary.sh, which sums up every run, on TAP written for it:
# passes, failures and skips counted apart; kselftest's "ok N # SKIP why",
# CMocka's "not ok N # SKIP name", lower case "# skip", and an empty plan
# "1..0 # SKIP why" are skips; a failure whose text has "# skipped" or
# "#skipping" in it is a failure all the same, and so is the exit status;
# each skip and failure is listed under its suite's name.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 4

cat >"$tmp/one.tap" <<'TAP'
TAP version 13
1..7
ok 1 works
ok 2 fast path # SKIP no debug kernel
not ok 3 # SKIP test_cmocka_style
ok 4 lower # skip lower case
not ok 5 wrote the list # skipped nothing
not ok 6 a word #skipping
ok 7 also works
TAP
cat >"$tmp/two.tap" <<'TAP'
1..0 # SKIP the debug kernel has no 9p
TAP
bash "$root/tests/lib/tap-summary.sh" "$tmp/one.tap" "$tmp/two.tap" >"$tmp/out"
echo "status=$?" >>"$tmp/out"
tap_context=$tmp/out tap_grep "the summary line: 2 passed, 4 skipped, 2 failed" "$tmp/out" \
	'^2 passed, 4 skipped, 2 failed$'
tap_context=$tmp/out tap_grep "the exit status is 1" "$tmp/out" '^status=1$'
tap_check "the two failures listed by suite, the skips' lines not among them" \
	test "$(sed -n '/^Failed tests:$/,/passed/p' "$tmp/out")" = "Failed tests:
one: not ok 5 wrote the list # skipped nothing
one: not ok 6 a word #skipping
2 passed, 4 skipped, 2 failed"
tap_check "the four skips listed, with why" test "$(sed -n '/^Skipped, and why:$/,/^Failed/p' "$tmp/out")" = \
	"Skipped, and why:
one: ok 2 fast path # SKIP no debug kernel
one: not ok 3 # SKIP test_cmocka_style
one: ok 4 lower # skip lower case
two: 1..0 # SKIP the debug kernel has no 9p
Failed tests:"
tap_done
