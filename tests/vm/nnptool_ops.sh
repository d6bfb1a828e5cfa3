#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Operating the devices (issue 10, items 5 and 7), in one VM of 4 chips on
# a ring: nnptool topo's exact matrix, metrics in the Prometheus text
# format line by line (and metrics -o FILE the same lines), the CDI spec
# field by field, the JSON of every command parsed (list, info, topo, links, metrics, watch, memtest, bench
# copy and the four collectives with exact sizes and counts and the
# allreduce's exact link bytes, reset), PCI address and NUMA node,
# --version, every command's --help (exit 0) and a bad option (exit 2,
# said); sysfs port state, peers and counters, mem_used, busy_ns;
# hwmon's exact idle readings, then power, temperature and busy time
# rising under an allreduce load. The guest has no python: it prints,
# the host checks.
#
# In detail (docs/testing.md has the summary):
# `nnptool topo` prints the exact matrix of a ring of 4 and `--json` the
# exact links and hops; `metrics` line by line: HELP then TYPE per metric,
# `_total` names exactly the counters, every sample well-formed with
# `device=` and exact idle values (16777216 bytes, 0 used, 35.000 °C,
# 30.000000 W, 8 links up); `metrics -o FILE` writes exactly the lines
# `metrics` prints and leaves no `.tmp`; `cdi` writes `/etc/cdi/nnp.json`
# checked field by field (CDI 0.6.0, kind `nnp.dev/chip`, devices 0..3,
# each again by its serial, and all with their nodes, libnnp and libdrm
# mounts that exist); JSON of list, info (`-j` after the operand too),
# topo, metrics, watch and memtest (29 paths ok) parsed; `bench allreduce
# --json` of 64 KiB: one row, 16384 elements, 0 wrong, and exactly 6 x 2 x 3/4 x 65536 = 589824 bytes sent and
# received by each chip (`links --json` before and after), and its modeled
# time (`nnp_timestamp_async()` stamps, less the two stamps' own cost) the
# same to the ns on a second run and on both passes and within 1% of the
# model's formula at NNP-T's defaults (2000 ns overhead + 6 x (16 KiB / 56
# GB/s + 1 us) + 3 x 64 KiB / 1.23 TB/s = 9915 ns), with its modeled busbw
# from it; `broadcast`, `allgather`, `reduce_scatter --json` rows of exactly
# 1024 and 4096 B (256 and 1024 elements), busbw = 1, 0.75, 0.75 x algbw,
# algbw = size / time; `bench copy --json --min 16K --max 64K --peer 2`
# sizes 16384 and 65536 with 4096 and 1024 repetitions and nonzero peer
# and staged columns, `--min` above `--max` and `--peer` naming DEV itself
# exit 2 saying so; each collective's `avg_busbw_gbps` the mean `busbw_gbps` of
# both passes of its rows within 1e-6; `bench allgather` of 1 and 4 KiB
# in text ending in nccl-tests' summary, `# Out of bounds values : 0 OK`,
# `# Avg bus bandwidth    : X ` with X the mean busbw of both passes of
# both rows recomputed from their sizes and times within 0.2%, then `#`;
# `reset 3 --json` = `{"device": "3", "resets": 1,
# "last_reset_reason": "user"}`; every command and bench benchmark: `--help`
# exits 0 with `usage: nnptool CMD` on stdout and nothing on stderr,
# `--frobnicate` exits 2 with nothing on stdout, `nnptool: CMD: unknown
# option '--frobnicate'` and the same usage on stderr; a missing value, an
# extra operand and `--step 1` exit 2 with their exact messages, a missing
# device 1; distinct PCI addresses, NUMA node -1; `--version`; usage errors
# exit 2; sysfs `port0..2` state and peer, `mem_used`, `busy_ns`; hwmon idle
# exactly 35000 and 30000000, then under `bench allreduce` busy %, link GB/s
# and power above idle in `watch --json`, busy time, link bytes and
# temperature up after
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

