#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A crossing link flapped under 256 MiB allreduces (make pod): a POD of 2
# chassis of 2 chips on a ring, its links between the QEMUs over LINK
# (unix: shared memory; tcp: copies), 4 jobs of 4 `pod_job` ranks one
# after the other, each looping on 256 MiB f32 allreduces (every element
# checked) until one fails. Meanwhile the host takes chip 1's port 0 (to
# chip 2, in the other QEMU) down for 0.3 s every 4 s through chassis 0's
# monitor (nnp-pod's control FIFO, "mon"). Every allreduce is either
# exact or fails with the device's status for a link or a peer (link
# down, aborted, peer timeout); no element is ever wrong; at least one
# allreduce failed and at least one was exact after a flap.
#
# usage: link_flap.sh unix|tcp
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
link=${1:-unix}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
count=$((64 << 20))	# f32 elements: 256 MiB
flaps=12
tap_plan 5

script='
for j in 1 2 3 4; do
	pids=
	for i in $(seq 0 $((NNP_POD_CHIPS - 1))); do
		pod_job -t 40 -c '"$count"' "F$j" "$i" & pids="$pids $!"
	done
	for p in $pids; do wait "$p"; echo "JOB F$j status=$?"; done
done'
flapper="for k in \$(seq $flaps); do
	sleep 3.7
	echo 'mon 0 qom-set /machine/peripheral/nnp1 link-down 0' >\"\$NNP_POD_CONTROL\"
	echo FLAP down \$k
	sleep 0.3
	echo 'mon 0 qom-set /machine/peripheral/nnp1 link-up 0' >\"\$NNP_POD_CONTROL\"
	echo FLAP up \$k
done"
log=$tmp/log
start=$(date +%s)
python3 "$root/tests/lib/pod_driver.py" "$log" "$tmp/control" \
	--on '^\[chassis 0\] POD F1 rank 0: looping$' "!$flapper" \
	-- "$root/tools/nnp-pod" --chassis 2 --chips 2 --link "$link" --mem-size 1G \
	--guest-mem 2048 --env NNP_COMM_TIMEOUT_S=300 --control "$tmp/control" \
	-- sh -c "$script"
echo "pod-status=$?" >>"$log"
echo "# link_flap $link: $(($(date +%s) - start)) s"

tap_context=$log tap_check "$link: the host flapped the link $flaps times" sh -c \
	"test \$(grep -cE '^[0-9.]+ FLAP up [0-9]+$' '$log') = $flaps"
tap_context=$log tap_check "$link: no element wrong, ever" sh -c \
	"! grep -qE ' element [0-9]+ is |status=3$' '$log'"
# Each failure names the device's status for a link or a peer.
tap_context=$log tap_check "$link: every failed allreduce says link down, aborted or peer timeout" sh -c \
	"grep ' POD F[0-9] rank [0-9]: failed after ' '$log' >'$tmp/failed';
	 test -s '$tmp/failed' &&
	 ! grep -vE '\\((an inter-chip link the collective needs is down|another rank.s part of the collective failed|a peer chip did not answer in time)\\)$' '$tmp/failed'"
tap_context=$log tap_check "$link: allreduces exact between the flaps" sh -c \
	"grep -E ' POD F[2-4] rank [0-9]: (failed after [1-9][0-9]* exact|[1-9][0-9]* exact$)' '$log' | grep -q ."
tap_context=$log tap_grep "$link: nnp-pod exits 0" "$log" '^pod-status=0$'
exact=$(grep -oE ' POD F[0-9] rank 0: (failed after )?[0-9]+ exact' "$log" | grep -oE '[0-9]+ exact' |
	awk '{ s += $1 } END { print s + 0 }')
echo "# LINKFLAP link=$link flaps=$flaps exact_allreduces_rank0=$exact" \
	"failed_allreduces=$(grep -c ' POD F[0-9] rank [0-9]: failed after ' "$log")"
tap_done
