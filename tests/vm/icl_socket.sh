#!/usr/bin/env bash
# ICL links between two QEMU processes over a TCP socket on 127.0.0.1:
# two VMs of one chip each (chip ids 0 and 1) see port 0 up towards each
# other; link-down from one side's monitor takes both ends down and
# link-up from the other side's brings both back; when one QEMU goes away
# the other's port goes down, and a QEMU started in its place (as chip 2)
# is linked again without the surviving guest doing anything; malformed
# frames from the socket are logged and never stop QEMU.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 7

port=$(free_port)

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
for phase in up down up2 lost back; do
	case $phase in up*|back) want=up ;; *) want=down ;; esac
	wait_for $want || exit 1
	echo "PHASE-$phase $(nnptool links --json)"
	[ -n "${LAST_PHASE:-}" ] && [ "$phase" = "$LAST_PHASE" ] && exit 0
done'

vm=("$root/tools/nnp-vm" --chips 1 --mem-size 16M --timeout 300)

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

vm_start a "${vm[@]}" --remote "0.0=listen:127.0.0.1:$port" --monitor "$tmp/mon-a" \
	--env LAST_PHASE=none -- sh -c "$guest"
vm_start b "${vm[@]}" --chip-base 1 --remote "1.0=connect:127.0.0.1:$port" \
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

# A QEMU without a guest takes its place, as chip 2: chip 1 reconnects.
vm_start c "$root/build/qemu/qemu-system-x86_64" -machine q35 -accel tcg \
	-nodefaults -nographic -S -bios /usr/share/qemu/qboot.rom -L /usr/share/qemu \
	-d guest_errors -D "$tmp/c-log" \
	-device "nnp,id=nnp2,chip-id=2,remote=0:listen:127.0.0.1:$port"
wait_phase back "$tmp/b"
tap_check "a new peer on the same address: linked again, to chip 2" \
	check "$tmp/b" back 1 up 2.0

wait "$pid_b"
status=$?
tap_check "chip 1's VM ends cleanly (driver unloads, no WARN)" [ "$status" = 0 ]

# Whatever comes in on the socket, QEMU logs it, drops that connection and
# serves the next one.
garbage() {
	python3 - "$port" <<'PY'
import socket, struct, sys
port = int(sys.argv[1])
hdr = struct.Struct("<IBBHIIQ")
magic = 0x4c43494e


def talk(data):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(data)
    got = b""
    while len(got) < hdr.size + 8:
        c = s.recv(4096)
        if not c:
            break
        got += c
    s.close()
    return got


hello = hdr.pack(magic, 2, 1, 0, 8, 0, 0) + struct.pack("<IHBB", 9, 3, 1, 0)
talk(b"\0" * hdr.size)                                  # not a frame
talk(hello + hdr.pack(magic, 2, 2, 0, 1 << 30, 0, 0))  # far too long
talk(hello + hdr.pack(magic, 2, 99, 0, 0, 0, 0))       # unknown type
got = talk(hello)                                      # and a good one
m, v, t, _, n, _, _ = hdr.unpack(got[:hdr.size])
chip, p, up, _ = struct.unpack("<IHBB", got[hdr.size:hdr.size + 8])
assert (m, v, t, n, chip, p) == (magic, 2, 1, 8, 2, 0), (m, v, t, n, chip, p)
PY
}
tap_check "malformed frames: logged, connection dropped, QEMU keeps serving" \
	eval 'garbage && kill -0 "$pid_c" &&
		grep -q "not an nnp ICL frame" "$tmp/c-log" &&
		grep -q "longer than the largest packet" "$tmp/c-log" &&
		grep -q "unexpected frame type" "$tmp/c-log"'
if [ "$tap_failed" != 0 ]; then
	for f in a b c; do
		[ -f "$tmp/$f" ] && sed "s/^/# $f: /" "$tmp/$f"
	done
fi
tap_done
