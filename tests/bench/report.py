#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The report of `make bench`: reads the raw outputs tests/bench/run.sh
left in OUT/raw, prints a table per ring size with the device's busbw
next to Open MPI's and the roofline, and their ratios, for every size,
and torch's all_reduce on "nnp" against "gloo" (report_torch.py);
writes OUT/results.json (every number, the date, the host, the commit)
OUT/busbw.png (gnuplot) and OUT/summary.md (the table of docs/testing.md's recorded run).
Exits 1 if any result was wrong.

The roofline: chips of one QEMU share one host memory, so a ring
allreduce of S bytes over n chips moves at least 5(n-1)S bytes of memory
(reduce-scatter reads the incoming chunk and reads and writes its own;
allgather reads and writes), and busbw = 2(n-1)/n * S/t <= 2B/(5n), with
B the read+write copy bandwidth of all the host's cores.
usage: report.py OUT
"""
import datetime
import json
import os
import re
import statistics
import subprocess
import sys

import report_torch

COLLS = ["allreduce", "broadcast", "allgather", "reduce_scatter", "alltoall", "gather"]


def numeric_rows(lines, width):
    """Rows of @width fields whose first field is a number."""
    for line in lines:
        f = line.split()
        if len(f) == width and f[0].isdigit():
            yield f


def sections(path):
    """{name: [lines]} of a device log split at its '## name' lines."""
    out, name = {}, None
    with open(path) as fh:
        for line in fh:
            if line.startswith("## "):
                name = line.split()[1]
                out[name] = []
            elif name:
                out[name].append(line)
    return out


def timing(coll, n, size, time_us, wrong):
    """A row's numbers, bandwidths from the time (the printed ones are
    rounded to 1 MB/s), with nccl-tests' busbw factors."""
    bus = {"allreduce": 2 * (n - 1) / n, "broadcast": 1}.get(coll, (n - 1) / n)
    algbw = size / time_us / 1e3
    return {"time_us": time_us, "algbw_gbps": algbw, "busbw_gbps": algbw * bus,
            "wrong": wrong}


def mpi_rows(lines, coll, n):
    """Open MPI's rows (mpi_coll's lines): {size: {...}}."""
    return {int(f[0]): timing(coll, n, int(f[0]), float(f[2]), int(f[5]))
            for f in numeric_rows(lines, 6)}


def host_mpi_rows(path, coll, n):
    """The host's Open MPI rows, from mpi_coll's output file."""
    with open(path) as fh:
        return mpi_rows(fh, coll, n)


def device_json(lines):
    """The JSON object nnptool bench --json printed in a section."""
    return json.loads(next(line for line in lines if line.startswith("{")))


def device_failed(lines):
    """What a failed nnptool bench said (its "error"), or None."""
    return device_json(lines).get("error")


def device_rows(lines, coll, n):
    """nnptool bench rows: {size: {"out_of_place": {...}, "in_place": {...}}};
    a size the run failed at (its times null or 0) is left out."""
    rows = {}
    for r in device_json(lines)["rows"]:
        if not all(r[p]["time_us"] for p in ("out_of_place", "in_place")):
            continue
        rows[r["size"]] = {}
        for p in ("out_of_place", "in_place"):
            t = timing(coll, n, r["size"], r[p]["time_us"], r[p]["wrong"])
            t["model_time_us"] = r[p]["model_time_us"]
            t["model_busbw_gbps"] = r[p]["model_busbw_gbps"]
            if "worst_time_us" in r[p]:
                t["worst_time_us"] = r[p]["worst_time_us"]
            rows[r["size"]][p] = t
    return rows


