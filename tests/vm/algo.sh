#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The allreduce algorithms on the devices (issue 12 item 4), end to end:
# libnnp plans the fabric, NNP_ALGO picks the algorithm, the driver's
# COMM_TOPOLOGY gives it to the device. One VM per fabric, every
# algorithm run in it: `nnptool bench allreduce` of 80 KiB of floats
# (2 passes x (1 warm-up + 2 iterations) = 6 allreduces, every element
# checked) between `nnptool links --json` before and after, and each
# port's transmit bytes must be exactly what the algorithm sends, per
# allreduce of S bytes on n chips:
#   ring   2(n-1)/n S out of the ring's send port only (3S/2 on 4 chips)
#   bidir  (n-1)/n S out of the send port and the receive port (3S/4)
#   rings  (n-1)/(2n) S out of each of the 4 ports of two pairs (3S/8)
#   torus  W x H: two lanes rows first of Px = S W(H-1) / 2(W(H-1) +
#          H(W-1)) each, two columns first of Py = S H(W-1) / 2(...)
#          (fw_algo.c's lane_weight()); 2(W-1)/W (Px + Py/H) out of each
#          row port, 2(H-1)/H (Py + Px/W) out of each column port (2x2:
#          3S/8 each; 4x2: 21S/40 on rows, 7S/20 on columns)
# Each port's modeled transmit busy time (links' tx_busy_ns) grows by its
# packets' wire times at 56000 MB/s, each rounded down to the ns.
# 80 KiB divides into every lane and segment exactly. auto is the device's pick:
# bidir on a ring (2 or more elements a chip), torus on a torus. An
# algorithm the fabric cannot run fails at comm init naming it.
#
# In detail (docs/testing.md has the summary):
# each allreduce algorithm through libnnp's `NNP_ALGO`, the driver's
# COMM_TOPOLOGY and the device, one VM a fabric running every algorithm in
# turn: `nnptool bench allreduce` of 80 KiB floats (6 allreduces, every
# element checked, 0 wrong) between `nnptool links --json` before and after,
# and every port's transmit bytes exactly the algorithm's, per allreduce of
# S: ring 3S/2 out of port 0 only; bidir 3S/4 out of ports 0 and 1; rings
# 3S/8 out of each of 4 ports; torus 3S/8 out of each port on 2x2 (the
# double ring is a 2x2 torus too) and on 4x2 21S/40 out of the row ports
# 0/1, 7S/20 out of the column ports 2/3 (the lanes split C(R-1) : R(C-1),
# `lane_weight()`); auto: bidir on the ring, torus on the others; `rings`
# and `torus` on the ring, every port's modeled transmit busy time
# (`tx_busy_ns`) its packets' wire time at 56000 MB/s, at most its bytes'
# time and at most a ns a packet less; `rings` on 4x2 and an unknown name
# refused at comm init with the last error naming the hop, the missing torus
# or the name, no byte sent (21 checks; 184 s for the 4 boots on the shared
# 2-core machine at a load of about 13, 37 to 52 s at a lower one)
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Each run: its algorithm, links before, the bench, links after.
guest='
for a in $ALGOS; do
	echo "=== $a"
	nnptool links --json
	NNP_DEBUG=WARN NNP_ALGO=$a nnptool bench allreduce --min 80K --max 80K --iters 2 --trials 1 --json 2>&1
	echo "status=$?"
	nnptool links --json
done
'
# name, chips, fabric, algorithms
vms=(
	"ring 4 ring ring,bidir,auto,rings,torus,tree"
	"double 4 links:0.0-1.1;1.0-2.1;2.0-3.1;3.0-0.1;0.2-1.3;1.2-2.3;2.2-3.3;3.2-0.3 ring,bidir,rings,torus,auto"
	"torus2x2 4 torus:2x2 torus,auto"
	"torus4x2 8 torus:4x2 torus,auto,rings"
)
for vm in "${vms[@]}"; do
	read -r name n fabric algos <<<"$vm"
	start=$(date +%s)
	"$root/tools/nnp-vm" --chips "$n" --fabric "$fabric" --mem-size 16M --timeout 600 \
		--env "ALGOS=${algos//,/ }" -- sh -c "$guest" >"$tmp/$name" 2>&1
	echo "vm-status=$?" >>"$tmp/$name"
	echo "# $name: $n chips, $fabric, $(($(date +%s) - start)) s"
done

python3 - "$tmp" "$root/tests/lib" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[2])
from tap import check, done

d = sys.argv[1]
S, RUNS = 81920, 6
n_ok = 0

def runs(name):
    out = open(f"{d}/{name}").read()
    secs = {m.group(1): m.group(2) for m in
            re.finditer(r"^=== (\S+)\n(.*?)(?=^=== |^vm-status|\Z)", out, re.S | re.M)}
    return out, secs

def delta(before, after, key):
    """Per (dev, port): how much @key of nnptool links grew in the run."""
    v = {(p["dev"], p["port"]): p[key] for p in after["ports"]}
    for p in before["ports"]:
        v[(p["dev"], p["port"])] -= p[key]
    return v

def moved(sec):
    """Per (dev, port): tx bytes the run sent; the bench's JSON; its status."""
    lines = sec.splitlines()
    objs = [json.loads(l) for l in lines if l.startswith("{")]
    status = [l for l in lines if l.startswith("status=")]
    return delta(objs[0], objs[-1], "tx_bytes"), objs[1:-1], status, sec

