#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Hostile and broken peers on an ICL socket link, against a bare QEMU (no
# guest) whose chip 0 listens on port 0 for chip 1's port 0: a wrong secret
# and a wrong chip are refused and logged; a peer that sends one byte and
# stalls, or nothing at all, is dropped within the hello timeout; random
# bytes or a hello announcing 4 GiB are dropped at once; a linked peer that
# cuts a frame short is dropped within the frame timeout; a peer that never
# reads does not hold up the monitor's link-down; strangers that connect
# and say nothing (one, or enough to fill every pending hello) do not
# hold up a real peer connecting meanwhile, which links within 1 s; after
# each of them QEMU still serves the monitor and a real peer still links.
# Peers that share memory (a unix socket, as QEMUs on one host): a sealed
# memfd of the size offered, all allocated, is mapped, and QEMU's own
# comes read-only and sealed, so that the peer writes it through no
# descriptor (a re-open of /proc/self/fd/N read-write, pwrite, a writable
# mapping: EPERM); an unsealed one, a sparse one, one larger than offered,
# or none is refused unmapped, and a peer announcing more memory than
# QEMU's own is refused before QEMU sends its own; a LENT frame past the
# end of the peer's memory or wrapping past 2^64, and a GIVE_BACK of a tag
# never lent, drop the connection.
#
# In detail (docs/testing.md has the summary):
# a real peer with the secret links and gets the monitor's link-down as a
# LINK_DOWN frame; a wrong secret, the right secret as the wrong chip, and a
# peer expecting another chip are each refused (dropped within 5 s, logged);
# a peer that sends 1 byte of hello and stalls, or connects and sends
# nothing, is dropped within 8 s; a stranger that connects and says nothing,
# and 8 that fill every pending hello, do not hold up a real peer connecting
# meanwhile: its AUTH comes within 1 s and each stranger is dropped within 1
# s after; 4 KiB of random bytes, or a hello header announcing 4 GiB,
# dropped within 2 s (logged); a linked peer that sends a DATA header
# promising 1000 bytes and 10 of them is dropped within 8 s; a peer that
# links and never reads does not hold up the monitor: 300 link-down/link-up
# pairs each return within 1 s and the monitor answers after; peers that
# share memory (as a QEMU on the same host): one that passes a sealed memfd
# of the 1 MiB its hello offered, all allocated, is linked and its memory
# mapped (`nnp_icl_shared`), and QEMU's own memory reaches it read-only,
# mode 0400 and sealed (256 MiB): a re-open of `/proc/self/fd/N` read-write
# (as root), then `pwrite` and a writable shared mapping through it each
# fail with EPERM; an unsealed memfd, a sealed one with no page allocated,
# one of 2 MiB, and a SHARE without a descriptor are each refused unmapped
# within 2 s; a peer announcing 512 MiB, more than QEMU's 256 MiB, is
# dropped within 2 s before QEMU sends its memory; a LENT chunk 8 bytes past
# the peer's memory, one whose offset + length wraps past 2^64, and a
# GIVE_BACK of a tag never lent each drop the connection within 2 s, every
# reason logged and no chunk delivered; after each hostile peer QEMU is
# alive and a real peer links
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 25

secret=job-secret-$$
peer=(python3 "$root/tests/vm/icl_peer.py")
addr=unix:$tmp/icl

vm_start qemu "$root/build/qemu/qemu-system-x86_64" -machine q35 -accel tcg \
	-nodefaults -nographic -S -bios /usr/share/qemu/qboot.rom -L /usr/share/qemu \
	-d guest_errors -D "$tmp/log" -trace nnp_icl_link_error \
	-trace nnp_icl_shared -trace nnp_icl_rx_lent \
	-monitor "unix:$tmp/mon,server=on,wait=off" \
	-object "secret,id=icl,data=$secret" \
	-device "nnp,id=nnp0,chip-id=0,icl-secret=icl,remote=0-1.0:listen:$addr"

# peer_then_real SCENARIO ARGS...: the peer got what it wanted, QEMU is
# alive, and a real peer links (and hears the monitor's link-down)
peer_then_real() {
	"${peer[@]}" "$1" "$addr" "${@:2}" >>"$tmp/peer" 2>&1 &&
		kill -0 "$pid_qemu" &&
		"${peer[@]}" link "$addr" --secret "$secret" --monitor "$tmp/mon" \
			>>"$tmp/peer" 2>&1
}

# peer_ok NAME SCENARIO ARGS...
peer_ok() {
	tap_check "$1" peer_then_real "${@:2}"
}

peer_ok "a real peer links; the monitor's link-down reaches it" \
	link --secret "$secret" --monitor "$tmp/mon"
peer_ok "a wrong secret is refused; QEMU serves the next peer" \
	refused --secret wrong-secret --within 5
peer_ok "the right secret as the wrong chip is refused" \
	refused --secret "$secret" --chip 5 --within 5
peer_ok "a peer expecting another chip is refused" \
	refused --secret "$secret" --want-chip 3 --within 5