guest='
sec() { echo "=== $1"; }
d=/sys/class/accel/accel0/device
sec version; nnptool --version; echo "status=$?"
sec usage; nnptool watch -c 0 2>/dev/null; echo "status=$?"
nnptool metrics extra 2>/dev/null; echo "status=$?"
nnptool topo extra 2>/dev/null; echo "status=$?"
# Each line: CMD~status~first line of stdout~first and second of stderr.
sec help-bad
for c in list info reset links topo ps watch metrics cdi gres memtest bench "bench copy" \
	"bench allreduce" "bench broadcast" "bench allgather" "bench reduce_scatter"; do
	nnptool $c --help >/tmp/o 2>/tmp/e
	echo "help $c~$?~$(head -n 1 /tmp/o)~$(head -n 1 /tmp/e)~"
	nnptool $c --frobnicate >/tmp/o 2>/tmp/e
	echo "bad $c~$?~$(head -n 1 /tmp/o)~$(head -n 1 /tmp/e)~$(sed -n 2p /tmp/e)"
done
nnptool memtest --size >/tmp/o 2>/tmp/e
echo "novalue memtest~$?~$(head -n 1 /tmp/o)~$(head -n 1 /tmp/e)~"
nnptool info 0 1 >/tmp/o 2>/tmp/e
echo "extra info~$?~$(head -n 1 /tmp/o)~$(head -n 1 /tmp/e)~"
nnptool bench allgather --step 1 >/tmp/o 2>/tmp/e
echo "range bench allgather~$?~$(head -n 1 /tmp/o)~$(head -n 1 /tmp/e)~"
nnptool bench copy --min 64K --max 16K >/tmp/o 2>/tmp/e
echo "range bench copy~$?~$(head -n 1 /tmp/o)~$(head -n 1 /tmp/e)~"
nnptool bench copy 1 --peer 1 >/tmp/o 2>/tmp/e
echo "peer bench copy~$?~$(head -n 1 /tmp/o)~$(head -n 1 /tmp/e)~"
nnptool info 4 >/tmp/o 2>/tmp/e
echo "nodev info~$?~$(head -n 1 /tmp/o)~$(head -n 1 /tmp/e)~"
sec idle-sysfs
for a in mem_used busy_ns port0/state port0/peer port1/state port1/peer port2/state port2/peer port0/errors; do
	echo "$a=$(cat $d/$a)"
done
h=$(ls -d $d/hwmon/hwmon* | head -n 1)
echo "hwmon_name=$(cat $h/name)"
echo "temp1_input=$(cat $h/temp1_input)"
echo "power1_input=$(cat $h/power1_input)"
sec topo; nnptool topo
sec topo-json; nnptool topo --json
sec topo-path
nnptool topo --path 0,2; echo "status=$?"
nnptool topo --path 3,0; echo "status=$?"
nnptool topo --path 1,1; echo "status=$?"
nnptool topo --path 0,9 2>&1; echo "status=$?"
nnptool topo --path 0 2>/dev/null; echo "status=$?"
nnptool topo --path 0,2 --pick 2 2>/dev/null; echo "status=$?"
sec topo-path-json; nnptool topo --json --path 2,0
sec list-json; nnptool list --json
sec info-json; nnptool --json info 0
sec info-json-after; nnptool info 2 -j
sec metrics; nnptool metrics
sec metrics-file; nnptool metrics -o /tmp/nnp.prom; echo "status=$?"; ls /tmp/nnp.prom.tmp 2>&1 | grep -c "No such"
sec metrics-file-body; cat /tmp/nnp.prom
sec metrics-json; nnptool metrics --json
sec cdi; nnptool cdi; echo "status=$?"; cat /etc/cdi/nnp.json
for p in $(sed -n "s/.*\"hostPath\": \"\([^\"]*\)\".*/\1/p" /etc/cdi/nnp.json); do
	test -f "$p" && echo "lib-exists=$p"
