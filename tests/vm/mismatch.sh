#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Mismatched calls fail fast (hardware interface 1.16): mismatch_test on
# rings of 2, 4 and 8 chips, one process driving every chip.
#
# In detail (docs/testing.md has the summary): on each ring rank 1 calls
# an allreduce with another type, op or count than the others, or a
# broadcast instead; a broadcast from another root (on 2 chips both ranks
# think they are the root: both only send, and fail on the chunk they
# never read); an alltoall of another count (on 4 and 8 chips some of its
# chunks cross a relay, as copies that carry their lender's call). Every
# rank's wait returns within 10 s under the default 30-minute timeout; a
# rank that returns NNP_ERROR_MISMATCH names its own call and exactly the
# call of the rank whose chunk it checked (a neighbour's on the ring, which
# sends both ways; for the alltoall any rank whose call differs), the others fail with ABORTED
# passed on (a broadcast's root may end first), and every rank's
# communicator is failed. Then on a ring of 4 with QEMU's call-check off
# on every chip, a type mismatch runs to success on every rank, every
# communicator healthy: the check is what catches it.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 8
for n in 2 4 8; do
	"$root/tools/nnp-vm" --chips "$n" --mem-size 16M --fabric ring \
		-- mismatch_test -T unchecked_type_runs >"$out" 2>&1
	echo "vm-status=$?" >>"$out"
	sed -n "s/^# .*mismatch_test.c:[0-9]*:\([a-z_]*\):\(.*ranks named.*\)/# $n chips, \1: \2/p" "$out"
	tap_context=$out tap_grep "$n chips: every mismatch fails every rank fast, named exactly" \
		"$out" '^# PASSED: 6 / 6 tests passed'
	tap_context=$out tap_grep "$n chips: the VM exits 0" "$out" '^vm-status=0$'
done
"$root/tools/nnp-vm" --chips 4 --mem-size 16M --fabric ring --device-opt call-check=off \
	-- mismatch_test -t unchecked_type_runs >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "4 chips, call-check=off: a type mismatch runs to success, unchecked" \
	"$out" '^# PASSED: 1 / 1 tests passed'
tap_context=$out tap_grep "4 chips, call-check=off: the VM exits 0" "$out" '^vm-status=0$'
tap_done
