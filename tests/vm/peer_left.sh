#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A rank that goes (hardware 1.20): peer_left_test on a ring of 3 chips,
# each rank a process. A rank killed while idle fails its peers' next
# allreduce, and a receive from it, within a second, not at their
# timeout; ranks that end in order, each destroying its communicator as
# soon as its own last allreduce is done, all succeed.
#
# In detail (docs/testing.md has the summary): `killed_idle_rank`: after
# one exact allreduce rank 2 idles and is killed with SIGKILL once ranks
# 0 and 1 wait in their second (NNP_COLL_TIMEOUT_S=60); both fail
# COMMAND_FAILED within 1 s of the kill, their streams PEER_LEFT (or
# ABORTED, at least one PEER_LEFT), each device's COMM_FAILED event
# alike; `killed_sender`: rank 1 waits in a receive from rank 2 instead,
# and rank 0 calls its allreduce 0.2 s after the kill: both PEER_LEFT
# within 1 s, events "peer_left"; `orderly_end`: 20 exact allreduces on
# every rank, no failure as each leaves
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 4
"$root/tools/nnp-vm" --chips 3 --mem-size 16M --fabric ring -- peer_left_test >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "a rank killed while idle: its peers fail PEER_LEFT within 1 s, not at their 60 s timeout" \
	"$out" '^ok [0-9]+ job\.killed_idle_rank$'
tap_context=$out tap_grep "a receive from a rank killed while idle ends PEER_LEFT within 1 s; an allreduce called after, at once" \
	"$out" '^ok [0-9]+ job\.killed_sender$'
tap_context=$out tap_grep "ranks that leave in order as they finish: every allreduce exact, none fails" \
	"$out" '^ok [0-9]+ job\.orderly_end$'
tap_context=$out tap_grep "and the VM exits 0" "$out" '^vm-status=0$'
grep -a 'rank [01]: .* after the kill' "$out" | sed 's/^#* */# /'
tap_done
