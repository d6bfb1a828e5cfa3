#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The view of every communicator (issue 46, item 1): comms_view_test in a
# two-chip ring.
#
# In detail (docs/testing.md has the summary): rank 0 calls its second
# allreduce and rank 1 does not. Rank 0's communicator, as its device
# lists it, names this process, rank 0 of 2, the epoch rank 1 has, 2
# collectives started and 1 done, its bytes, the allreduce in flight (f32,
# max, count) and the port to chip 1 and rank 1 it waits on, for 0.3 to
# 60 s; rank 1's says 1 of 1 done, nothing in flight. nnptool comms and
# its JSON print the same. Once rank 1 calls, both say 2 of 2. User 65534
# sees none of them, only counts them, by the query and by nnptool comms
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
. "$root/tests/lib/fault_vm.sh"
fault_vm_kselftest 3 240 --chips 2 --mem-size 64M --fabric ring -- comms_view_test
tap_context=$tmp/out tap_grep "the late rank named by its peer's communicator, others' only counted" \
	"$tmp/out" '^# PASSED: 2 / 2 tests passed'
fault_vm_clean "$tmp"
tap_done