done
sec cdi-stdout; nnptool cdi -o - | cmp - /etc/cdi/nnp.json && echo same
sec watch-text; nnptool watch -l 0.2 -c 1
sec memtest-json; nnptool memtest --size 64K --json; echo "status=$?"
sec load
# One bench run is over in well under a second: repeat it for the watch.
(
	for i in $(seq 100); do
		nnptool bench allreduce --min 4M --max 4M --iters 20 --trials 3 \
			>/tmp/bench.out 2>&1 || exit 1
		[ -e /tmp/watch-done ] && exit 0
	done
) &
sleep 1
nnptool watch -l 1 -c 3 --json
touch /tmp/watch-done
wait $!; echo "bench-status=$?"
sec after-load
echo "busy_ns=$(cat $d/busy_ns)"
echo "port0_tx_bytes=$(cat $d/port0/tx_bytes)"
echo "temp1_input=$(cat $h/temp1_input)"
echo "power1_input=$(cat $h/power1_input)"
# The load is over: the allreduce alone moves link bytes between the two links --json.
sec bench-json
nnptool links --json
nnptool bench allreduce --min 64K --max 64K --iters 2 --trials 1 --json; echo "status=$?"
nnptool links --json
for c in broadcast allgather reduce_scatter; do
	nnptool bench $c --json --min 1K --max 4K --step 4 --iters 1 --trials 1; echo "status=$?"
done
nnptool --json bench copy 1 --min 16K --max 64K --iters 1 --peer 2; echo "status=$?"
# The modeled clock of the devices: the same allreduce again, the same modeled time.
nnptool bench allreduce --min 64K --max 64K --iters 2 --trials 1 --json; echo "status=$?"
sec bench-text
nnptool bench allgather --min 1K --max 4K --step 4 --iters 1 --trials 1; echo "status=$?"
sec reset-json; nnptool reset 3 --json; echo "status=$?"
'
"$root/tools/nnp-vm" --chips 4 --fabric ring --mem-size 16M --timeout 600 \
	-- sh -c "$guest" >"$tmp/out" 2>&1
echo "vm-status=$?" >>"$tmp/out"

version=$(sed -n 's/^VERSION := //p' "$root/Makefile")
python3 - "$tmp/out" "$version" "$root/tests/lib" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[3])
from tap import check, done, sections

out = open(sys.argv[1]).read()
version = sys.argv[2]
secs = sections(out)

def kv(sec):
    return dict(l.split("=", 1) for l in secs[sec].splitlines() if "=" in l)

def jline(sec, start):
    return json.loads(next(l for l in secs[sec].splitlines() if l.startswith(start)))

check("--version prints nnptool and the Makefile's VERSION, exits 0",
      lambda: secs["version"].splitlines() == ["nnptool " + version, "status=0"])
check("watch -c 0, metrics ARG and topo ARG exit 2",
      lambda: secs["usage"].split() == ["status=2"] * 3)

idle = kv("idle-sysfs")
check("sysfs idle: mem_used 0, busy_ns 0",
      lambda: idle["mem_used"] == "0" and idle["busy_ns"] == "0")
check("sysfs ports of chip 0: port0 up to 1.1, port1 up to 3.0, port2 unwired",
      lambda: (idle["port0/state"], idle["port0/peer"], idle["port1/state"],
               idle["port1/peer"], idle["port2/state"], idle["port2/peer"],
               idle["port0/errors"]) ==
      ("up", "1.1", "up", "3.0", "unwired", "none", "0"))
check("hwmon: name nnp, idle exactly 35000 m°C and 30000000 uW",
      lambda: (idle["hwmon_name"], idle["temp1_input"], idle["power1_input"]) ==
      ("nnp", "35000", "30000000"))

want_topo = [
    "        dev0  dev1  dev2  dev3  CHIP  NUMA",
    "dev0       X    L1    H2    L1     0   N/A",
    "dev1      L1     X    L1    H2     1   N/A",
    "dev2      H2    L1     X    L1     2   N/A",
    "dev3      L1    H2    L1     X     3   N/A",
    "",
    "Legend:",
    "  X   = self",
    "  Ln  = joined by n inter-chip links that are up",
    "  Hn  = reached in n hops through other chips",
    "  -   = no path over links that are up",
]
check("topo: the exact matrix of a ring of 4",
      lambda: secs["topo"].splitlines() == want_topo)
def topo_json():
    t = jline("topo-json", "{")
    return (t["links"] == [[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]]
            and t["hops"] == [[0, 1, 2, 1], [1, 0, 1, 2], [2, 1, 0, 1], [1, 2, 1, 0]]
            and t["matrix"][0] == ["X", "L1", "H2", "L1"]
            and [d["chip_id"] for d in t["devices"]] == [0, 1, 2, 3])
