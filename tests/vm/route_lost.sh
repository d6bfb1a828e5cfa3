#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A link on a routed message's path lost while nothing is in flight on it
# (hardware 1.23): route_lost_test in a VM of 4 chips on a ring asks for
# each link change with a "LINK nnpN down|up PORT" line and this script
# sets it on the QEMU monitor.
#
# In detail (docs/testing.md has the summary): rank 2 waits in a routed
# receive from rank 0, two hops away (NNP_COLL_TIMEOUT_S=60); the first
# link of the path goes down while rank 0 and the chip between are idle;
# the receive fails COMMAND_FAILED within 10 s, its stream ABORTED (not
# PEER_TIMEOUT), every rank's communicator failed; with the link back up a
# new communicator's allreduce is exact on every rank.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
. "$root/tests/lib/fault_vm.sh"
fault_vm_kselftest 3 200 --chips 4 --mem-size 16M --fabric ring -- route_lost_test
tap_context=$tmp/out tap_grep "a routed receive ends at once when a link of its path goes down idle; every rank fails; a new ring works" \
	"$tmp/out" '^# PASSED: 1 / 1 tests passed'
fault_vm_clean "$tmp"
tap_done
