#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Communicator faults: comm_fault_test on a ring of 3 chips. A late peer
# is not a dead peer: rank 0 reaches an allreduce 5 s after the others and
# every rank's result is exact under the default NNP_COLL_TIMEOUT_S;
# NNP_COLL_TIMEOUT_S=1 still fails the waiting ranks with PEER_TIMEOUT;
# the ioctl's timeout and transit words are checked raw. nnp_stream_synchronize() waits
# out NNP_COLL_TIMEOUT_S=65, past its old fixed 60 s. nnp_comm_abort() from another
# thread unblocks ranks blocked in an allreduce, the async error says so,
# and a new communicator is exact.
#
# In detail (docs/testing.md has the summary):
# `comm_fault_test`: rank 0 reaches an allreduce 5 s after the others (the
# device's old fixed timeout was 2 s) and every rank's 1 MiB result is
# byte-exact under the default `NNP_COLL_TIMEOUT_S`; with
# `NNP_COLL_TIMEOUT_S=1` the ranks left waiting fail with PEER_TIMEOUT (or
# ABORTED passed on) after 1 s or more; with `NNP_COLL_TIMEOUT_S=65` a
# rank's `nnp_stream_synchronize()` waits 65 to 80 s and returns the
# PEER_TIMEOUT (or ABORTED) failure, not a library timeout at its old fixed
# 60 s; COMM_CREATE with `pad` set is `EINVAL`, with
# `DRM_NNP_COMM_TIMEOUT_NEVER` taken; COMM_CREATE of a transit with a
# rank, one rank, one port twice, a ring or an unknown flag `EINVAL`, a
# good one routed, COMM_STATUS 0, COMM_TOPOLOGY `ENOENT`, fdinfo
# `nnp-comm-ID: -/2`; ranks 1 and 2 blocked (on threads) in
# an allreduce rank 0 never joins, under the default timeout: no async error
# yet, then `nnp_comm_abort()` of rank 1 from another thread returns both
# within 2 s with ABORTED (measured 1 ms and 5 ms), the async error of ranks
# 0 and 2 is `NNP_ERROR_COMM_FAILED` (rank 0 had nothing in flight: the
# abort reaches it all the same); streams reset and a new communicator over
# the same chips give an exact allreduce
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 7
# The 65 s wait runs in a process of its own beside the other cases, on
# communicators of its own over the same chips: it costs the suite its
# 65 s once, not on top of the rest.
long=synchronize_follows_coll_timeout_past_60s
"$root/tools/nnp-vm" --chips 3 --mem-size 16M --fabric ring -- sh -c "
	comm_fault_test -t $long >/tmp/long.out 2>&1 & long=\$!
	comm_fault_test -T $long; rest=\$?
	wait \$long; status=\$?
	cat /tmp/long.out
	[ \$rest = 0 ] && [ \$status = 0 ]" >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "a rank 5 s late: the allreduce exact on every rank" "$out" \
	'^ok [0-9]+ ring\.rank_5s_late_completes_exactly$'
tap_context=$out tap_grep "NNP_COLL_TIMEOUT_S=1 fails the waiting ranks with PEER_TIMEOUT" "$out" \
	'^ok [0-9]+ ring\.short_timeout_fires_peer_timeout$'
tap_context=$out tap_grep "NNP_COLL_TIMEOUT_S=65: synchronize waits 65 s for PEER_TIMEOUT, not 60" "$out" \
	'^ok [0-9]+ ring\.synchronize_follows_coll_timeout_past_60s$'
tap_context=$out tap_grep "COMM_CREATE: pad EINVAL, DRM_NNP_COMM_TIMEOUT_NEVER taken" "$out" \
	'^ok [0-9]+ global\.comm_create_timeout_words$'
tap_context=$out tap_grep "COMM_CREATE of a transit: each wrong word EINVAL, a good one routed, shown -/2" "$out" \
	'^ok [0-9]+ global\.comm_create_transit_words$'
tap_context=$out tap_grep "abort from another thread unblocks blocked ranks; a new communicator exact" "$out" \
	'^ok [0-9]+ ring\.abort_unblocks_blocked_ranks$'
tap_context=$out tap_grep "and the VM exits 0" "$out" '^vm-status=0$'
tap_done
