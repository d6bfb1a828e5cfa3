#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Placing a job on adjacent chips (issue 29 item 4): `nnptool topo --pick`
# in a VM of 8 chips wired as QEMU's torus:4x2, with the link from chip 1
# east to chip 2 taken down from the monitor before the guest looks. Then
# a job launched on the chips it picked (NNP_VISIBLE_DEVICES) moves its
# bytes over exactly the ring it promised.
#
# In detail (docs/testing.md has the summary):
# the guest sees chip 1's port 0 down; `--pick 4` prints `0,1,5,4` (around
# the link down); `--pick 4 --free 1,2,3,5,6,7` prints `2,3,7,6`; `--json`
# of it is exactly {"shape": "ring", "rows": 1, "cols": 4, "devices": [2,
# 3, 7, 6]}; `--pick 2x4` fails (exit 1) with "nnptool: topo: no 2x4 torus
# among the 8 free chips: ... (the chips are not connected by a usable
# inter-chip link)";
# `--pick 2x4` with the link back up is every chip row by row, `--pick
# 4x2` the same turned; `--pick 9` fails "9 chips asked for, 8 free";
# `--free 1,1` "free device 1 is listed twice", `--free 0,8` "free device 8
# is not one of the 8 devices"; `--pick 0`, `--pick 2x`, `--free 1,x` and `--free` without
# `--pick` exit 2; then 64 KiB allreduces (NNP_ALGO=ring) on the devices
# `--pick 4 --free 1,2,3,5,6,7` gave: each of chips 2, 3, 7, 6 sends
# exactly 6 x 2 x 3/4 x 65536 bytes, all on the one port whose peer is
# the next chip of that ring, and no other port of any chip moves a byte
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

guest='
sec() { echo "=== $1"; }
run() { "$@"; echo "status=$?"; }
p=/sys/class/accel/accel1/device/port0/state
echo "LINK nnp1 down 0"
for i in $(seq 200); do [ "$(cat $p)" = down ] && break; sleep 0.05; done
sec down; cat $p
sec pick4; run nnptool topo --pick 4
sec pick4-free; run nnptool topo --pick 4 --free 1,2,3,5,6,7
sec pick4-json; run nnptool topo --pick 4 --free 1,2,3,5,6,7 --json
sec torus-down; run nnptool topo --pick 2x4 2>&1
sec too-many; run nnptool topo --pick 9 2>&1
sec twice; run nnptool topo --pick 2 --free 1,1 2>&1
run nnptool topo --pick 2 --free 0,8 2>&1
sec usage
for a in "--pick 0" "--pick 2x" "--pick 4 --free 1,x" "--free 1"; do
	nnptool topo $a >/dev/null 2>&1; echo "$a~$?"
done
sec job
picked=$(nnptool topo --pick 4 --free 1,2,3,5,6,7)
nnptool links --json
NNP_VISIBLE_DEVICES=$picked NNP_ALGO=ring run nnptool bench allreduce \
	--min 64K --max 64K --iters 2 --trials 1 --json
nnptool links --json
echo "LINK nnp1 up 0"
sec up
for i in $(seq 200); do [ "$(cat $p)" = up ] && break; sleep 0.05; done
cat $p
run nnptool topo --pick 2x4
run nnptool topo --pick 4x2
echo PLACEMENT-END
'
"$root/tools/nnp-vm" --chips 8 --fabric torus:4x2 --mem-size 16M --timeout 300 \
	--monitor "$tmp/mon" -- sh -c "$guest" >"$tmp/out" 2>&1 &
vm=$!
python3 "$root/tests/lib/fault_host.py" "$tmp/mon" "$tmp/out" PLACEMENT-END 240 >"$tmp/host" 2>&1
host=$?
wait $vm
echo "vm-status=$?" >>"$tmp/out"
python3 - "$tmp/out" "$host" "$root/tests/lib" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[3])
from tap import check, done, sections
out = open(sys.argv[1]).read()
secs = sections(out)

def lines(sec):
    return secs[sec].splitlines()

nopath = "(the chips are not connected by a usable inter-chip link)"
check("the host took chip 1's port 0 down, later up", lambda: sys.argv[2] == "0")
check("the guest sees the link down", lambda: lines("down") == ["down"])
check("--pick 4: a ring around the link down",
      lambda: lines("pick4") == ["0,1,5,4", "status=0"])
check("--pick 4 --free 1,2,3,5,6,7: the ring of the free chips",
      lambda: lines("pick4-free") == ["2,3,7,6", "status=0"])
check("--pick 4 --json: exactly the shape and the devices",
      lambda: [json.loads(lines("pick4-json")[0]), lines("pick4-json")[1]] ==
      [{"shape": "ring", "rows": 1, "cols": 4, "devices": [2, 3, 7, 6]}, "status=0"])
check("--pick 2x4 with a link down: no torus, said, exit 1",
      lambda: lines("torus-down") == [
          "nnptool: topo: no 2x4 torus among the 8 free chips: their links that are up "
          "join 8 of them, but not as one (each row and column a ring; one of 2 chips "
          "needs two links) " + nopath, "status=1"])
check("--pick 9 of 8: said, exit 1",
      lambda: lines("too-many") == [
          "nnptool: topo: 9 chips asked for, 8 free (no such nnp device)", "status=1"])
check("--free 1,1 and --free 8: said, exit 1",
      lambda: lines("twice") == [
          "nnptool: topo: free device 1 is listed twice (invalid argument)", "status=1",
          "nnptool: topo: free device 8 is not one of the 8 devices (invalid argument)",
          "status=1"])
check("--pick 0, 2x, --free 1,x and --free alone exit 2",
      lambda: lines("usage") == ["--pick 0~2", "--pick 2x~2", "--pick 4 --free 1,x~2",
                                 "--free 1~2"])

def job():
    body = [l for l in lines("job") if l.startswith(("{", "status="))]
    before, bench, status, after = body
    assert status == "status=0", status
    b = json.loads(bench)
    assert (b["devices"], b["wrong"], b["passed"]) == (4, 0, True), b
    ring = [2, 3, 7, 6]
    # 2 passes x (1 warm-up + 2 iterations) allreduces of 64 KiB on 4 chips.
    per_chip = 6 * 2 * 3 * 65536 // 4
    old = {(p["chip"], p["port"]): p for p in json.loads(before)["ports"]}
    # Each port that moved a byte, as (chip, peer chip, bytes): by port, so
    # that two parallel links between a pair cannot hide one's bytes.
    moved = []
    for p in json.loads(after)["ports"]:
        d = p["tx_bytes"] - old[(p["chip"], p["port"])]["tx_bytes"]
        if d:
            moved.append((p["chip"], int(p["peer"].split(".")[0]), d))
    want = [(c, ring[(i + 1) % 4], per_chip) for i, c in enumerate(ring)]
    assert sorted(moved) == sorted(want), (moved, want)
    return True
check("the job on the picked chips sends exactly its bytes over the ring it was "
      "promised, and over no other link", job)
check("with the link back up: --pick 2x4 is every chip row by row, 4x2 turned",
      lambda: lines("up")[:5] == ["up", "0,1,2,3,4,5,6,7", "status=0",
                              "0,4,1,5,2,6,3,7", "status=0"])
check("the VM exits 0", lambda: "vm-status=0" in out)
done()
PY
status=$?
[ $status = 0 ] || sed 's/^/# /' "$tmp/out" "$tmp/host"
exit $status
