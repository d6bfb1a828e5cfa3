#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The job's view across chassis (issue 46, item 1): `nnptool job` in
# chassis 0 of a POD of 2 chassis of 2 chips (tools/nnp-pod), asking rank
# 0 at NNP_COMM_ID with the job's NNP_COMM_SECRET, as nnp-pod gives them.
#
# In detail (docs/testing.md has the summary): job L: rank 3 (chassis 1,
# chip 1) sleeps 15 s after its first exact allreduce; within 5 s of its
# "late" line, nnptool job names it, with its host and chip, as behind
# (started 1 collective, the others 2), and every other rank as in its
# second allreduce (2 started, 1 done); --json says the same; the job
# then ends exact on every rank. Job K: rank 3 kills itself (SIGKILL)
# after its first allreduce; its chip tells its neighbours, across the
# chassis too, that it left (hw 1.20): the others' second allreduce fails
# within 5 s of the kill, not at their 40 s timeout, one of them saying a
# rank left, and each holds its failed communicator 15 s; within 5 s
# nnptool job names rank 3 gone, first, before the ranks that failed
# for it. Job X: rank 3 late again, and as it says so the crossing link
# from its chip to chip 0 is taken down (QEMU monitor); each rank holds
# its failed communicator 15 s: nnptool job names a rank at an end of
# the link failed link_down (rank 3, idle, fails as the link goes since
# hw 1.23, and its abort may reach rank 0 before the link's news does),
# the others failed too (the aborts passed on). A wrong
# secret and an address nothing serves fail with exit status 1 and their
# messages. Prints the verdict lines (PODJOBVIEW).
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 16

# Chassis 0 asks for the view until it names a rank, each answer timed
# from the moment the late or killed rank said so (its chassis's clock:
# both guests count from their own boot, so only chassis 0's own lines
# are compared, through the view's own "for N s" of the wait).
script=$(cat "$root/tests/lib/pod_guest_job.sh")'
# view NAME WORD [NOT]: nnptool job until its verdict has WORD (and no
# line NOT, both grep -E), 30 tries a second apart
view() {
	for i in $(seq 30); do
		if nnptool job >/tmp/view 2>&1 && grep -Eq "$2" /tmp/view &&
			{ [ -z "${3:-}" ] || ! grep -Eq "$3" /tmp/view; }; then
			sed "s/^/VIEW $1: /" /tmp/view
			nnptool job --json | sed "s/^/VIEWJSON $1: /"
			return
		fi
		sleep 1
	done
	sed "s/^/VIEW $1 (never named): /" /tmp/view
}
if [ "$NNP_POD_CHASSIS" = 0 ]; then
	job L -n 2 -L 3:15 & jl=$!
	# Rank 3 alone: the others may not all have started their second yet.
	view L "waits for: rank 3 .*behind" "^ +rank [0-9]+ \\("
	wait $jl
	job K -n 2 -K 3 -H 15 & jk=$!
	view K "gone"
	NNP_COMM_SECRET=0123456789abcdef-wrong nnptool job; echo "WRONG status=$?"
	nnptool job 127.0.0.1:1; echo "NOWHERE status=$?"
	wait $jk
	job X -n 2 -L 3:15 -H 15 & jx=$!
	view X "link_down"
	wait $jx
else
	job L -n 2 -L 3:15
	job K -n 2 -K 3 -H 15
	job X -n 2 -L 3:15 -H 15
fi'
log=$tmp/log
# Chip 3 (chassis 1's device nnp3): its port 0 is the crossing link to chip 0.
python3 "$root/tests/lib/pod_driver.py" "$log" "$tmp/control" \
	--on '^\[chassis 1\] POD X rank 3: late for ' \
	'mon 1 qom-set /machine/peripheral/nnp3 link-down 0' \
	-- "$root/tools/nnp-pod" --chassis 2 --chips 2 --topo ring --mem-size 16M \
	--guest-mem 1024 --env NNP_COLL_TIMEOUT_S=40 --env NNP_COMM_TIMEOUT_S=120 \
	--control "$tmp/control" -- sh -c "$script"
