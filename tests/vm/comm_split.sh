#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nnp_comm_split() (issue 26): comm_split_test on a 2x2 torus of 4 chips,
# one process, each rank splitting on its own thread. Rows and columns
# allreduce exactly; keys order the new ranks; NNP_SPLIT_NOCOLOR and a
# NULL newcomm get none; a diagonal (no link) crosses a chip of another
# color as a transit (driver 1.12) and allreduces and messages exactly,
# as do both diagonals at once, and fails (not hangs) once the transit's
# parent is gone; the parent still exact; a child outlives its destroyed parent and aborted sibling;
# a rank whose device has no communicator left fails its row (the other
# rank told COMM_FAILED naming it) and not the other row;
# allreduces of the parent, its column and its row in flight together on
# every chip never mix.
#
# In detail (docs/testing.md has the summary):
# `comm_split_test` (one process, `nnp_comm_init_all` parent, each rank
# splitting on a thread): rows then columns each allreduce 65543 int32
# exactly (the sum of their own two members' inputs), new ranks and sizes
# exact; keys 3, 2, 1, 0 make parent rank 3 new rank 0 (a broadcast from it
# carries its bytes to all four) and the allreduce over the found ring is
# exact; `NNP_SPLIT_NOCOLOR` gets NULL and success, a NULL newcomm
# `NNP_ERROR_INVALID_ARGUMENT` with its exact last error, and the other two
# allreduce exactly; colors 0, 1, 2, 0: the diagonal 0-3 a communicator
# of two over a transit chip, its allreduce of 65543 int32 exact and a
# message of as many each way byte-exact, ranks 1 and 2 communicators of
# one, the parent's allreduce still exact; colors 0, 1, 1, 0: both
# diagonals' allreduces queued together, each exact; the diagonal again
# with parent ranks 1 and 2 destroyed: its next allreduce fails on both
# ranks, async error `NNP_ERROR_COMM_FAILED`; a
# row's communicator aborted and the parent destroyed, the other row still
# exact, and a row made again from a new parent exact; device 0 filled with
# communicators until refused: rank 0 fails, rank 1 gets
# `NNP_ERROR_COMM_FAILED` and the exact last error naming rank 0 and its
# result, the other row is exact, and with one communicator given back all
# rows are made; rows and columns alive at once, and the parent's, the
# column's and the row's allreduce queued together on every chip (three
# streams, three rounds): every result its own members' exact sum (about 20
# s)
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 10
"$root/tools/nnp-vm" --chips 4 --mem-size 16M --fabric torus:2x2 --timeout 600 \
	-- comm_split_test >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "rows and columns: each allreduces its own members exactly" "$out" \
	'^ok [0-9]+ torus\.rows_and_columns_allreduce_exactly$'
tap_context=$out tap_grep "keys 3,2,1,0: parent rank 3 is new rank 0 (broadcast), allreduce exact" "$out" \
	'^ok [0-9]+ torus\.keys_order_the_new_ranks$'
tap_context=$out tap_grep "NOCOLOR gets NULL, a NULL newcomm INVALID_ARGUMENT, the rest go on" "$out" \
	'^ok [0-9]+ torus\.nocolor_and_null_newcomm_get_none$'
tap_context=$out tap_grep "a diagonal crosses a transit: allreduce and messages exact, the parent still exact" "$out" \
	'^ok [0-9]+ torus\.a_diagonal_crosses_a_transit$'
tap_context=$out tap_grep "both diagonals, each crossing the other's chips, at once: both exact" "$out" \
	'^ok [0-9]+ torus\.both_diagonals_cross_each_other$'
tap_context=$out tap_grep "the transit's parent destroyed: the diagonal's allreduce fails, not hangs" "$out" \
	'^ok [0-9]+ torus\.a_transit_ending_fails_its_ring$'
tap_context=$out tap_grep "a child outlives its destroyed parent and aborted sibling" "$out" \
	'^ok [0-9]+ torus\.child_outlives_parent_and_sibling$'
tap_context=$out tap_grep "a member that cannot make its part: its group fails as one, the other row exact" "$out" \
	'^ok [0-9]+ torus\.a_member_that_cannot_make_its_part_fails_its_group$'
tap_context=$out tap_grep "parent, column and row in flight at once on every chip: every sum exact" "$out" \
	'^ok [0-9]+ torus\.parent_and_children_at_once_never_mix$'
tap_context=$out tap_grep "and the VM exits 0" "$out" '^vm-status=0$'
tap_done
