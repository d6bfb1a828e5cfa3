#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Run each fuzzer for SECONDS (default 20) from its checked-in seeds and
# what earlier runs found (build/fuzz/corpus/<target>); TAP, one test per
# target: ok if it ran the whole time without a crash, printed its own count
# of the work it did ("fuzz_<target>: N things, M others ...") with every
# number above 0, and ended with libFuzzer's coverage (cov, edges) at or
# above its floor, tests/fuzz/corpus/<target>.floor: a target that never
# reaches the code it fuzzes must fail, not pass as "no crash". The seeds
# alone reach every count and more than each floor. A crash leaves its
# input in build/fuzz/crash-<target>-* and the report in the TAP output.
# Each fuzzer is one thread: as many run at once as the machine has cores
# (at most 4), each for its whole time.
# Usage: run.sh [SECONDS] [TARGET...]
#
# In detail (docs/testing.md has the summary):
# each libFuzzer target (`tests/fuzz/`, ASan and UBSan) for 10 s from its
# checked-in seeds, one per core at a time: user queue command streams,
# admin commands, ICL packets and ICL socket frames against firmware-sim,
# libnnp's ring planner and what its rendezvous reads from the network; any
# crash, sanitizer report or access to memory the host did not name fails
# it, and so does a target whose own count of its work has a 0 or whose
# final coverage is below its floor (see Fuzzing in docs/testing.md)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$root/build/fuzz
secs=${1:-20}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(queue admin icl icl_frame ring_plan bootstrap)

fuzz() { # TARGET: run it, its exit status into its .status file
	local log=$out/fuzz_$1.log

	mkdir -p "$out/corpus/$1"
	"$out/fuzz_$1" -max_total_time="$secs" -max_len=8192 -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$out/crash-$1-" \
		"$out/corpus/$1" "$root/tests/fuzz/corpus/$1" >"$log" 2>&1
	echo $? >"$out/fuzz_$1.status"
}

at_once=$(nproc)
[ "$at_once" -le 4 ] || at_once=4
for t in "${targets[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$at_once" ]; do
		wait -n
	done
	fuzz "$t" &
done
wait

tap_plan ${#targets[@]}
for t in "${targets[@]}"; do
	log=$out/fuzz_$t.log
	status=$(cat "$out/fuzz_$t.status")
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	counts=$(grep -aE "^fuzz_$t: " "$log" | tail -n 1 | sed "s/^fuzz_$t: //")
	# libFuzzer's coverage at the end: edges (cov) and features (ft).
	cov=$(sed -n 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*\(cov: [0-9]* ft: [0-9]*\).*/\1/p' "$log")
	floor=$(grep -v '^#' "$root/tests/fuzz/corpus/$t.floor")
	edges=${cov#cov: }
	edges=${edges%% *}
	said="fuzz_$t: ${runs:-0} inputs in ${secs} s, ${counts:-no count}, ${cov:-no coverage} (floor cov: $floor)"
	if [ "$status" = 0 ] && [ -n "$counts" ] && ! grep -qw 0 <<<"$counts" &&
		[ "${edges:-0}" -ge "$floor" ]; then
		tap_ok "$said, no crash"
	elif [ "$status" = 0 ]; then
		tap_not_ok "$said: a count of 0, or coverage below the floor"
	else
		grep -aE '^(fuzz_dev|fuzz_|==[0-9]+==|SUMMARY|artifact_prefix|    #[0-9] )' \
			"$log" | head -n 40 | sed 's/^/# /'
		tap_not_ok "fuzz_$t: crashed after ${runs:-?} inputs (log: $log)"
	fi
done
tap_done
