#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Communicator faults: comm_fault_test on a ring of 3 chips. A late peer
# is not a dead peer: rank 0 reaches an allreduce 5 s after the others and
# every rank's result is exact under the default NNP_COLL_TIMEOUT_S;
# NNP_COLL_TIMEOUT_S=1 still fails the waiting ranks with PEER_TIMEOUT;
# the ioctl's timeout words are checked raw. nnp_stream_synchronize() waits
# out NNP_COLL_TIMEOUT_S=65, past its old fixed 60 s. nnp_comm_abort() from another
# thread unblocks ranks blocked in an allreduce, the async error says so,
# and a new communicator is exact.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 6
"$root/tools/nnp-vm" --chips 3 --mem-size 16M --fabric ring -- comm_fault_test >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "a rank 5 s late: the allreduce exact on every rank" "$out" \
	'^ok [0-9]+ ring\.rank_5s_late_completes_exactly$'
tap_context=$out tap_grep "NNP_COLL_TIMEOUT_S=1 fails the waiting ranks with PEER_TIMEOUT" "$out" \
	'^ok [0-9]+ ring\.short_timeout_fires_peer_timeout$'
tap_context=$out tap_grep "NNP_COLL_TIMEOUT_S=65: synchronize waits 65 s for PEER_TIMEOUT, not 60" "$out" \
	'^ok [0-9]+ ring\.synchronize_follows_coll_timeout_past_60s$'
tap_context=$out tap_grep "COMM_CREATE: pad EINVAL, DRM_NNP_COMM_TIMEOUT_NEVER taken" "$out" \
	'^ok [0-9]+ global\.comm_create_timeout_words$'
tap_context=$out tap_grep "abort from another thread unblocks blocked ranks; a new communicator exact" "$out" \
	'^ok [0-9]+ ring\.abort_unblocks_blocked_ranks$'
tap_context=$out tap_grep "and the VM exits 0" "$out" '^vm-status=0$'
tap_done
