#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# ICL links between two QEMU processes over a TCP socket on 127.0.0.1,
# both holding the job's secret: two VMs of one chip each (chip ids 0 and
# 1) see port 0 up towards each other; link-down from one side's monitor
# takes both ends down and link-up from the other side's brings both back;
# when one QEMU goes away the other's port goes down, and a QEMU started in
# its place (the same chip 0) is linked again, once its chip has booted,
# without the surviving guest doing anything; malformed frames from the
# socket are logged and never stop QEMU. Hostile peers: icl_socket_peers.sh.
#
# In detail (docs/testing.md has the summary):
# an ICL link over a TCP socket on 127.0.0.1 (random free port), both ends
# holding the job's secret (`--icl-secret`): `nnptool links --json` shows
# port 0 up in both guests with the other chip as peer; link-down from one
# side's monitor takes both ends down, link-up from the other side's brings
# both back; when one QEMU quits the other's port goes down, and a QEMU
# started on the same address as the same chip is linked again (the
# connecting side retries) once its chip has booted (a paused QEMU's
# chip has not: connected, the port stays down); malformed frames sent to
# the socket, before or after the hello, are logged, drop that connection
# only, and QEMU keeps serving; no QEMU outlives the test
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 8

port=$(free_port)
(umask 077; printf "job-secret-%s" "$$" >"$tmp/secret")

# In each guest: print the ports as JSON each time port 0 of our chip
# changes state, through the phases the host drives.
guest='
state() { nnptool links | awk "\$1 == 0 && \$3 == 0 { print \$4 }"; }
wait_for() {
	for i in $(seq 900); do
		[ "$(state)" = "$1" ] && return 0
		sleep 0.2
	done
	echo "timed out waiting for port 0 to be $1"
	return 1
}
# The other guest loading its driver resets its chip, which takes the
# link down at both ends for a moment: the first "up" is one that lasts
# 2 s.
steady_up() {
	n=0
	for i in $(seq 900); do
		if [ "$(state)" = up ]; then n=$((n + 1)); else n=0; fi
		[ $n -ge 10 ] && return 0
		sleep 0.2
	done
	echo "timed out waiting for port 0 to stay up"
	return 1
}
for phase in up down up2 lost back; do
	case $phase in up*|back) want=up ;; *) want=down ;; esac
	if [ $phase = up ]; then steady_up || exit 1; else wait_for $want || exit 1; fi
	echo "PHASE-$phase $(nnptool links --json)"
	[ -n "${LAST_PHASE:-}" ] && [ "$phase" = "$LAST_PHASE" ] && exit 0
done'

vm=("$root/tools/nnp-vm" --chips 1 --mem-size 16M --timeout 300
	--icl-secret "$tmp/secret")

# wait_phase PHASE FILE...: until every FILE shows PHASE (or 200 s pass)
wait_phase() {
	local phase=$1 f i ok
	shift
	for ((i = 0; i < 1000; i++)); do
		ok=1
		for f in "$@"; do
			grep -q "PHASE-$phase {" "$f" || ok=0
		done
		[ "$ok" = 1 ] && return 0
		sleep 0.2
	done
	return 1
}

# monitor SOCKET COMMAND: one HMP command
monitor() {
	python3 - "$1" "$2" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
time.sleep(0.5)
s.close()
PY
}

# check FILE PHASE CHIP STATE PEER: port 0 of CHIP in that phase's JSON
check() {
	python3 - "$@" <<'PY'
import json, sys
path, phase, chip, state, peer = sys.argv[1:]
tag = "PHASE-%s " % phase
lines = [l[l.index(tag):] for l in open(path) if tag + "{" in l]
if not lines:
    print("# no PHASE-%s in %s" % (phase, path))
    sys.exit(1)
ports = json.loads(lines[0].split(" ", 1)[1])["ports"]
got = {p["port"]: (p["chip"], p["state"], p["peer"]) for p in ports}
want = {0: (int(chip), state, peer), 1: (int(chip), "unwired", "-"),
        2: (int(chip), "unwired", "-"), 3: (int(chip), "unwired", "-")}
if got != want:
    print("# %s %s: got %s, want %s" % (path, phase, got, want))
    sys.exit(1)
PY
}

vm_start a "${vm[@]}" --remote "0.0-1.0=listen:127.0.0.1:$port" --monitor "$tmp/mon-a" \
	--env LAST_PHASE=none -- sh -c "$guest"
