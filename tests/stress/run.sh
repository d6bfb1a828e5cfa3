#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make stress COUNT=N: a soak run, not part of make check. N faults of
# random kinds at random moments (fault_test --stress in a VM whose
# monitor this script drives), and N loops of kill -9 mid-collective and
# mid-DMA with unbind/rebind and rmmod/reload (tests/guest/stress_kill_loop.sh).
# The two phases share nothing, so they run at once, each in its own VM.
# Then the whole collective matrix that make check samples: vm-allreduce
# with NNP_COLL_MATRIX=full (every type, op, count and root, 64 MiB on
# every fabric).
# Prints the figures; fails on any late or missing recovery, leak or
# kernel warning.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/fault_vm.sh"
n=${1:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
t0=$SECONDS

faults() {
	local ok=0

	fault_vm "$tmp" "STRESS " 86400 --chips 2 --mem-size 64M --fabric ring \
		--timeout 86400 -- fault_test --stress "$n" || ok=1
	grep -q '^vm-status=0$' "$tmp/out" || ok=1
	echo "$((SECONDS - t0))" >"$tmp/faults_s"
	return $ok
}

kills() {
	local ok=0

	"$root/tools/nnp-vm" --chips 2 --mem-size 64M --fabric ring --timeout 86400 \
		-- sh /usr/libexec/nnp-tests/stress_kill_loop.sh "$n" >"$tmp/kills" 2>&1 || ok=1
	echo "$((SECONDS - t0))" >"$tmp/kills_s"
	return $ok
}

faults &
fpid=$!
kills &
kpid=$!
wait $fpid || fail=1
wait $kpid || fail=1
grep -E '^STRESS ' "$tmp/out" || { tail -n 30 "$tmp/out"; fail=1; }
grep -E '^(KILLLOOP |# loop)' "$tmp/kills" || { tail -n 30 "$tmp/kills"; fail=1; }
t1=$SECONDS
NNP_COLL_MATRIX=full bash "$root/tests/vm/allreduce.sh" >"$tmp/matrix" 2>&1 || {
	grep -v '^ok ' "$tmp/matrix" | tail -n 40
	fail=1
}
grep -E '^(not )?ok ' "$tmp/matrix"
echo "$((SECONDS - t1))" >"$tmp/matrix_s"
# Wall-clock seconds per phase, VM boots included, to project long runs.
echo "TIMES faults_s=$(cat "$tmp/faults_s") kills_s=$(cat "$tmp/kills_s") matrix_s=$(cat "$tmp/matrix_s") count=$n"
echo "stress: $([ $fail = 0 ] && echo passed || echo FAILED)"
exit $fail