check("topo --json: links, hops and matrix", topo_json)
check("topo --path: 0 to 2 through 1 (the lower of two), 3 to 0 direct, 1 to itself; "
      "a device past the 4 exits 1 naming it, a bad pair and --pick beside it exit 2",
      lambda: secs["topo-path"].splitlines() == [
          "0 -> 1 -> 2 (2 hops)", "status=0", "3 -> 0 (1 hop)", "status=0",
          "1 (0 hops)", "status=0",
          "nnptool: topo: no route from device 0 to device 9 of 4 (invalid argument)",
          "status=1", "status=2", "status=2"])
check("topo --path --json: from, to, hops and the path",
      lambda: jline("topo-path-json", "{") ==
      {"from": 2, "to": 0, "hops": 2, "path": [2, 1, 0]})

def list_json():
    devs = jline("list-json", "{")["devices"]
    return (len(devs) == 4 and
            all(re.fullmatch(r"0000:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]", d["pci_address"])
                and d["numa_node"] == -1 for d in devs) and
            len({d["pci_address"] for d in devs}) == 4)
check("list --json: 4 devices, distinct PCI addresses, NUMA node -1", list_json)
def info_json():
    i = jline("info-json", "{")
    return i["chip_id"] == 0 and i["numa_node"] == -1 and \
        i["pci_address"] == jline("list-json", "{")["devices"][0]["pci_address"]
check("info --json: PCI address and NUMA node, as list says", info_json)

def metrics():
    lines = secs["metrics"].rstrip("\n").split("\n")
    helped, typed, samples = set(), {}, {}
    prev = None
    for l in lines:
        m = re.fullmatch(r"# HELP (nnp_[a-z_]+) \S.*", l)
        if m:
            assert m.group(1) not in helped, "HELP twice: " + l
            helped.add(m.group(1)); prev = ("help", m.group(1)); continue
        m = re.fullmatch(r"# TYPE (nnp_[a-z_]+) (gauge|counter)", l)
        if m:
            assert prev == ("help", m.group(1)), "TYPE not after its HELP: " + l
            typed[m.group(1)] = m.group(2); prev = ("type", m.group(1)); continue
        m = re.fullmatch(r'(nnp_[a-z_]+)\{device="(\d+)"((?:,[a-z_]+="[^"\\]*")*)\} ([0-9]+(?:\.[0-9]+)?)', l)
        assert m, "not a sample line: " + l
        name = m.group(1)
        assert prev and prev[1] == name, "sample outside its metric's block: " + l
        assert typed[name] == ("counter" if name.endswith("_total") else "gauge"), l
        samples[(name, m.group(2), m.group(3))] = m.group(4)
    get = lambda n, d, extra="": samples[(n, str(d), extra)]
    for d in range(4):
        assert get("nnp_memory_total_bytes", d) == "16777216"
        assert get("nnp_memory_used_bytes", d) == "0"
        assert get("nnp_busy_seconds_total", d) == "0.000000000"
        assert get("nnp_resets_total", d) == "0"
        assert get("nnp_temperature_celsius", d) == "35.000"
        assert get("nnp_power_watts", d) == "30.000000"
        nxt, prv = (d + 1) % 4, (d + 3) % 4
        assert get("nnp_link_up", d, ',port="0",peer="%d.1"' % nxt) == "1"
        assert get("nnp_link_up", d, ',port="1",peer="%d.0"' % prv) == "1"
    assert len([k for k in samples if k[0] == "nnp_link_up"]) == 8
    assert len([k for k in samples if k[0] == "nnp_device_info"]) == 4
    assert len(helped) == 11 == len(typed)
    return True
check("metrics: HELP then TYPE per metric, every sample line well-formed, exact idle values", metrics)
check("metrics -o FILE: exit 0, no FILE.tmp left",
      lambda: secs["metrics-file"].split() == ["status=0", "1"])
# Idle, nothing in the metrics changes between the two reads.
check("metrics -o FILE: the file holds exactly what metrics printed",
      lambda: secs["metrics"].splitlines() and
      secs["metrics-file-body"].splitlines() == secs["metrics"].splitlines())