def busy_fits(sec):
    """
    Each port's modeled transmit busy time grew by its packets' wire times
    at the default 56000 MB/s, each rounded down to the ns: at most its
    bytes' time, at most a ns a packet less.
    """
    objs = [json.loads(l) for l in sec.splitlines() if l.startswith("{")]
    tx = delta(objs[0], objs[-1], "tx_bytes")
    pk = delta(objs[0], objs[-1], "tx_packets")
    busy = delta(objs[0], objs[-1], "tx_busy_ns")
    for k, b in busy.items():
        top = tx[k] * 1000 // 56000
        assert top - pk[k] <= b <= top, (k, b, tx[k], pk[k])
    return busy


def exact(name, secs, algo, n, want):
    """want: port -> bytes per allreduce, the same on every chip."""
    def fn():
        tx, bench, status, sec = moved(secs[algo])
        assert status == ["status=0"], sec
        b = bench[0]
        assert (b["benchmark"], b["devices"], b["wrong"], b["passed"]) == \
            ("allreduce", n, 0, True), b
        assert [(r["size"], r["count"]) for r in b["rows"]] == [(S, S // 4)], b
        got = {k: v for k, v in tx.items() if v}
        exp = {(dev, p): RUNS * v for dev in range(n) for p, v in want.items() if v}
        print("# %s: chip 0 sent %s" % (name.split(": ")[0], ", ".join(
            "port %d %d B" % (p, v // RUNS) for (dev, p), v in sorted(got.items()) if dev == 0)))
        assert got == exp, (sorted(got.items()), sorted(exp.items()))
        busy = busy_fits(sec)
        print("# %s: chip 0 busy %s" % (name.split(": ")[0], ", ".join(
            "port %d %d ns" % (p, v) for (dev, p), v in sorted(busy.items()) if dev == 0)))
        return True
    check(name, fn)

def refused(name, secs, algo, text):
    def fn():
        tx, bench, status, sec = moved(secs[algo])
        assert status != ["status=0"] and text in sec, sec
        assert not any(tx.values()), tx
        return True
    check(name, fn)

out, s = runs("ring")
check("ring of 4: the VM ran every algorithm and exited 0", lambda: "vm-status=0" in out)
exact("ring of 4, ring: 3S/2 out of port 0 only", s, "ring", 4, {0: 3 * S // 2})
exact("ring of 4, bidir: 3S/4 out of each of ports 0 and 1", s, "bidir", 4,
      {0: 3 * S // 4, 1: 3 * S // 4})
exact("ring of 4, auto: the device runs bidir, 3S/4 out of ports 0 and 1", s, "auto", 4,
      {0: 3 * S // 4, 1: 3 * S // 4})
refused("ring of 4, rings: refused at comm init naming the hop of one link", s, "rings",
        "NNP_ALGO=rings: the ring's hop from rank 0 (chip 0) to rank 1 (chip 1) has one link free")
refused("ring of 4, torus: refused, no torus", s, "torus",
        "NNP_ALGO=torus: the 4 ranks' chips make no 2D torus of up links")
refused("ring of 4, tree: an unknown name refused, named", s, "tree",
        "NNP_ALGO=tree: not an allreduce algorithm")

out, s = runs("double")
check("double-linked ring of 4: exit 0", lambda: "vm-status=0" in out)
exact("double ring, ring: 3S/2 out of port 0 only", s, "ring", 4, {0: 3 * S // 2})
exact("double ring, bidir: 3S/4 out of ports 0 and 1", s, "bidir", 4,
      {0: 3 * S // 4, 1: 3 * S // 4})
exact("double ring, rings: 3S/8 out of each of ports 0, 1, 2, 3", s, "rings", 4,
      {p: 3 * S // 8 for p in range(4)})
exact("double ring (a 2x2 torus too), torus: 3S/8 out of each port", s, "torus", 4,
      {p: 3 * S // 8 for p in range(4)})
exact("double ring, auto: the torus, 3S/8 out of each port", s, "auto", 4,
      {p: 3 * S // 8 for p in range(4)})

out, s = runs("torus2x2")
check("torus:2x2: exit 0", lambda: "vm-status=0" in out)
exact("torus:2x2, torus: 3S/8 out of each of the 4 ports", s, "torus", 4,
      {p: 3 * S // 8 for p in range(4)})
exact("torus:2x2, auto: the torus, 3S/8 out of each port", s, "auto", 4,
      {p: 3 * S // 8 for p in range(4)})

out, s = runs("torus4x2")
W, H = 4, 2                                     # rows along ports 0/1
wx, wy = W * (H - 1), H * (W - 1)
Px, Py = S * wx // (2 * (wx + wy)), S * wy // (2 * (wx + wy))
row = 2 * (W - 1) * (Px + Py // H) // W         # 21S/40
col = 2 * (H - 1) * (Py + Px // W) // H         # 7S/20
check("torus:4x2: exit 0", lambda: "vm-status=0" in out)
exact("torus:4x2, torus: 21S/40 out of ports 0 and 1, 7S/20 out of 2 and 3", s, "torus", 8,
      {0: row, 1: row, 2: col, 3: col})
exact("torus:4x2, auto: the torus, the same bytes", s, "auto", 8,
      {0: row, 1: row, 2: col, 3: col})
refused("torus:4x2, rings: refused, a hop of its ring has one link", s, "rings",
        "NNP_ALGO=rings: the ring's hop from rank")
check("row and column bytes add up to 2(n-1)/n S a chip (7S/4)",
      lambda: 2 * row + 2 * col == 7 * S // 4)

done()
PY
st=$?
[ $st = 0 ] || for f in "$tmp"/*; do echo "# --- $f"; sed 's/^/# /' "$f" | tail -n 60; done
exit $st