peer_ok "1 byte of hello, then nothing: dropped within 8 s" stall --within 8
peer_ok "connects and says nothing: dropped within 8 s" silent --within 8
peer_ok "4 KiB of random bytes instead of a hello: dropped within 2 s" \
	raw --frame "$(head -c 4096 /dev/urandom | od -An -v -tx1 | tr -d ' \n')" --within 2
# A hello header (magic, version 3, type 1) announcing 0xffffffff bytes.
peer_ok "a hello announcing 4 GiB: dropped within 2 s, nothing read or kept" \
	raw --frame 4e49434c03010000ffffffff000000000000000000000000 --within 2
peer_ok "linked, then a frame cut short: dropped within 8 s" \
	truncated --secret "$secret" --within 8
peer_ok "a stranger says nothing; a real peer connecting meanwhile links within 1 s" \
	squat --secret "$secret" --strangers 1 --within 1
peer_ok "8 strangers fill every pending hello; a real peer still links within 1 s" \
	squat --secret "$secret" --strangers 8 --within 1
peer_ok "a peer that never reads: 300 link-down/up each return within 1 s" \
	no-read --secret "$secret" --monitor "$tmp/mon" --toggles 300 --within 1
# frame_hex TYPE PAYLOAD_HEX: a version 3 frame with that payload
frame_hex() {
	python3 -c 'import struct, sys
p = bytes.fromhex(sys.argv[2])
print((struct.pack("<IBBHIIQ", 0x4C43494E, 3, int(sys.argv[1]), 0, len(p), 0, 0) + p).hex())' "$@"
}
# lent_hex OFFSET LEN: a LENT frame naming that chunk, tag 0
lent_hex() {
	frame_hex 8 "$(python3 -c 'import struct, sys
print(struct.pack("<QII", int(sys.argv[1], 0), int(sys.argv[2], 0), 0).hex())' "$1" "$2")"
}

share=(share --secret "$secret" --mem-shift 20)
peer_ok "a peer sharing a sealed memfd of the 1 MiB offered is linked" \
	"${share[@]}" --memfd sealed
tap_grep "QEMU gave it its 256 MiB read-only and sealed: no re-open, pwrite or mapping writes it" "$tmp/peer" \
	'^QEMU shares 268435456 bytes, read-only, sealed$'
tap_grep "QEMU mapped the peer's 1 MiB" "$tmp/log" \
	"nnp_icl_shared chip 0 port 0 maps the peer's 1048576 bytes"
peer_ok "an unsealed memfd is refused: dropped within 2 s" \
	"${share[@]}" --memfd unsealed --within 2
peer_ok "a sealed memfd with none of its pages allocated is refused" \
	"${share[@]}" --memfd sparse --within 2
peer_ok "a peer announcing 512 MiB, more than QEMU's 256 MiB, is refused unshared" \
	oversize --secret "$secret" --mem-shift 29 --within 2
peer_ok "a memfd of 2 MiB when 1 MiB was offered is refused" \
	"${share[@]}" --memfd large --within 2
peer_ok "SHARE without a descriptor is refused" \
	"${share[@]}" --memfd none --within 2
peer_ok "a LENT chunk 8 bytes past the peer's memory: dropped within 2 s" \
	"${share[@]}" --send "$(lent_hex 0xffff8 16)" --within 2
peer_ok "a LENT chunk whose offset + length wraps past 2^64: dropped" \
	"${share[@]}" --send "$(lent_hex 0xfffffffffffffff8 16)" --within 2
peer_ok "a GIVE_BACK of a tag never lent: dropped" \
	"${share[@]}" --send "$(frame_hex 9 45230100)" --within 2
tap_check "each sharing refusal logged; no refused chunk delivered" eval '
	grep -q "not sealed against shrinking, growing, writes and new seals" "$tmp/log" &&
	grep -q "the peer.s memory is not all allocated" "$tmp/log" &&
	grep -q "the peer offers to share more memory than ours" "$tmp/log" &&
	grep -q "not the size its hello announced" "$tmp/log" &&
	grep -q "SHARE came without its memory" "$tmp/log" &&
	test "$(grep -c "lent chunk outside the peer.s memory" "$tmp/log")" = 2 &&
	grep -q "gave back a chunk it does not hold" "$tmp/log" &&
	! grep -q nnp_icl_rx_lent "$tmp/log"'
tap_check "each refusal and timeout logged" eval '
	grep -q "failed authentication" "$tmp/log" &&
	grep -q "the peer is chip 5 port 0 linking to chip 0 port 0" "$tmp/log" &&
	grep -q "linking to chip 3 port 0, not chip 1 port 0" "$tmp/log" &&
	grep -q "no whole frame in time" "$tmp/log" &&
	grep -q "not an nnp ICL frame" "$tmp/log" &&
	grep -q "frame longer than the largest packet" "$tmp/log"'
if [ "$tap_failed" != 0 ]; then
	sed 's/^/# peer: /' "$tmp/peer"
	sed 's/^/# qemu: /' "$tmp/log" "$tmp/qemu"
fi
tap_done