def metrics_json():
    m = jline("metrics-json", "{")["devices"]
    return len(m) == 4 and m[3]["power_uw"] == 30000000 and m[3]["temperature_mc"] == 35000 \
        and [p["up"] for p in m[0]["ports"]] == [True, True, False, False]
check("metrics --json: 4 devices, idle sensors, ports up", metrics_json)

def cdi():
    body = secs["cdi"]
    assert body.startswith("status=0\n")
    spec = json.loads(body[len("status=0\n"):body.index("\n}\n") + 3])
    assert set(spec) == {"cdiVersion", "kind", "devices", "containerEdits"}
    assert spec["cdiVersion"] == "0.6.0"
    assert re.fullmatch(r"[a-z0-9]([a-z0-9.-]*[a-z0-9])?/[a-zA-Z0-9]([a-zA-Z0-9_.-]*[a-zA-Z0-9])?", spec["kind"])
    assert spec["kind"] == "nnp.dev/chip"
    names = [d["name"] for d in spec["devices"]]
    assert names == [n for i in range(4) for n in (str(i), "NNPSIM-%08x" % i)] + ["all"], names
    for d in spec["devices"]:
        assert set(d) == {"name", "containerEdits"}
        assert re.fullmatch(r"[a-zA-Z0-9][a-zA-Z0-9_.:-]*", d["name"])
    for i in range(8):
        assert spec["devices"][i]["containerEdits"] == {
            "deviceNodes": [{"path": "/dev/accel/accel%d" % (i // 2), "permissions": "rw"}]}
    assert [n["path"] for n in spec["devices"][8]["containerEdits"]["deviceNodes"]] == \
        ["/dev/accel/accel%d" % i for i in range(4)]
    mounts = spec["containerEdits"]["mounts"]
    assert set(spec["containerEdits"]) == {"mounts"}
    libs = sorted(re.sub(r".*/", "", m["hostPath"]).split(".so")[0] for m in mounts)
    assert libs == ["libdrm", "libnnp"], libs
    for m in mounts:
        assert m["hostPath"] == m["containerPath"] and m["hostPath"].startswith("/")
        assert m["options"] == ["ro", "nosuid", "nodev", "bind"]
        assert "lib-exists=" + m["hostPath"] in body
    return True
check("cdi: /etc/cdi/nnp.json, CDI 0.6.0 field by field, libraries that exist", cdi)
check("cdi -o - writes the same spec to stdout",
      lambda: secs["cdi-stdout"].split() == ["same"])
def memtest_json():
    m = jline("memtest-json", "{")
    return len(m["paths"]) == 29 and all(p["ok"] and p["bytes"] == 65536 for p in m["paths"]) \
        and m["passed"] is True and m["failures"] == 0 and "status=0" in secs["memtest-json"]
check("memtest --json: 29 paths of 64 KiB, all ok, passed", memtest_json)
check("watch text: a header and a row per device",
      lambda: re.match(r"DEV +CHIP +MEM USED", secs["watch-text"]) and
      len([l for l in secs["watch-text"].splitlines() if re.match(r"[0-3] +[0-3] +0 MiB +16 MiB ", l)]) == 4)

def load():
    w = [json.loads(l) for l in secs["load"].splitlines() if l.startswith("{")]
    assert [s["sample"] for s in w] == [1, 2, 3]
    assert all(len(s["devices"]) == 4 for s in w)
    assert any(d["busy_percent"] > 0 and d["link_tx_gbps"] > 0 for s in w for d in s["devices"])
    assert any(d["power_uw"] > 30000000 for s in w for d in s["devices"])
    assert "bench-status=0" in secs["load"]
    return True
check("watch --json under an allreduce: 3 samples, busy, link traffic and power above idle", load)
def after():
    a = kv("after-load")
    return int(a["busy_ns"]) > 0 and int(a["port0_tx_bytes"]) > 4 << 20 and \
        int(a["temp1_input"]) > 35000 and int(a["power1_input"]) >= 30000000
check("after the load: busy_ns and link bytes counted, temperature above idle", after)

def help_bad():
    rows = {}
    for l in secs["help-bad"].splitlines():
        kind, rest = l.split(" ", 1)
        cmd, status, o, e1, e2 = rest.split("~")
        rows[(kind, cmd)] = (int(status), o, e1, e2)
    cmds = ["list", "info", "reset", "links", "topo", "ps", "watch", "metrics", "cdi",
            "gres", "memtest", "bench", "bench copy", "bench allreduce", "bench broadcast",
            "bench allgather", "bench reduce_scatter"]
    for c in cmds:
        st, o, e1, _ = rows[("help", c)]
        assert (st, e1) == (0, "") and o.startswith("usage: nnptool %s " % c), (c, rows[("help", c)])
        st, o, e1, e2 = rows[("bad", c)]
        assert (st, o) == (2, ""), (c, st, o)
        assert e1 == "nnptool: %s: unknown option '--frobnicate'" % c, e1
        assert e2 == rows[("help", c)][1], (e2, rows[("help", c)][1])
    assert rows[("novalue", "memtest")] == \
        (2, "", "nnptool: memtest: option '--size' needs a value", "")
    assert rows[("extra", "info")] == (2, "", "nnptool: info: extra operand '1'", "")
    assert rows[("range", "bench allgather")] == \
        (2, "", "nnptool: bench allgather: bad F (2 to 100000) '1'", "")
    assert rows[("range", "bench copy")] == \
        (2, "", "nnptool: bench copy: bad SIZE (4K to --max) '64K'", "")
    assert rows[("peer", "bench copy")] == \
        (2, "", "nnptool: bench copy: bad P (a device other than DEV) '1'", "")
    st, o, e1, _ = rows[("nodev", "info")]
    assert (st, o) == (1, "") and e1.startswith("nnptool: device '4': "), e1
    return len(rows) == 2 * len(cmds) + 6
check("every command: --help exits 0 with its usage on stdout; a bad option, "
      "a missing value, an extra operand, a bad range exit 2 saying so; no device exits 1", help_bad)

def bench_json():
    lines = secs["bench-json"].splitlines()
    objs = [json.loads(l) for l in lines if l.startswith("{")]
    assert [l for l in lines if l.startswith("status=")] == ["status=0"] * 6
    before, ar, after, bc, ag, rs, cp, ar2 = objs
    # 2 passes (out of place, in place) x (1 warm-up + 1 trial x 2 iterations)
    # allreduces of 64 KiB on 4 chips, each chip sending 2 x 3/4 x 65536.
    per_chip = 6 * 2 * 3 * 65536 // 4
    def moved(key, d):
        return sum(p[key] for p in after["ports"] if p["dev"] == d) - \
               sum(p[key] for p in before["ports"] if p["dev"] == d)
    for d in range(4):
        assert moved("tx_bytes", d) == per_chip, (d, moved("tx_bytes", d))
        assert moved("rx_bytes", d) == per_chip, (d, moved("rx_bytes", d))
    assert (ar["benchmark"], ar["devices"], ar["type"], ar["redop"], ar["iters"],
            ar["trials"], ar["wrong"], ar["passed"]) == \
        ("allreduce", 4, "float", "sum", 2, 1, 0, True), ar
    assert [(r["size"], r["count"]) for r in ar["rows"]] == [(65536, 16384)]
    for want, b, factor in (("broadcast", bc, 1), ("allgather", ag, 0.75),
                            ("reduce_scatter", rs, 0.75)):
        assert (b["benchmark"], b["devices"], b["redop"], b["wrong"], b["passed"]) == \
            (want, 4, "sum" if want == "reduce_scatter" else "none", 0, True), b
        assert [(r["size"], r["count"]) for r in b["rows"]] == [(1024, 256), (4096, 1024)]
        for r in b["rows"]:
            for p in ("out_of_place", "in_place"):
                t = r[p]
                assert t["wrong"] == 0 and t["time_us"] > 0
                assert t["worst_time_us"] == t["time_us"], t  # one trial
                assert abs(t["algbw_gbps"] - r["size"] / t["time_us"] / 1e3) <= 1e-5 + 1e-3 * t["algbw_gbps"]
                assert abs(t["busbw_gbps"] - factor * t["algbw_gbps"]) <= 1e-5
    # Modeled time at NNP-T's defaults (docs/architecture.md, "The modeled
    # clock"): on a ring NNP_ALGO's default runs BIDIR, two lanes of half
    # the buffer each, one each way at once, so S/2n = 8 KiB, one chunk a
    # stage: a command's overhead 2000 ns + 2(n-1)(8 KiB at 56 GB/s +
    # 1000 ns latency) + (n-1)(a reduction's 3 x 8 KiB and a copy's 8 KiB
    # at 1.23 TB/s) = 8958 ns, within 1% (the stamps' own 2000 ns, left
    # in, is 11% over 2 iterations); the same to the ns on both passes
    # and a second run.
    want_ns = 2000 + 6 * (8192 / 56.0 + 1000) + 3 * 4 * 8192 / 1230.0
    models = [r[p]["model_time_us"] for a in (ar, ar2) for r in a["rows"]
              for p in ("out_of_place", "in_place")]
    assert len(set(models)) == 1, models
    assert abs(models[0] * 1e3 - want_ns) <= 0.01 * want_ns, (models, want_ns)
    for p in ("out_of_place", "in_place"):
        t = ar["rows"][0][p]
        assert abs(t["model_busbw_gbps"] - 1.5 * 65536 / t["model_time_us"] / 1e3) <= 1e-5, t
    # nccl-tests' average: the mean busbw of both passes of every row.
    for a in (ar, bc, ag, rs, ar2):
        b = [r[p]["busbw_gbps"] for r in a["rows"] for p in ("out_of_place", "in_place")]
        assert abs(a["avg_busbw_gbps"] - sum(b) / len(b)) <= 1e-6, (a["avg_busbw_gbps"], b)
    rows = cp["copy"]
    assert [(r["size"], r["reps"]) for r in rows] == [(16384, 4096), (65536, 1024)], rows
    assert all(r[k] > 0 for r in rows for k in ("h2d_gbps", "d2h_gbps", "d2d_gbps", "memcpy_gbps",
                                                "peer_gbps", "staged_gbps"))
    return True
check("bench --json: the four collectives' sizes, counts, busbw factors and verdicts; "
      "the allreduce's exact link bytes per chip; bench copy's sizes and repetitions, "
      "with --peer its peer and staged columns; "
      "the allreduce's modeled time the model's formula within 1%, the same on two runs", bench_json)
def bench_text():
    lines = secs["bench-text"].splitlines()
    rows = [l.split() for l in lines if l.startswith("  ")]
    # size count type redop root, then each pass: time algbw busbw #wrong ...
    assert [(r[0], r[1], r[4], r[8], r[14]) for r in rows] == \
        [("1024", "256", "-1", "0", "0"), ("4096", "1024", "-1", "0", "0")], rows
    # busbw = 3/4 size / time, from the size and the times (us, 0.1 us
    # steps) of both passes, so the average is exact to about 0.1%.
    busbw = [0.75 * int(r[0]) / float(r[t]) / 1e3 for r in rows for t in (5, 11)]
    want = sum(busbw) / len(busbw)
    assert lines[-4] == "# Out of bounds values : 0 OK", lines[-4]
    m = re.fullmatch(r"# Avg bus bandwidth    : ([0-9.e+-]+) ", lines[-3])
    assert m, lines[-3]
    assert abs(float(m.group(1)) - want) <= 2e-3 * want, (m.group(1), want)
    assert lines[-2:] == ["#", "status=0"], lines[-2:]
    return True
check("bench allgather's summary as nccl-tests': 0 out of bounds OK, the average busbw "
      "of both passes of every row, a last '#'", bench_text)
check("info -j after the operand: chip 2",
      lambda: jline("info-json-after", "{")["chip_id"] == 2)
def reset_json():
    r = jline("reset-json", "{")
    return r == {"device": "3", "resets": 1, "last_reset_reason": "user"} and \
        "status=0" in secs["reset-json"]
check("reset --json: device 3, its first reset, by the user", reset_json)
check("the VM run exits 0", lambda: "vm-status=0" in out)

done()
PY
status=$?
[ $status = 0 ] || sed 's/^/# /' "$tmp/out"
exit $status
