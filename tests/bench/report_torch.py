# SPDX-License-Identifier: MIT
"""The torch part of make bench's report (tests/bench/report.py): the
guest's torch-N.txt from tests/bench/torch_bench.py, as busbw of
all_reduce on "nnp" and on "gloo" by size, their ratio, the DDP step on
each, and the issue's target: nnp at least 2x gloo's busbw from 1 MiB up
and a shorter DDP step."""
import json
import os


def load(raw, device_allreduce):
    """{n: {...}} from raw/torch-N.txt; @device_allreduce(n) gives the
    devices' own allreduce rows of that run ({size: row}) to compare with."""
    res = {}
    for name in sorted(os.listdir(raw)):
        if not (name.startswith("torch-") and name.endswith(".txt")):
            continue
        n = int(name[6:-4])
        per = {"all_reduce": {"nnp": {}, "gloo": {}}, "ddp": {}, "failed": []}
        with open(os.path.join(raw, name), errors="replace") as fh:
            for line in fh:
                if line.startswith("TORCHBENCH FAIL"):
                    per["failed"].append(line.strip())
                if not line.startswith("TORCHBENCH {"):
                    continue
                row = json.loads(line.split(" ", 1)[1])
                if "ddp_step_ms" in row:
                    model = "--hidden %d --batch %d" % (row["hidden"], row["batch"])
                    per["ddp"].setdefault(model, {"grad_bytes": row["grad_bytes"]})[
                        row["backend"]] = row["ddp_step_ms"]
                    continue
                row["busbw_gbps"] = 2 * (n - 1) / n * row["size"] / row["time_us"] / 1e3
                per["all_reduce"][row["backend"]][row["size"]] = row
        device = device_allreduce(n)
        per["device_time_us"] = {size: device[size]["out_of_place"]["time_us"]
                                 for size in per["all_reduce"]["nnp"] if size in device}
        res[str(n)] = per
    return res


def targets(res):
    """nnp's busbw over gloo's from 1 MiB up on 4 chips (want >= 2) and
    the DDP step time on each, per model (want nnp's shorter)."""
    per = res.get("4")
    if not per:
        return None
    nnp, gloo = per["all_reduce"]["nnp"], per["all_reduce"]["gloo"]
    ratios = [nnp[z]["busbw_gbps"] / gloo[z]["busbw_gbps"]
              for z in nnp if z >= 1 << 20 and z in gloo]
    ddp = {h: d for h, d in per["ddp"].items() if "nnp" in d and "gloo" in d}
    return {"min_nnp_over_gloo_from_1M": min(ratios) if ratios else None,
            "ddp": per["ddp"],
            "met": {"busbw": bool(ratios) and min(ratios) >= 2,
                    "ddp": bool(ddp) and all(d["nnp"] < d["gloo"] for d in ddp.values())}}


def wrong(res):
    bad = []
    for n, per in res.items():
        bad += per["failed"]
        bad += ["torch %s all_reduce n=%s %d B" % (b, n, z)
                for b, rows in per["all_reduce"].items()
                for z, row in rows.items() if row["wrong"]]
    return bad


def print_tables(res, human):
    for n, per in res.items():
        nnp, gloo = per["all_reduce"]["nnp"], per["all_reduce"]["gloo"]
        print("\n## n = %s: torch.distributed all_reduce (float32 sum), busbw in GB/s; "
              "the devices' own allreduce time against nnp's (the staging's cost)" % n)
        print("%8s %9s %9s %9s %11s %11s %9s" % ("size", "nnp", "gloo", "nnp/gloo",
                                                   "nnp us", "device us", "device/nnp"))
        for size in sorted(set(nnp) | set(gloo)):
            a, b = nnp.get(size), gloo.get(size)
            dev = per["device_time_us"].get(size)
            print("%8s %9s %9s %9s %11s %11s %9s" % (
                human(size),
                "%.4f" % a["busbw_gbps"] if a else "-",
                "%.4f" % b["busbw_gbps"] if b else "-",
                "%.2fx" % (a["busbw_gbps"] / b["busbw_gbps"]) if a and b else "-",
                "%.1f" % a["time_us"] if a else "-",
                "%.1f" % dev if dev else "-",
                "%.2fx" % (dev / a["time_us"]) if a and dev else "-"))
        for model, d in per["ddp"].items():
            print("DDP step, examples/ddp_fashion_mnist %s (%.2f MB of gradients), "
                  "the slowest rank's, median: nnp %s, gloo %s, gloo/nnp %s" % (
                      model, d["grad_bytes"] / 1e6,
                      "%.1f ms" % d["nnp"] if "nnp" in d else "n/a",
                      "%.1f ms" % d["gloo"] if "gloo" in d else "n/a",
                      "%.2fx" % (d["gloo"] / d["nnp"]) if "nnp" in d and "gloo" in d else "-"))
    t = targets(res)
    if t:
        mn = t["min_nnp_over_gloo_from_1M"]
        print("T1 %s: torch all_reduce nnp/gloo busbw from 1M on 4 chips, lowest %s "
              "(want >= 2.00x)" % ("met" if t["met"]["busbw"] else "NOT met",
                                   "n/a" if mn is None else "%.2fx" % mn))
        print("T2 %s: DDP step shorter on nnp for every model (want gloo/nnp > 1.00x)" % (
            "met" if t["met"]["ddp"] else "NOT met"))