vm_start b "${vm[@]}" --chip-base 1 --remote "1.0-0.0=connect:127.0.0.1:$port" \
	--monitor "$tmp/mon-b" --env LAST_PHASE=back -- sh -c "$guest"

wait_phase up "$tmp/a" "$tmp/b"
tap_check "both ends up, each with the other's chip as peer" \
	eval 'check "$tmp/a" up 0 up 1.0 && check "$tmp/b" up 1 up 0.0'

monitor "$tmp/mon-a" "qom-set /machine/peripheral/nnp0 link-down 0"
wait_phase down "$tmp/a" "$tmp/b"
tap_check "link-down on chip 0's monitor: both ends down, peers kept" \
	eval 'check "$tmp/a" down 0 down 1.0 && check "$tmp/b" down 1 down 0.0'

monitor "$tmp/mon-b" "qom-set /machine/peripheral/nnp1 link-up 0"
wait_phase up2 "$tmp/a" "$tmp/b"
tap_check "link-up on chip 1's monitor: both ends up again" \
	eval 'check "$tmp/a" up2 0 up 1.0 && check "$tmp/b" up2 1 up 0.0'

# Chip 0's QEMU goes away: chip 1 sees the link drop.
monitor "$tmp/mon-a" "quit"
wait "$pid_a" 2>/dev/null
wait_phase lost "$tmp/b"
tap_check "the peer's QEMU gone: the port is down" check "$tmp/b" lost 1 down 0.0

# A QEMU without a guest takes its place, as chip 0, paused (-S): its
# virtual clock stands, so its chip never boots after the reset QEMU
# starts with. Chip 1 connects to it but its port stays down, whichever
# came first, the connection or the reset; once the paused QEMU runs, its
# chip boots and the link comes up without the surviving guest doing
# anything.
vm_start c "$root/build/qemu/qemu-system-x86_64" -machine q35 -accel tcg \
	-nodefaults -nographic -S -bios /usr/share/qemu/qboot.rom -L /usr/share/qemu \
	-d guest_errors -D "$tmp/c-log" -trace nnp_icl_link_error \
	-trace nnp_icl_link_state -monitor "unix:$tmp/mon-c,server=on,wait=off" \
	-object "secret,id=icl,file=$tmp/secret" \
	-device "nnp,id=nnp0,chip-id=0,icl-secret=icl,remote=0-1.0:listen:127.0.0.1:$port"
# connected_paused: chip 0 has been connected for 3 s, its chip not up,
# and chip 1's guest, polling all along, never saw the port up
connected_paused() {
	local i seen="connected 1 admin-up 1 chip-up 0"
	for ((i = 0; i < 300; i++)); do
		grep -qs "$seen" "$tmp/c-log" && break
		sleep 0.2
	done
	sleep 3
	grep -qs "$seen" "$tmp/c-log" && ! grep -q "PHASE-back {" "$tmp/b"
}
tap_check "a new peer on the same address, paused: connected, the port stays down" \
	connected_paused
monitor "$tmp/mon-c" cont
wait_phase back "$tmp/b"
tap_check "once that peer runs: linked again" check "$tmp/b" back 1 up 0.0

wait "$pid_b"
status=$?
tap_check "chip 1's VM ends cleanly (driver unloads, no WARN)" [ "$status" = 0 ]

# Whatever comes in on the socket, QEMU logs it, drops that connection and
# serves the next one.
garbage() {
	local peer=(python3 "$root/tests/vm/icl_peer.py") addr=127.0.0.1:$port
	local secret
	secret=$(cat "$tmp/secret")
	"${peer[@]}" raw "$addr" --frame "$(printf '0%.0s' {1..48})" &&
	"${peer[@]}" garbage "$addr" --secret "$secret" \
		--frame 4e49434c0302000000000040000000000000000000000000 &&	# far too long
	"${peer[@]}" garbage "$addr" --secret "$secret" \
		--frame 4e49434c0363000000000000000000000000000000000000 &&	# unknown type
	"${peer[@]}" link "$addr" --secret "$secret"			# and a good one
}
tap_check "malformed frames: logged, connection dropped, QEMU keeps serving" \
	eval 'garbage && kill -0 "$pid_c" &&
		grep -q "not an nnp ICL frame" "$tmp/c-log" &&
		grep -q "longer than the largest packet" "$tmp/c-log" &&
		grep -q "unexpected frame type" "$tmp/c-log"'
if [ "$tap_failed" != 0 ]; then
	for f in a b c c-log; do
		[ -f "$tmp/$f" ] && sed "s/^/# $f: /" "$tmp/$f"
	done
fi
tap_done
