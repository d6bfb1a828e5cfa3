#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# nnp_comm_shrink() (issue 44): comm_shrink_test on QEMU's full fabric of
# 4 chips, one process, each rank's calls on its own thread. A chip taken
# down mid-job: the survivors' allreduce fails, they shrink without it and
# go on exactly; shrinks live beside their parent and each other; bad
# arguments fail on their rank and leave the parent usable; survivors that
# exclude different sets fail at the new communicator's timeout.
#
# In detail (docs/testing.md has the summary):
# `comm_shrink_test` (`nnp_comm_init_all` parent, 65543 int32 per
# allreduce, inputs tagged per communicator): an exact allreduce on all
# four, then ranks 0-2 waiting in an allreduce chip 3 never joins fail
# COMMAND_FAILED with LINK_DOWN (0x13) or ABORTED (0x15) within 10 s of
# `nnp_device_reset()` of chip 3; their streams reset, they shrink without
# rank 3 (new ranks 0-2, count 3) and two allreduces are exact; parent rank
# 1 left out into one communicator and rank 3 into another, the parent's
# and both children's allreduces queued at once on every chip each exact,
# and rank 1 left out again beside the first (both exact at once); a NULL
# parent, a NULL newcomm, the calling rank listed, a rank listed twice and
# a config 8 bytes too large INVALID_ARGUMENT with their exact last errors
# and newcomm NULL, the parent then exact; ranks 0 and 1 leaving out 3
# while rank 2 leaves out 1, with a 2 s timeout: all three COMM_FAILED
# naming the shrink, between 2 and 17 s, newcomm NULL, the parent then
# exact (about 20 s)
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 5
"$root/tools/nnp-vm" --chips 4 --mem-size 16M --fabric full --timeout 600 \
	-- comm_shrink_test >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "a chip down mid-job: the survivors shrink without it and go on exactly" "$out" \
	'^ok [0-9]+ full\.chip_down_mid_job_survivors_shrink_exactly$'
tap_context=$out tap_grep "shrinks live beside their parent and each other, the same set twice too" "$out" \
	'^ok [0-9]+ full\.shrinks_live_beside_the_parent_and_each_other$'
tap_context=$out tap_grep "bad arguments fail on their rank, the parent still exact" "$out" \
	'^ok [0-9]+ full\.bad_arguments_fail_on_their_rank_and_leave_the_parent$'
tap_context=$out tap_grep "survivors excluding different sets fail at the timeout, the parent still exact" "$out" \
	'^ok [0-9]+ full\.survivors_that_disagree_fail_at_the_timeout$'
tap_context=$out tap_grep "and the VM exits 0" "$out" '^vm-status=0$'
tap_done
