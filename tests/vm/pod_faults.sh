#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Failures across chassis, on a POD of 2 chassis of 2 chips (tools/nnp-pod,
# a ring 0 -> 1 -> 2 -> 3 -> 0 whose links 1.0-2.1 and 3.0-0.1 cross
# between the QEMUs over shared unix sockets), three jobs of 4 ranks of
# `pod_job` (1 MiB f32 allreduces, each checked), every line timed on the
# host as it comes (tests/lib/pod_driver.py):
# - job A: rank 1 resets its own chip with an allreduce in flight. The
#   far end of its crossing link, in the other QEMU, hears of it (CHIP_DOWN)
#   and has the link down while the chip boots (1 s here); every rank
#   fails within 5 s;
# - job B, once the reset chip's links are back: exact allreduces over
#   them until chassis 0's QEMU is killed (SIGKILL); chassis 1's ranks
#   fail within 5 s;
# - chassis 0 started again (nnp-pod's control FIFO): job C over all 4
#   chips, exact on every rank.
# No element is ever wrong. The note gives the measured times.
#
# In detail (docs/testing.md has the summary):
# job A: the 4 ranks fail with an error, none with a wrong element; ranks
# 2 and 3 in chassis 1 fail within 5 s of rank 1's "resetting its chip"
# line, rank 2 then seeing its port 1 (to chip 1 port 0) down; ranks 0
# and 1 within 5 s too; job B: all 4 ranks loop exact, so the links of the reset
# chip came back at both ends; chassis 1's 2 ranks fail within 5 s of the
# kill; job C: every rank exact in both chassis, chassis 0 on its second
# start; nnp-pod exits 0; prints `PODFAULTS` with the times
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 9

# Each chassis: jobs A and B on its first start, then job C. A job's
# status is its ranks' worst (pod_job's: 2 an error, 3 a wrong element).
script='
job() {
	name=$1; shift
	pids=
	for i in $(seq 0 $((NNP_POD_CHIPS - 1))); do
		pod_job "$@" "$name" "$i" & pids="$pids $!"
	done
	st=0
	for p in $pids; do wait "$p"; r=$?; [ "$r" -gt "$st" ] && st=$r; done
	echo "JOB $name status=$st"
}
if [ "$NNP_POD_START" = 1 ]; then
	job A -t 60 -R 1:3
	job B -t 60
fi
job C
exit $st'
log=$tmp/log
python3 "$root/tests/lib/pod_driver.py" "$log" "$tmp/control" \
	--on '^\[chassis 1\] POD B rank 3: looping$' 'kill 0' \
	--on '^nnp-pod: chassis 0 killed' 'start 0' \
	-- "$root/tools/nnp-pod" --chassis 2 --chips 2 --mem-size 16M \
	--vm-arg=--device-opt --vm-arg=fw-boot-ms=1000 \
	--env NNP_COMM_TIMEOUT_S=120 --control "$tmp/control" -- sh -c "$script"
echo "pod-status=$?" >>"$log"

# when REGEX: the time of the first line matching it ("" if none)
when() {
	awk -v re="$1" '$0 ~ re { print $1; exit }' "$log"
}
# within START LIMIT REGEX...: the seconds from START to the last of the
# REGEX lines, printed if each came within LIMIT s after START (else
# nothing, and why on stderr)
within() {
	local start=$1 limit=$2 worst=0 t
	shift 2
	[ -n "$start" ] || { echo "# no start line" >&2; return; }
	for re in "$@"; do
		t=$(when "$re")
		[ -n "$t" ] || { echo "# no line $re" >&2; return; }
		worst=$(awk -v a="$t" -v b="$start" -v w="$worst" \
			'BEGIN { d = a - b; printf "%.3f", (d > w ? d : w) }')
	done
	if awk -v w="$worst" -v l="$limit" 'BEGIN { exit !(w >= 0 && w < l) }'; then
		echo "$worst"
	else
		echo "# $worst s, not within $limit s" >&2
	fi
}

tap_context=$log tap_check "job A: all 4 ranks failed with an error, none with a wrong element" sh -c \
	"grep -q '^[0-9.]* \[chassis 0\] JOB A status=2$' '$log' &&
	 grep -q '^[0-9.]* \[chassis 1\] JOB A status=2$' '$log' &&
	 test \$(grep -c ' POD A rank [0-3]: failed after ' '$log') = 4"
reset_at=$(when ' POD A rank 1: resetting its chip$')
a_far=$(within "$reset_at" 5 '\[chassis 1\] POD A rank 2: failed after ' \
	'\[chassis 1\] POD A rank 3: failed after ')
tap_context=$log tap_check "job A: a chip reset in chassis 0: chassis 1's ranks fail within 5 s" \
	test -n "$a_far"
# The reset chip takes 1 s to boot (fw-boot-ms): its link is down then at
# the far end too, not only at its own.
tap_context=$log tap_grep "job A: the far end of the reset chip's crossing link saw it down" "$log" \
	'\[chassis 1\] POD A rank 2: port 1 to chip 1\.0 down$'
a_all=$(within "$reset_at" 5 ' POD A rank 0: failed after ' ' POD A rank 1: failed after ')
tap_context=$log tap_check "job A: chassis 0's ranks fail within 5 s too" test -n "$a_all"
tap_context=$log tap_check "job B: all 4 ranks exact over the reset chip's links, back at both ends" sh -c \
	"test \$(grep -cE ' POD B rank [0-3]: looping$' '$log') = 4"
kill_at=$(when ' CONTROL kill 0$')
b_far=$(within "$kill_at" 5 '\[chassis 1\] POD B rank 2: failed after ' \
	'\[chassis 1\] POD B rank 3: failed after ')
tap_context=$log tap_check "job B: chassis 0 killed: chassis 1's ranks fail within 5 s" \
	test -n "$b_far"
tap_context=$log tap_check "chassis 0 started again; job C exact on all 4 ranks" sh -c \
	"grep -q 'nnp-pod: chassis 0 started again (NNP_POD_START=2)' '$log' &&
	 grep -q '^[0-9.]* \[chassis 0\] JOB C status=0$' '$log' &&
	 grep -q '^[0-9.]* \[chassis 1\] JOB C status=0$' '$log' &&
	 test \$(grep -cE ' POD C rank [0-3]: 1 exact$' '$log') = 4"
tap_context=$log tap_check "no element wrong in any job" sh -c \
	"! grep -qE ' element [0-9]+ is |status=3$' '$log'"
tap_context=$log tap_grep "nnp-pod exits 0" "$log" '^pod-status=0$'
recovered=$(within "$kill_at" 300 '\[chassis 0\] JOB C status=0' '\[chassis 1\] JOB C status=0')
echo "# PODFAULTS reset_to_far_error_s=${a_far:-none} reset_to_all_errors_s=${a_all:-none}" \
	"kill_to_errors_s=${b_far:-none} kill_to_job_c_done_s=${recovered:-none}"
tap_done