def host_info(root):
    cpu = "unknown"
    with open("/proc/cpuinfo") as fh:
        for line in fh:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    git = ["git", "-C", root]
    commit = subprocess.run(git + ["rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(git + ["status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return {"cpu_model": cpu, "cores": os.cpu_count(),
            "git_commit": commit + ("-dirty" if dirty else "")}


def load(out):
    raw = os.path.join(out, "raw")
    res = {"date": datetime.datetime.now(datetime.timezone.utc)
           .strftime("%Y-%m-%dT%H:%M:%SZ")}
    res.update(host_info(os.path.dirname(os.path.dirname(os.path.abspath(out)))))
    for when in ("start", "end"):
        with open(os.path.join(raw, "load-%s.txt" % when)) as fh:
            res["load_average_" + when] = fh.read().split("load average:")[1].strip()
    memcpy = {}
    with open(os.path.join(raw, "host_bw.txt")) as fh:
        for line in fh:
            f = line.split()
            if f[0] == "roofline":
                res["roofline"] = {"threads": int(f[1]), "bytes_per_thread": int(f[2]),
                                   "B_gbps": float(f[3]), "allreduce_busbw_gbps": {}}
            else:
                memcpy[int(f[1])] = float(f[3])
    res["n"] = {}
    copy_rows = None
    ns = sorted(int(name.split("-")[1][:-4]) for name in os.listdir(raw)
                if name.startswith("device-"))
    for n in ns:
        dev = sections(os.path.join(raw, "device-%d.txt" % n))
        lat_dev = device_rows(dev["latency"], "allreduce", n)[8]
        lat_mpi = host_mpi_rows(os.path.join(raw, "mpi-%d-latency.txt" % n), "allreduce", n)[8]
        # The guest's own Open MPI in the same VM (none in runs before it).
        lat_gmpi = mpi_rows(dev.get("gmpi-latency", []), "allreduce", n).get(8)
        roof = 2 * res["roofline"]["B_gbps"] / (5 * n)
        res["roofline"]["allreduce_busbw_gbps"][str(n)] = round(roof, 4)
        per = {"latency_8B_us": {"device": lat_dev["out_of_place"]["time_us"],
                                 "openmpi": lat_mpi["time_us"],
                                 "guest_openmpi": lat_gmpi and lat_gmpi["time_us"]},
               "device": {}, "openmpi": {}, "guest_openmpi": {}}
        per["failed"] = {}
        for c in COLLS:
            per["device"][c] = device_rows(dev[c], c, n)
            if device_failed(dev[c]):
                per["failed"][c] = device_failed(dev[c])
            per["openmpi"][c] = host_mpi_rows(os.path.join(raw, "mpi-%d-%s.txt" % (n, c)), c, n)
            if "gmpi-" + c in dev:
                per["guest_openmpi"][c] = mpi_rows(dev["gmpi-" + c], c, n)
        # rank 0's messages to its neighbour and to the chip 2 hops away
        for peer in (1, 2):
            if "sendrecv%d" % peer in dev:
                per["device"]["sendrecv%d" % peer] = device_rows(
                    dev["sendrecv%d" % peer], "broadcast", n)
        for g in ("group32-fusion0", "group32-fusion1"):
            if g in dev:
                per["device"][g] = device_rows(dev[g], "allreduce", n)
        # The 8-byte runs are the allreduce's 8 B rows.
        per["device"]["allreduce"][8] = lat_dev
        per["openmpi"]["allreduce"][8] = lat_mpi
        if lat_gmpi and "allreduce" in per["guest_openmpi"]:
            per["guest_openmpi"]["allreduce"][8] = lat_gmpi
        ctxsw = os.path.join(raw, "ctxsw-%d.txt" % n)
        if os.path.exists(ctxsw):
            with open(ctxsw) as fh:
                f = dict(kv.split("=") for kv in fh.read().split()[1:])
            per["host_per_8B_allreduce"] = {
                "context_switches": float(f["context_switches"]),
                "cpu_migrations": float(f["cpu_migrations"])}
        res["n"][str(n)] = per
        if "copy" in dev:
            copy_rows = device_json(dev["copy"])["copy"]
    res["copy"] = [{"size": r["size"], "reps": r["reps"], "h2d_gbps": r["h2d_gbps"],
                    "d2h_gbps": r["d2h_gbps"], "d2d_gbps": r["d2d_gbps"],
                    "guest_memcpy_gbps": r["memcpy_gbps"],
                    "peer_gbps": r.get("peer_gbps"), "staged_gbps": r.get("staged_gbps"),
                    "host_memcpy_gbps": memcpy.get(r["size"])} for r in copy_rows or []]
    res["host_memcpy_gbps"] = {str(k): v for k, v in sorted(memcpy.items())}
    example = os.path.join(raw, "example-4.txt")
    if os.path.exists(example):
        with open(example) as fh:
            m = re.search(r"^training: .*\(([0-9.]+) ms each, with the copies\)", fh.read(), re.M)
        res["example_allreduce_ms"] = float(m.group(1)) if m else None
    res["example_split"] = example_split(os.path.join(raw, "example-4-trace.txt"))
    res["pod"] = pod_busbw(raw)
    res["call_check"] = call_check_cost(raw)
    res["group_fw"] = group_fw(raw)
    res["torch"] = report_torch.load(
        raw, lambda n: res["n"].get(str(n), {}).get("device", {}).get("allreduce", {}))
    return res


def example_split(path):
    """Where the example's allreduce time goes, from its ranks' traces (one
    guest, one clock): the median, over its allreduces, of the time from
    the last rank's call to the first rank's return (the devices, and one
    rank woken), and from the first rank's return to the last's (ranks
    waiting for a CPU to see their completion), in ms."""
    if not os.path.exists(path):
        return None
    ops = {}
    with open(path) as fh:
        for line in fh:
            if line.startswith('{"seq"'):
                op = json.loads(line)
                ops.setdefault((op["comm"], op["seq"]), []).append(op)
    whole = [v for v in ops.values() if len(v) == v[0]["nranks"] and v[0]["op"] == "allreduce"]
    if not whole:
        return None
    return {
        "allreduces": len(whole),
        "last_call_to_first_return_ms": statistics.median_high(
            [min(o["done_ns"] for o in v) - max(o["issue_ns"] for o in v) for v in whole]) / 1e6,
        "first_to_last_return_ms": statistics.median_high(
            [max(o["done_ns"] for o in v) - min(o["done_ns"] for o in v) for v in whole]) / 1e6,
    }


def pod_busbw(raw):
    """Rank 0's busbw (GB/s) of the 64 MiB allreduce on 4 chips across
    chassis over unix and TCP, and in one QEMU; None where not run."""
    res = {}
    for name in ("unix", "tcp", "one"):
        path = os.path.join(raw, f"pod-{name}.txt")
        if not os.path.exists(path):
            continue
        with open(path) as fh:
            m = re.search(r"POD X rank 0: bench \d+ bytes, (\d+) allreduces, ([0-9.]+) us each, "
                          r"busbw ([0-9.]+) GB/s", fh.read())
        res[name] = {"allreduces": int(m.group(1)), "time_us": float(m.group(2)),
                     "busbw_gbps": float(m.group(3))} if m else None
    return res


def call_check_cost(raw):
    """Issue 46's check of the ranks' calls: the 8-byte allreduce on 4
    chips with it on and off, in turns, in the firmware alone
    (call_check_fw.c: the median times, and the median of the blocks'
    on/off ratios) and in one VM
    (call_check.sh: each round's on/off time ratio, their median and
    range, and the median times); None where not run. A switch the
    monitor did not read back (the run measured something else) is an
    error."""
    fw = None
    path = os.path.join(raw, "call-check-fw.txt")
    if os.path.exists(path):
        with open(path) as fh:
            m = re.search(r"^call-check-fw on_us=([0-9.]+) off_us=([0-9.]+) ratio=([0-9.]+)",
                          fh.read(), re.M)
        fw = m and {"on_us": float(m.group(1)), "off_us": float(m.group(2)),
                    "on_over_off": float(m.group(3))}
    path = os.path.join(raw, "call-check.txt")
    if not os.path.exists(path):
        return None
    times, name = {}, None
    with open(path) as fh:
        text = fh.read()
    for line in text.splitlines():
        if line.startswith("## "):
            name = tuple(line.split()[1:3])
        elif line.startswith("{") and name:
            row = json.loads(line)["rows"][0]
            times[name] = row["out_of_place"]["time_us"]
            name = None
    switches = re.findall(r"^call-check nnp\d+ (on|off) reads (\S+)$", text, re.M)
    if not switches or any(want != {"true": "on", "false": "off"}.get(got)
                           for want, got in switches):
        sys.exit("bench: a call-check switch did not read back: %s" % path)
    rounds = sorted({r for _, r in times if ("on", r) in times and ("off", r) in times},
                    key=int)
    ratios = [times[("on", r)] / times[("off", r)] for r in rounds]
    return {"firmware_alone": fw, "rounds": len(rounds), "on_over_off": ratios,
            "median_on_over_off": statistics.median(ratios),
            "median_on_us": statistics.median(times[("on", r)] for r in rounds),
            "median_off_us": statistics.median(times[("off", r)] for r in rounds)}


def ratio(a, b):
    return a / b if b else float("nan")


def human(size):
    for unit, shift in (("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return "%d%s" % (size >> shift, unit)
    return str(size)


def wrong_results(res):
    bad = []
    for n, per in res["n"].items():
        bad += ["device %s n=%s failed: %s" % (c, n, e) for c, e in per["failed"].items()]
        for who in ("device", "openmpi", "guest_openmpi"):
            for c, rows in per[who].items():
                for size, row in rows.items():
                    parts = row.values() if who == "device" else [row]
                    if any(p["wrong"] for p in parts):
                        bad.append("%s %s n=%s %d B" % (who, c, n, size))
    return bad


def targets(res):
    """The issue's targets P1-P3, as met or not by this run."""
    p1, p1_mpi = [], []
    for n, per in res["n"].items():
        roof = res["roofline"]["allreduce_busbw_gbps"][n]
        dev, mpi = per["device"]["allreduce"], per["openmpi"]["allreduce"]
        for size in sorted(dev):
            bus = dev[size]["out_of_place"]["busbw_gbps"]
            if size >= 16 << 20:
                p1.append(ratio(bus, roof))
            if size >= 256 << 10 and size in mpi:
                p1_mpi.append(ratio(bus, mpi[size]["busbw_gbps"]))
    lat4 = res["n"].get("4", {}).get("latency_8B_us", {}).get("device")
    p3 = [min(ratio(r["h2d_gbps"], r["host_memcpy_gbps"]),
              ratio(r["d2h_gbps"], r["host_memcpy_gbps"]))
          for r in res["copy"] if r["size"] >= 4 << 20 and r["host_memcpy_gbps"]]
    return {
        "P1_min_device_over_roofline_from_16M": min(p1) if p1 else None,
        "P1_min_device_over_openmpi_from_256K": min(p1_mpi) if p1_mpi else None,
        "P2_allreduce_8B_4_chips_us": lat4,
        "P3_min_copy_over_memcpy_from_4M": min(p3) if p3 else None,
        "met": {
            "P1": bool(p1) and min(p1) >= 0.8 and bool(p1_mpi) and min(p1_mpi) >= 1,
            "P2": lat4 is not None and lat4 <= 50,
            "P3": bool(p3) and min(p3) >= 0.8,
        },
    }


def group_fw(raw):
    """Issue 44's G1 in the firmware alone (group_fw.c): the median times
    of one 8-byte allreduce and of a GROUP of them on 4 in-process chips,
    and the median of the blocks' group/one ratios, with the group's
    members each on its own and fused; None where not run."""
    path = os.path.join(raw, "group-fw.txt")
    if not os.path.exists(path):
        return None
    with open(path) as fh:
        m = re.search(r"^group-fw one_us=([0-9.]+) group_us=([0-9.]+) ratio=([0-9.]+) "
                      r"fused_us=([0-9.]+) fused_ratio=([0-9.]+) members=(\d+)",
                      fh.read(), re.M)
    if not m:
        sys.exit("bench: no group-fw line in %s" % path)
    return {"one_us": float(m.group(1)), "group_us": float(m.group(2)),
            "group_over_one": float(m.group(3)), "fused_us": float(m.group(4)),
            "fused_over_one": float(m.group(5)), "members": int(m.group(6))}


def any_rank_targets(res):
    """Issue 44's targets: routed messages at 2 hops against 1, from 1
    MiB; alltoall against host Open MPI's on 4 and 8 chips, from 1 MiB;
    32 allreduces of 8 bytes in one group against one, on 4 chips, each
    on its own and fused (NNP_GROUP_FUSION=1): the group's time is 32
    times nnptool bench -m's time per collective."""
    routed, a2a, a2a_guest = [], [], []
    for n, per in res["n"].items():
        dev = per["device"]
        if "sendrecv1" in dev and "sendrecv2" in dev:
            routed += [ratio(dev["sendrecv2"][z]["out_of_place"]["busbw_gbps"],
                             dev["sendrecv1"][z]["out_of_place"]["busbw_gbps"])
                       for z in dev["sendrecv2"] if z >= 1 << 20 and z in dev["sendrecv1"]]
        if n in ("4", "8"):
            mpi = per["openmpi"]["alltoall"]
            a2a += [ratio(dev["alltoall"][z]["out_of_place"]["busbw_gbps"],
                          mpi[z]["busbw_gbps"])
                    for z in dev["alltoall"] if z >= 1 << 20 and z in mpi]
            gmpi = per["guest_openmpi"].get("alltoall", {})
            a2a_guest += [ratio(dev["alltoall"][z]["out_of_place"]["busbw_gbps"],
                                gmpi[z]["busbw_gbps"])
                          for z in dev["alltoall"] if z >= 1 << 20 and z in gmpi]
    dev4 = res["n"].get("4", {}).get("device", {})
    one = dev4.get("allreduce", {}).get(8)
    g1, g1_model = {}, {}
    for fusion in ("0", "1"):
        group = dev4.get("group32-fusion" + fusion, {}).get(8)
        if one and group:
            o, g = one["out_of_place"], group["out_of_place"]
            g1[fusion] = ratio(32 * g["time_us"], o["time_us"])
            g1_model[fusion] = ratio(32 * g["model_time_us"], o["model_time_us"])
    return {
        "R1_min_2_hops_over_1_hop_from_1M": min(routed) if routed else None,
        "A1_min_alltoall_over_openmpi_from_1M_n4_n8": min(a2a) if a2a else None,
        "A1_min_alltoall_over_guest_openmpi_from_1M_n4_n8": min(a2a_guest) if a2a_guest else None,
        "G1_group_of_32_8B_allreduces_over_one_n4": g1.get("0"),
        "G1_modeled": g1_model.get("0"),
        "G1_fused_group_over_one_n4": g1.get("1"),
        "G1_fused_modeled": g1_model.get("1"),
        "G1_firmware_alone": res.get("group_fw"),
        "met": {
            "R1": bool(routed) and min(routed) >= 0.8,
            "A1": bool(a2a) and min(a2a) >= 1,
            "G1": g1.get("0") is not None and g1["0"] <= 4,
            "G1_fused": g1.get("1") is not None and g1["1"] <= 4,
        },
    }


def dmabuf_targets(res):
    """Issue 47's target D1, as met or not by this run: device 1's memory
    copied into device 0's through a dma-buf, against device 0's own
    device-to-device copy and against the copy staged through host memory."""
    rows = [r for r in res["copy"] if r.get("peer_gbps") is not None]
    own = [ratio(r["peer_gbps"], r["d2d_gbps"]) for r in rows if r["size"] >= 4 << 20]
    staged = [ratio(r["peer_gbps"], r["staged_gbps"]) for r in rows if r["size"] >= 64 << 10]
    return {
        "D1_min_peer_over_own_d2d_from_4M": min(own) if own else None,
        "D1_min_peer_over_staged_from_64K": min(staged) if staged else None,
        "met": {"D1": bool(own) and min(own) >= 0.8 and bool(staged) and min(staged) > 1},
    }


def small_path_targets(res):
    """Issue 28's targets S1-S4, as met or not by this run."""
    n4 = res["n"].get("4", {})
    lat = n4.get("device", {}).get("allreduce", {}).get(8, {}).get("out_of_place")
    mpi8 = n4.get("latency_8B_us", {}).get("openmpi")
    s1 = ratio(lat["time_us"], mpi8) if lat and mpi8 else None
    spread = ratio(lat["worst_time_us"], lat["time_us"]) \
        if lat and "worst_time_us" in lat else None
    s2 = []
    for n in ("2", "4", "8"):
        per = res["n"].get(n)
        if not per:
            continue
        dev, mpi = per["device"]["allreduce"], per["openmpi"]["allreduce"]
        s2 += [ratio(dev[z]["out_of_place"]["busbw_gbps"], mpi[z]["busbw_gbps"])
               for z in dev if z >= 64 << 10 and z in mpi]
    s3 = [min(ratio(r["h2d_gbps"], r["host_memcpy_gbps"]),
              ratio(r["d2h_gbps"], r["host_memcpy_gbps"]))
          for r in res["copy"] if r["size"] >= 1 << 20 and r["host_memcpy_gbps"]]
    s4 = res.get("example_allreduce_ms")
    return {
        "S1_allreduce_8B_4_chips_over_openmpi": s1,
        "S1_spread_of_3_trials": spread,
        "S2_min_device_over_openmpi_from_64K": min(s2) if s2 else None,
        "S3_min_copy_over_memcpy_from_1M": min(s3) if s3 else None,
        "S4_example_allreduce_ms": s4,
        "met": {
            "S1": s1 is not None and s1 <= 4 and spread is not None and spread <= 1.5,
            "S2": bool(s2) and min(s2) >= 1,
            "S3": bool(s3) and min(s3) >= 0.9,
            "S4": s4 is not None and s4 <= 1,
        },
    }


def print_tables(res):
    roof = res["roofline"]
    print("# make bench, %s, %s (%d cores), commit %s" % (
        res["date"], res["cpu_model"], res["cores"], res["git_commit"]))
    print("# load average at start: %s; at end: %s" % (
        res["load_average_start"], res["load_average_end"]))
    print("# roofline: B = %.2f GB/s (copy, read+write, %d threads); "
          "allreduce busbw <= 2B/(5n) = %s" % (
              roof["B_gbps"], roof["threads"], ", ".join(
                  "%.2f (n=%s)" % (v, n) for n, v in roof["allreduce_busbw_gbps"].items())))
    for n, per in res["n"].items():
        r = roof["allreduce_busbw_gbps"][n]
        dev, mpi = per["device"]["allreduce"], per["openmpi"]["allreduce"]
        lat = per["latency_8B_us"]
        print("\n## n = %s: allreduce, float sum, busbw in GB/s (roofline %.3f; modeled: the devices as NNP-Ts, on their modeled clock)" % (n, r))
        print("%8s %9s %9s %9s %9s %8s %8s %9s" % ("size", "device", "in place", "Open MPI",
                                                  "roofline", "dev/roof", "dev/MPI",
                                                  "modeled"))
        for size in sorted(dev):
            d = dev[size]["out_of_place"]["busbw_gbps"]
            m = mpi.get(size, {}).get("busbw_gbps", float("nan"))
            print("%8s %9.4f %9.4f %9.4f %9.3f %7.3fx %7.3fx %9.3f" % (
                human(size), d, dev[size]["in_place"]["busbw_gbps"], m, r,
                ratio(d, r), ratio(d, m), dev[size]["out_of_place"]["model_busbw_gbps"]))
        print("8-byte allreduce: device %.1f us, Open MPI %.1f us (device/Open MPI time %.1fx)"
              % (lat["device"], lat["openmpi"], ratio(lat["device"], lat["openmpi"])))
        if "host_per_8B_allreduce" in per:
            print("8-byte allreduce: %.1f host context switches, %.2f CPU migrations each"
                  % (per["host_per_8B_allreduce"]["context_switches"],
                     per["host_per_8B_allreduce"]["cpu_migrations"]))
        print("\n## n = %s: other collectives, busbw in GB/s, device / Open MPI (ratio)" % n)
        others = COLLS[1:]
        print("%8s" % "size" + "".join(" %26s" % c for c in others))
        sizes = sorted(set().union(*(per["device"][c] for c in others)))
        for size in sizes:
            cells = []
            for c in others:
                d = per["device"][c].get(size, {}).get("out_of_place", {}).get("busbw_gbps")
                m = per["openmpi"][c].get(size, {}).get("busbw_gbps")
                cells.append("%7.4f /%7.4f (%6.3fx)" % (d, m, ratio(d, m))
                             if d is not None and m is not None else "-")
            print("%8s" % human(size) + "".join(" %26s" % c for c in cells))
        print_guest_mpi(n, per)
    if res["copy"]:
        print("\n## host<->device copies (n = %s VM), GB/s copied once, "
              "against one host thread's memcpy" % next(iter(res["n"])))
        print("%8s %9s %9s %9s %9s %8s %8s %9s %9s" % ("size", "h2d", "d2h", "d2d", "memcpy",
                                                     "h2d/mc", "d2h/mc", "peer", "staged"))
        for row in res["copy"]:
            mc = row["host_memcpy_gbps"] or float("nan")
            peer = [row[k] if row.get(k) is not None else float("nan")
                    for k in ("peer_gbps", "staged_gbps")]
            print("%8s %9.3f %9.3f %9.3f %9.3f %7.2fx %7.2fx %9.3f %9.3f" % (
                human(row["size"]), row["h2d_gbps"], row["d2h_gbps"], row["d2d_gbps"],
                mc, ratio(row["h2d_gbps"], mc), ratio(row["d2h_gbps"], mc), *peer))
    t = res["targets"]

    def fmt(v, spec):
        return "n/a" if v is None else spec % v
    print("\n## issue 8 targets")
    print("P1 %s: device/roofline from 16M, lowest %s (want >= 0.80x); "
          "device/Open MPI from 256K, lowest %s (want >= 1.00x)" % (
              "met" if t["met"]["P1"] else "NOT met",
              fmt(t["P1_min_device_over_roofline_from_16M"], "%.2fx"),
              fmt(t["P1_min_device_over_openmpi_from_256K"], "%.2fx")))
    print("P2 %s: 8-byte allreduce on 4 chips %s (want <= 50 us)" % (
        "met" if t["met"]["P2"] else "NOT met", fmt(t["P2_allreduce_8B_4_chips_us"], "%.1f us")))
    print("P3 %s: copies/memcpy from 4M, lowest %s (want >= 0.80x)" % (
        "met" if t["met"]["P3"] else "NOT met",
        fmt(t["P3_min_copy_over_memcpy_from_4M"], "%.2fx")))
    t = res["any_rank_targets"]
    print("\n## issue 44 targets")
    print("R1 %s: a message 2 hops away (routed) over one to a neighbour, busbw from 1M, "
          "lowest %s (want >= 0.80x)" % ("met" if t["met"]["R1"] else "NOT met",
                                         fmt(t["R1_min_2_hops_over_1_hop_from_1M"], "%.2fx")))
    print("A1 %s: alltoall busbw over host Open MPI's on 4 and 8 chips from 1M, lowest %s "
          "(want >= 1.00x); over the guest's own Open MPI, lowest %s" % (
              "met" if t["met"]["A1"] else "NOT met",
              fmt(t["A1_min_alltoall_over_openmpi_from_1M_n4_n8"], "%.2fx"),
              fmt(t["A1_min_alltoall_over_guest_openmpi_from_1M_n4_n8"], "%.2fx")))
    print("G1 %s: 32 allreduces of 8 bytes in one group over one, 4 chips, %s "
          "(want <= 4x; modeled %s)" % ("met" if t["met"]["G1"] else "NOT met",
                                        fmt(t["G1_group_of_32_8B_allreduces_over_one_n4"], "%.1fx"),
                                        fmt(t["G1_modeled"], "%.1fx")))
    print("G1 with NNP_GROUP_FUSION=1 %s: the same group run as one allreduce, %s "
          "(want <= 4x; modeled %s)" % ("met" if t["met"]["G1_fused"] else "NOT met",
                                        fmt(t["G1_fused_group_over_one_n4"], "%.1fx"),
                                        fmt(t["G1_fused_modeled"], "%.1fx")))
    fw = t["G1_firmware_alone"]
    if fw:
        print("G1 in the firmware alone: a group of %d over one, %.1fx each on its own, "
              "%.1fx fused (%.1f and %.1f us against %.1f us)"
              % (fw["members"], fw["group_over_one"], fw["fused_over_one"],
                 fw["group_us"], fw["fused_us"], fw["one_us"]))
    t = res["dmabuf_targets"]
    print("\n## issue 47 targets")
    print("D1 %s: a copy from another device's memory through a dma-buf, over the device's "
          "own copy from 4M, lowest %s (want >= 0.80x); over the copy staged through host "
          "memory from 64K, lowest %s (want > 1.00x)" % (
              "met" if t["met"]["D1"] else "NOT met",
              fmt(t["D1_min_peer_over_own_d2d_from_4M"], "%.2fx"),
              fmt(t["D1_min_peer_over_staged_from_64K"], "%.2fx")))
    t = res["small_path_targets"]
    print("\n## issue 28 targets")
    print("S1 %s: 8-byte allreduce on 4 chips %s of Open MPI's time (want <= 4x), "
          "slowest of 3 trials %s of the best (want <= 1.5x)" % (
              "met" if t["met"]["S1"] else "NOT met",
              fmt(t["S1_allreduce_8B_4_chips_over_openmpi"], "%.1fx"),
              fmt(t["S1_spread_of_3_trials"], "%.2fx")))
    print("S2 %s: device/Open MPI busbw from 64K at n = 2, 4, 8, lowest %s (want >= 1.00x)" % (
        "met" if t["met"]["S2"] else "NOT met",
        fmt(t["S2_min_device_over_openmpi_from_64K"], "%.2fx")))
    print("S3 %s: copies/memcpy from 1M, lowest %s (want >= 0.90x)" % (
        "met" if t["met"]["S3"] else "NOT met",
        fmt(t["S3_min_copy_over_memcpy_from_1M"], "%.2fx")))
    print("S4 %s: the training example's allreduce with its copies, 4 ranks in one guest, "
          "%s each (want <= 1 ms)" % (
              "met" if t["met"]["S4"] else "NOT met",
              fmt(t["S4_example_allreduce_ms"], "%.2f ms")))
    split = res.get("example_split")
    if split:
        print("   traced, medians of %d: %.2f ms from the last rank's call to the first rank's "
              "return, %.2f ms from the first rank's return to the last's" % (
                  split["allreduces"], split["last_call_to_first_return_ms"],
                  split["first_to_last_return_ms"]))
    pod = res.get("pod") or {}
    one = (pod.get("one") or {}).get("busbw_gbps")
    if one:
        print("POD: a 64 MiB allreduce on 4 chips, busbw in one QEMU %.2f GB/s; across 2 "
              "chassis over unix sockets %s, over TCP %s (of one QEMU's)" % (
                  one, *(fmt(ratio(pod[k]["busbw_gbps"], one), "%.2fx")
                         if pod.get(k) else "n/a" for k in ("unix", "tcp"))))
    check = res.get("call_check")
    if check and check["firmware_alone"]:
        fw = check["firmware_alone"]
        print("\n## issue 46 target")
        print("C1 %s: the call check's cost, an 8-byte allreduce on 4 chips with it on over "
              "off, in the firmware alone %.3fx (%.3f us on, %.3f us off; want <= 1.02x: "
              "a bound on its share in a VM)" % (
                  "met" if fw["on_over_off"] <= 1.02 else "NOT met", fw["on_over_off"],
                  fw["on_us"], fw["off_us"]))
        print("   in one VM, median of %d rounds %.3fx, the rounds %.3fx..%.3fx (their noise; "
              "medians %.1f us on, %.1f us off)" % (
                  check["rounds"], check["median_on_over_off"], min(check["on_over_off"]),
                  max(check["on_over_off"]), check["median_on_us"], check["median_off_us"]))
    if res["torch"]:
        report_torch.print_tables(res["torch"], human)


def print_guest_mpi(n, per):
    """The devices against the guest's own Open MPI in the same VM."""
    gmpi = per["guest_openmpi"]
    if not gmpi:
        return
    print("\n## n = %s: device / the guest's own Open MPI in the same VM, busbw "
          "(the guest's Open MPI in GB/s)" % n)
    print("%8s" % "size" + "".join(" %20s" % c for c in COLLS))
    for size in sorted(set().union(*gmpi.values())):
        cells = []
        for c in COLLS:
            d = per["device"][c].get(size, {}).get("out_of_place", {}).get("busbw_gbps")
            g = gmpi.get(c, {}).get(size, {}).get("busbw_gbps")
            cells.append("%8.2fx (%7.4f)" % (ratio(d, g), g)
                         if d is not None and g is not None else "-")
        print("%8s" % human(size) + "".join(" %20s" % c for c in cells))
    lat = per["latency_8B_us"]
    if lat["guest_openmpi"]:
        print("8-byte allreduce: device %.1f us, the guest's Open MPI %.1f us "
              "(device/guest Open MPI time %.2fx)" % (
                  lat["device"], lat["guest_openmpi"],
                  ratio(lat["device"], lat["guest_openmpi"])))


def summary(res):
    """The README's table in Markdown: one row per n, and the copies."""
    roof = res["roofline"]
    lines = ["%s, %s (%d cores), commit %s; load average %s at the start." % (
                 res["date"][:10], res["cpu_model"], res["cores"], res["git_commit"][:12],
                 res["load_average_start"].split(",")[0]),
             "B = %.1f GB/s (copy, read+write, all cores)." % roof["B_gbps"], "",
             "| n | roofline 2B/(5n) | device busbw at 16 MiB | of roofline "
             "| Open MPI at 16 MiB | device / Open MPI, 256 KiB..64 MiB "
             "| 8-byte allreduce, device / Open MPI |",
             "|---|---|---|---|---|---|---|"]
    for n, per in res["n"].items():
        r = roof["allreduce_busbw_gbps"][n]
        dev, mpi = per["device"]["allreduce"], per["openmpi"]["allreduce"]
        d16 = dev.get(16 << 20, {}).get("out_of_place", {}).get("busbw_gbps")
        m16 = mpi.get(16 << 20, {}).get("busbw_gbps")
        rs = [ratio(dev[z]["out_of_place"]["busbw_gbps"], mpi[z]["busbw_gbps"])
              for z in dev if z >= 256 << 10 and z in mpi]
        lat = per["latency_8B_us"]
        lines.append("| %s | %.2f GB/s | %s | %s | %s | %s | %.0f us / %.1f us |" % (
            n, r, "-" if d16 is None else "%.2f GB/s" % d16,
            "-" if d16 is None else "%.0f%%" % (100 * d16 / r),
            "-" if m16 is None else "%.2f GB/s" % m16,
            "%.2fx .. %.2fx" % (min(rs), max(rs)) if rs else "-",
            lat["device"], lat["openmpi"]))
    big = [row for row in res["copy"] if row["size"] >= 4 << 20]
    if big:
        lines += ["", "Host<->device copies from 4 MiB up, against one host thread's "
                  "memcpy: " + "; ".join(
                      "%s h2d %.2f, d2h %.2f, memcpy %.2f GB/s" % (
                          human(row["size"]), row["h2d_gbps"], row["d2h_gbps"],
                          row["host_memcpy_gbps"]) for row in big) + "."]
    return "\n".join(lines) + "\n"


def plot(res, out):
    """busbw.png: allreduce busbw against size, one panel per n."""
    ns = list(res["n"])
    top = {}
    script = ["set terminal pngcairo size %d,520 font 'sans,11'" % (480 * len(ns)),
              "set output '%s'" % os.path.join(out, "busbw.png"),
              "set multiplot layout 1,%d title 'allreduce busbw, %s (%d cores), %s'"
              % (len(ns), res["cpu_model"], res["cores"], res["date"][:10]),
              "set logscale x 2", "set grid", "set key top left box opaque",
              "set xlabel 'size (bytes)'", "set ylabel 'busbw (GB/s)'",
              "set xtics (%s)" % ", ".join('"%s" %d' % (human(1 << k), 1 << k)
                                          for k in range(4, 27, 4))]
    for n in ns:
        per = res["n"][n]
        dat = os.path.join(out, "busbw-%s.dat" % n)
        with open(dat, "w") as fh:
            fh.write("# size device device_in_place openmpi\n")
            dev, mpi = per["device"]["allreduce"], per["openmpi"]["allreduce"]
            # Room above the data and the roofline for the key.
            top[n] = 1.5 * max([res["roofline"]["allreduce_busbw_gbps"][n]] +
                               [r["busbw_gbps"] for r in mpi.values()] +
                               [p["busbw_gbps"] for r in dev.values() for p in r.values()])
            for size in sorted(dev):
                fh.write("%d %.4f %.4f %s\n" % (
                    size, dev[size]["out_of_place"]["busbw_gbps"],
                    dev[size]["in_place"]["busbw_gbps"],
                    mpi[size]["busbw_gbps"] if size in mpi else "NaN"))
        roof = res["roofline"]["allreduce_busbw_gbps"][n]
        script += ["set title 'n = %s chips / ranks'" % n, "set yrange [0:%f]" % top[n],
                   "plot '%s' u 1:2 w lp lw 2 pt 7 t 'device', "
                   "'' u 1:3 w lp lw 1 dt 2 pt 6 t 'device in place', "
                   "'' u 1:4 w lp lw 2 pt 5 t 'host Open MPI', "
                   "%f w l lw 2 dt 3 lc rgb 'black' t 'roofline 2B/(5n)'" % (dat, roof)]
    script.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)


def as_json(res):
    """@res with each {size: row} table as a list of rows by size."""
    doc = dict(res, n={})
    for n, per in res["n"].items():
        doc["n"][n] = dict(per, **{who: {c: [dict(size=size, **rows[size])
                                             for size in sorted(rows)]
                                         for c, rows in per[who].items()}
                                   for who in ("device", "openmpi", "guest_openmpi")})
    return doc


def main():
    out = sys.argv[1]
    res = load(out)
    res["targets"] = targets(res)
    res["targets"]["torch"] = report_torch.targets(res["torch"])
    res["small_path_targets"] = small_path_targets(res)
    res["any_rank_targets"] = any_rank_targets(res)
    res["dmabuf_targets"] = dmabuf_targets(res)
    bad = wrong_results(res) + report_torch.wrong(res["torch"])
    res["wrong"] = bad
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump(as_json(res), fh, indent=1)
        fh.write("\n")
    with open(os.path.join(out, "summary.md"), "w") as fh:
        fh.write(summary(res))
    print_tables(res)
    plot(res, out)
    print("\nwrote %s, %s and %s" % tuple(os.path.join(out, f) for f in (
        "results.json", "busbw.png", "summary.md")))
    if bad:
        print("bench: wrong results: %s" % "; ".join(bad), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
