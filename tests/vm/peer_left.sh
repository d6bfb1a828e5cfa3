#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A rank that goes (hardware 1.20, 1.21): peer_left_test on a ring of 4
# chips, each rank a process. A rank killed while idle fails its peers'
# next allreduce, and a receive from it (routed or by port), within a
# second, not at their timeout; ranks that end in order, each destroying
# its communicator as soon as its own last allreduce is done, all
# succeed.
#
# In detail (docs/testing.md has the summary): `killed_idle_rank`: after
# one exact allreduce rank 3 idles and is killed with SIGKILL once ranks
# 0-2 wait in their second (NNP_COLL_TIMEOUT_S=60); all fail
# COMMAND_FAILED within 1 s of the kill, their streams PEER_LEFT (or
# ABORTED, at least one PEER_LEFT), each device's COMM_FAILED event
# alike; `killed_sender`: rank 1 waits in a routed receive from rank 3
# (two hops) instead, and ranks 0 and 2 call their allreduces 0.2 s after
# the kill: all three PEER_LEFT within 1 s, events "peer_left";
# `killed_neighbour_sender`: rank 0 receives from rank 3 by port: it and
# rank 2 PEER_LEFT, at least two in all; `orderly_end`: 20 exact
# allreduces on every rank, no failure as each leaves. Then
# `killed_sender` again on 4 chips wired full: rank 1's receive from rank
# 3 goes by port over a link off the ring, and still ends PEER_LEFT, as
# do the two allreduces.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp) full=$(mktemp)
trap 'rm -f "$out" "$full"' EXIT
tap_plan 7
"$root/tools/nnp-vm" --chips 4 --mem-size 16M --fabric ring -- peer_left_test >"$out" 2>&1
echo "vm-status=$?" >>"$out"
"$root/tools/nnp-vm" --chips 4 --mem-size 16M --fabric full -- \
	peer_left_test -t killed_sender >"$full" 2>&1
echo "vm-status=$?" >>"$full"
tap_context=$out tap_grep "a rank killed while idle: its peers fail PEER_LEFT within 1 s, not at their 60 s timeout" \
	"$out" '^ok [0-9]+ job\.killed_idle_rank$'
tap_context=$out tap_grep "a routed receive from a rank killed while idle ends PEER_LEFT within 1 s; allreduces called after, at once" \
	"$out" '^ok [0-9]+ job\.killed_sender$'
tap_context=$out tap_grep "a receive by port from it ends PEER_LEFT within 1 s too" \
	"$out" '^ok [0-9]+ job\.killed_neighbour_sender$'
tap_context=$out tap_grep "ranks that leave in order as they finish: every allreduce exact, none fails" \
	"$out" '^ok [0-9]+ job\.orderly_end$'
tap_context=$out tap_grep "and the VM exits 0" "$out" '^vm-status=0$'
tap_context=$full tap_grep "fabric full: a receive by port over a link off the ring ends PEER_LEFT within 1 s, and so do the allreduces" \
	"$full" '^ok [0-9]+ job\.killed_sender$'
tap_context=$full tap_grep "and that VM exits 0" "$full" '^vm-status=0$'
grep -a 'rank [012]: .* after the kill' "$out" "$full" | sed 's/^[^:]*:#* */# /'
tap_done