echo "pod-status=$?" >>"$log"

# soon FROM TO: the line matching TO came within 5 s of the one matching
# FROM (the host's clock, as pod_driver.py stamps every line)
soon() {
	awk -v a="$1" -v b="$2" '$0 ~ a && !ta { ta = $1 } $0 ~ b && !tb { tb = $1 }
		END { d = tb - ta; printf "# %.1f s from %s\n", d, a; exit !(ta && tb && d >= 0 && d < 5) }' "$log"
}
v=' VIEW L: '
tap_context=$log tap_grep "job L: the late rank named behind, with its host and chip" "$log" \
	"${v}waits for: rank 3 \\([^,]+, chip 3\\): behind: started 1 collectives, the others 2\$"
tap_context=$log tap_check "job L: no other rank named, each in its second allreduce" \
	awk -v v="$v" 'index($0, v) && / (0|1|2) +[^ ]+ +[^ ]+ +[0-9]+ +[0-9]+ 1\/2 +allreduce f32 sum x262144 / { n++ }
	     index($0, v) && /rank [012] \(/ { bad = 1 }
	     END { exit !(n == 3 && !bad) }' "$log"
tap_context=$log tap_grep "job L: --json names rank 3 behind" "$log" \
	' VIEWJSON L: \{.*"rank": 3, "heard": "answered", .*"waited_for": "behind: started 1 collectives, the others 2"'
tap_context=$log tap_check "job L: exact on every rank once the late rank came" \
	test "$(grep -cE '\[chassis [01]\] JOB L status=0$' "$log")" = 2
tap_context=$log tap_grep "job K: the killed rank named first, gone, before the ranks its leave failed" "$log" \
	" VIEW K: waits for: rank 3 \\(at [0-9.:]+, chip 3\\): gone: exited, killed, or destroyed its communicator\$"
# Chassis 1's worst status is the killed rank's own SIGKILL (128 + 9).
k_failed() {
	grep -qE '\[chassis 0\] JOB K status=2$' "$log" &&
		grep -qE '\[chassis 1\] POD K rank 2: failed after 1 exact: ' "$log"
}
tap_context=$log tap_check "job K: the others fail, none wrong" k_failed
tap_context=$log tap_grep "job K: a rank's failure says a rank left" "$log" \
	'\] POD K rank [012]: failed after 1 exact: .*\(a rank left the communicator '
tap_context=$log tap_grep "job X: a link taken down: a rank at its end (0 or 3) named failed link_down" "$log" \
	" VIEW X: (waits for:| +) rank ([03]) \\([^,]+, chip \\2\\): failed: link_down\$"
tap_context=$log tap_grep "job X: the others named failed too" "$log" \
	" VIEW X: +rank 1 \\([^,]+, chip 1\\): failed: "
tap_check "job L: named within 5 s of the late rank's line" \
	soon '\] POD L rank 3: late for ' ' VIEW L: waits for: rank 3 '
tap_check "job K: named within 5 s of the kill" \
	soon '\] POD K rank 3: killing itself' ' VIEW K: waits for: rank 3 '
tap_check "job K: the others fail within 5 s of the kill, not at their 40 s timeout" \
	soon '\] POD K rank 3: killing itself' '\] POD K rank [012]: failed after'
tap_check "job X: named within 5 s of the link going down" \
	soon ' CONTROL mon 1 ' ' VIEW X: waits for: rank [03] '
tap_context=$log tap_grep "a wrong secret: exit 1, named" "$log" \
	'did not prove it holds this secret: a wrong secret'
tap_context=$log tap_grep "a wrong secret: exit status 1" "$log" 'WRONG status=1$'
tap_context=$log tap_grep "an address nothing serves: exit status 1" "$log" 'NOWHERE status=1$'
grep -E ' VIEW [LKX]: (waits for|job at| +rank)' "$log" | sed 's/^/# PODJOBVIEW /'
tap_done
