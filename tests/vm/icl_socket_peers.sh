#!/usr/bin/env bash
# Hostile and broken peers on an ICL socket link, against a bare QEMU (no
# guest) whose chip 0 listens on port 0 for chip 1's port 0: a wrong secret
# and a wrong chip are refused and logged; a peer that sends one byte and
# stalls, or nothing at all, is dropped within the hello timeout; random
# bytes or a hello announcing 4 GiB are dropped at once; a linked peer that
# cuts a frame short is dropped within the frame timeout; a peer that never
# reads does not hold up the monitor's link-down; after each of them QEMU
# still serves the monitor and a real peer still links.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 11

secret=job-secret-$$
peer=(python3 "$root/tests/vm/icl_peer.py")
addr=unix:$tmp/icl

vm_start qemu "$root/build/qemu/qemu-system-x86_64" -machine q35 -accel tcg \
	-nodefaults -nographic -S -bios /usr/share/qemu/qboot.rom -L /usr/share/qemu \
	-d guest_errors -D "$tmp/log" -trace nnp_icl_link_error \
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
peer_ok "a peer that never reads: 300 link-down/up each return within 1 s" \
	no-read --secret "$secret" --monitor "$tmp/mon" --toggles 300 --within 1
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
