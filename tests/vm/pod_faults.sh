#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Failures across chassis, on a POD of 2 chassis of 2 chips (tools/nnp-pod,
# a ring 0 -> 1 -> 2 -> 3 -> 0 whose links 1.0-2.1 and 3.0-0.1 cross
# between the QEMUs over shared unix sockets; `make pod` runs it on 4
# chassis of 4 chips as a 4x4 torus: POD_SHAPE="4 4 torus"), four jobs of
# `pod_job` ranks (1 MiB f32 allreduces, each checked), every line timed
# on the host as it comes (tests/lib/pod_driver.py):
# - job A: a chip next to a crossing link is reset with an allreduce in
#   flight (its rank resets it). The far end, in the other QEMU, hears of
#   it (CHIP_DOWN) and has the link down while the chip boots (1 s here);
#   every rank fails within 5 s;
# - job D: the two chips at the ends of that crossing link reset at the
#   same moment; every rank fails within 5 s;
# - job B, once the links are back: exact allreduces over them until
#   chassis 0's QEMU is killed (SIGKILL); the other chassis's ranks fail
#   within 5 s;
# - chassis 0 started again (nnp-pod's control FIFO): job C over all
#   chips, exact on every rank.
# No element is ever wrong. Prints the measured times (PODFAULTS).
#
# In detail (docs/testing.md has the summary):
# job A: every rank fails with an error, none with a wrong element, each
# within 5 s of the "resetting its chip" line; the reset chip's neighbour
# across the link (chip K, in chassis 1) sees that port down; job D: every
# rank fails within 5 s of the first of its two reset lines; job B: an
# allreduce exact on rank 2K-1 and none failed before the kill, so the
# reset chips' links came back at both ends; the
# ranks outside chassis 0 fail within 5 s of the kill; job C: every rank
# exact in every chassis, chassis 0 on its second start; nnp-pod exits 0;
# prints `PODFAULTS` with the times
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
read -r C K topo <<<"${POD_SHAPE:-2 2 ring}"
n=$((C * K))
# The chip reset in job A and its neighbour in chassis 1 across a crossing
# link: on the ring chip K-1's port 0 to chip K's port 1; on the torus
# chip 0's port 2 (south) to chip K's port 3.
if [ "$topo" = torus ]; then
	reset=0 far_port=3 near_port=2
else
	reset=$((K - 1)) far_port=1 near_port=0
fi
tap_plan 11

# Each chassis: jobs A, D and B on its first start, then job C.
script=$(cat "$root/tests/lib/pod_guest_job.sh")'

if [ "$NNP_POD_START" = 1 ]; then
	job A -t 60 -R '"$reset"':3
	job D -t 60 -R '"$reset,$K"':3
	job B -t 60
fi
job C
exit $st'
log=$tmp/log
python3 "$root/tests/lib/pod_driver.py" "$log" "$tmp/control" \
	--on "^\\[chassis 1\\] POD B rank $((2 * K - 1)): looping\$" 'kill 0' \
	--on '^nnp-pod: chassis 0 killed' 'start 0' \
	-- "$root/tools/nnp-pod" --chassis "$C" --chips "$K" --topo "$topo" --mem-size 16M \
	--guest-mem $((512 + 256 * K)) \
	--vm-arg=--device-opt --vm-arg=fw-boot-ms=1000 \
	--env NNP_COMM_TIMEOUT_S=300 --control "$tmp/control" -- sh -c "$script"
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
# failed JOB FIRST LAST: a "failed" line regex for each rank FIRST..LAST
failed() {
	local r
	for ((r = $2; r <= $3; r++)); do
		echo " POD $1 rank $r: failed after [0-9]+ exact: "
	done
}
# all_status JOB STATUS: every chassis printed JOB's STATUS
all_status() {
	test "$(grep -cE "^[0-9.]+ \\[chassis [0-9]+\\] JOB $1 status=$2\$" "$log")" = "$C"
}

mapfile -t all < <(failed A 0 $((n - 1)))
tap_context=$log tap_check "job A: all $n ranks failed with an error, none with a wrong element" \
	all_status A 2
reset_at=$(when " POD A rank $reset: resetting its chip\$")
a_all=$(within "$reset_at" 5 "${all[@]}")
tap_context=$log tap_check "job A: a chip reset in chassis 0: every rank fails within 5 s" \
	test -n "$a_all"
mapfile -t far < <(failed A "$K" $((2 * K - 1)))
a_far=$(within "$reset_at" 5 "${far[@]}")
# The reset chip takes 1 s to boot (fw-boot-ms): its link is down then at
# the far end too, not only at its own.
tap_context=$log tap_grep "job A: the far end of the reset chip's crossing link saw it down" "$log" \
	"\\[chassis 1\\] POD A rank $K: port $far_port to chip $reset\\.$near_port down\$"
tap_context=$log tap_check "job D: two neighbours reset at once: all $n ranks failed, none wrong" \
	all_status D 2
mapfile -t all < <(failed D 0 $((n - 1)))
d_all=$(within "$(when " POD D rank [0-9]+: resetting its chip\$")" 5 "${all[@]}")
tap_context=$log tap_check "job D: every rank fails within 5 s" test -n "$d_all"
# One exact allreduce needs every rank and every link of the ring: rank
# 2K-1's (the kill waits for it; the other ranks may not have printed
# theirs yet), with no rank of job B failing before the kill.
kill_at=$(when ' CONTROL kill 0$')
tap_context=$log tap_check "job B: an allreduce exact over the reset chips' links, back at both ends" \
	awk -v k="$kill_at" -v re=" POD B rank $((2 * K - 1)): looping\$" \
	'$0 ~ re { seen = 1 } / POD B rank [0-9]+: failed / && $1 < k { early = 1 }
	 END { exit !(seen && k != "" && !early) }' "$log"
mapfile -t others < <(failed B "$K" $((n - 1)))
b_far=$(within "$kill_at" 5 "${others[@]}")
tap_context=$log tap_check "job B: chassis 0 killed: the other chassis's ranks fail within 5 s" \
	test -n "$b_far"
tap_context=$log tap_check "chassis 0 started again; job C exact on all $n ranks" sh -c \
	"grep -q 'nnp-pod: chassis 0 started again (NNP_POD_START=2)' '$log' &&
	 test \$(grep -cE ' POD C rank [0-9]+: 1 exact$' '$log') = $n"
tap_context=$log tap_check "job C: every chassis's status 0" all_status C 0
tap_context=$log tap_check "no element wrong in any job" sh -c \
	"! grep -qE ' element [0-9]+ is |status=3$' '$log'"
tap_context=$log tap_grep "nnp-pod exits 0" "$log" '^pod-status=0$'
recovered=$(within "$kill_at" 600 "\\[chassis 0\\] JOB C status=0")
echo "# PODFAULTS shape=${C}x${K}_$topo reset_to_all_errors_s=${a_all:-none}" \
	"reset_to_far_errors_s=${a_far:-none} two_resets_to_all_errors_s=${d_all:-none}" \
	"kill_to_errors_s=${b_far:-none} kill_to_job_c_done_s=${recovered:-none}"
tap_done
