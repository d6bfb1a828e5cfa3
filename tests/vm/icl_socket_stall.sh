#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A peer that stalls costs its own link, not the device. One VM, whose
# chip 0 listens on port 0 (a unix socket) for tests/vm/icl_peer.py, runs
# tests/guest/icl_stall_test.c: first against a peer that links and then
# reads nothing ("wedge"), a 16 MiB SEND fills the socket and its queue is
# destroyed while a frame waits; then against a peer that shares memory
# and keeps every chunk lent to it ("hoard"), an allreduce lends it chunks
# and waits for the peer's part, and its queue is destroyed. Either way
# QUEUE_DESTROY, an admin command (past the driver's 5 s admin timeout
# the whole device is reset), returns within 1 s, the device is not
# reset, the port stays wired but goes down, the peer is dropped, and
# QEMU logs why.
#
# In detail (docs/testing.md has the summary):
# a peer that stalls costs its own link, not the device (`icl_stall_test` in
# the guest, raw queue commands on a communicator of 2 ranks on port 0):
# against a peer that links and then reads nothing, a 16 MiB SEND fills the
# socket and QUEUE_DESTROY, 100 ms later while a frame waits, returns within
# 1 s (the driver resets the device past its 5 s admin timeout); against a
# peer sharing memory that keeps every LENT chunk and ignores RECLAIM, an
# allreduce lends it chunks and waits, and QUEUE_DESTROY returns within 1 s;
# each time the reset count is unchanged, port 0 goes down within 2 s and
# stays wired, the peer sees the connection shut (the first with frames left
# unread, the second after being lent chunks and asked once for them back),
# and QEMU logs `the peer took no whole frame in 250 ms, or left` and `the
# peer did not give lent chunks back in time`
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 6

secret=job-secret-$$
(umask 077; printf '%s' "$secret" >"$tmp/secret")
addr=unix:$tmp/icl
peer=(python3 "$root/tests/vm/icl_peer.py")

vm_start vm "$root/tools/nnp-vm" --chips 1 --mem-size 64M --timeout 300 \
	--icl-secret "$tmp/secret" --remote "0.0-1.0=listen:$addr" \
	--qemu-log "$tmp/log" --qemu-arg -trace --qemu-arg nnp_icl_link_error \
	-- sh -c 'rc=0
		icl_stall_test -t send_to_peer_that_never_reads || rc=1
		icl_stall_test -t lent_chunks_never_given_back || rc=1
		exit $rc'
for scenario in wedge hoard; do
	"${peer[@]}" "$scenario" "$addr" --secret "$secret" --within 120 \
		>"$tmp/$scenario" 2>&1
	echo "status=$?" >>"$tmp/$scenario"
done
wait "$pid_vm"
echo "vm-status=$?" >>"$tmp/vm"

tap_context=$tmp/vm tap_grep "a peer that reads nothing: QUEUE_DESTROY within 1 s, no reset, the link down" \
	"$tmp/vm" '^ok [0-9]+ stalled\.send_to_peer_that_never_reads$'
tap_context=$tmp/wedge tap_check "and that peer was dropped" \
	grep -qx 'status=0' "$tmp/wedge"
tap_context=$tmp/vm tap_grep "a peer keeping lent chunks: QUEUE_DESTROY within 1 s, no reset, the link down" \
	"$tmp/vm" '^ok [0-9]+ stalled\.lent_chunks_never_given_back$'
tap_context=$tmp/hoard tap_check "and that peer was lent chunks, asked for them, and dropped" \
	grep -qx 'status=0' "$tmp/hoard"
tap_context=$tmp/log tap_check "QEMU logged why it dropped each peer" eval '
	grep -q "the peer took no whole frame in 250 ms, or left" "$tmp/log" &&
	grep -q "the peer did not give lent chunks back in time" "$tmp/log"'
tap_context=$tmp/vm tap_grep "and the VM exits 0" "$tmp/vm" '^vm-status=0$'
for f in vm wedge hoard; do
	sed "s/^/# $f: /" "$tmp/$f" | grep -E 'took|later|dropped|kept|lent|not ok|icl_peer' | head -20
done
tap_done
