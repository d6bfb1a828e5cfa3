#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The ICL fabric of one QEMU: ring, torus and full topologies wire the
# ports nnptool links reports; a link taken down from the QEMU monitor
# shows down on both ends; a fabric that does not fit is refused cleanly.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tap_plan 5

# links_json TOPOLOGY CHIPS: nnptool links --json of a VM with that fabric
links_json() {
	"$root/tools/nnp-vm" --chips "$2" --mem-size 16M --fabric "$1" -- \
		nnptool links --json >"$tmp/out" 2>&1
	grep '^{"ports"' "$tmp/out"
}

# check TOPOLOGY CHIPS PYTHON-EXPR-over-(port)->(state, peer): every port
check() {
	links_json "$1" "$2" >"$tmp/json" || { sed 's/^/# /' "$tmp/out"; return 1; }
	python3 - "$tmp/json" "$2" "$3" <<'PY'
import json, sys
ports = json.load(open(sys.argv[1]))["ports"]
n = int(sys.argv[2])
want = eval(sys.argv[3])
got = {(p["chip"], p["port"]): (p["state"], p["peer"]) for p in ports}
exp = {(c, q): want(c, q) for c in range(n) for q in range(4)}
if got != exp:
    for k in sorted(exp):
        if got.get(k) != exp[k]:
            print("# chip %d port %d: got %s, want %s" % (k + (got.get(k), exp[k])))
    sys.exit(1)
PY
}

tap_check "ring of 4: port 0 to the next chip's port 1" check ring 4 \
	'lambda c, q: ("up", "%d.1" % ((c + 1) % 4)) if q == 0 else ("up", "%d.0" % ((c + 3) % 4)) if q == 1 else ("unwired", "-")'
tap_check "torus 2x2: east on ports 0/1, south on ports 2/3" check torus:2x2 4 \
	'lambda c, q: ("up", "%d.%d" % ((c ^ 1) if q < 2 else (c ^ 2), q ^ 1))'
tap_check "full mesh of 4: chip i reaches chip j on port j or j-1" check full 4 \
	'lambda c, q: ("up", "%d.%d" % ((q if q < c else q + 1), (c if c < (q if q < c else q + 1) else c - 1))) if q < 3 else ("unwired", "-")'

# A link taken down from the monitor while the guest watches.
"$root/tools/nnp-vm" --chips 2 --mem-size 16M --fabric ring --monitor "$tmp/mon" -- sh -c '
	for i in $(seq 100); do
		nnptool links | awk "\$1 == 0 && \$3 == 0 { print \$4 }" | grep -q down && break
		sleep 0.2
	done
	nnptool links --json' >"$tmp/down" 2>&1 &
vm=$!
python3 - "$tmp/mon" <<'PY'
import os, socket, sys, time
path = sys.argv[1]
for _ in range(300):
    if os.path.exists(path):
        break
    time.sleep(0.1)
time.sleep(8)	# the guest has booted and loaded the driver by now
s = socket.socket(socket.AF_UNIX)
s.connect(path)
s.sendall(b"qom-set /machine/peripheral/nnp0 link-down 0\n")
time.sleep(1)
s.close()
PY
wait $vm
tap_check "monitor link-down shows down on both ends" python3 - "$tmp/down" <<'PY'
import json, sys
line = [l for l in open(sys.argv[1]) if l.startswith('{"ports"')][0]
st = {(p["chip"], p["port"]): p["state"] for p in json.loads(line)["ports"]}
assert st[(0, 0)] == "down" and st[(1, 1)] == "down", st
assert st[(0, 1)] == "up" and st[(1, 0)] == "up", st
PY

"$root/tools/nnp-vm" --chips 4 --fabric torus:3x3 -- true >"$tmp/bad" 2>&1
echo "status=$?" >>"$tmp/bad"
tap_check "a torus that does not fit is refused with a clear error" sh -c \
	"grep -q 'nnp fabric: 3x3 grid for 4 chips' $tmp/bad && ! grep -q '^status=0$' $tmp/bad"
tap_done
