# SPDX-License-Identifier: MIT
"""The torch part of make bench's report (tests/bench/report.py), and
make torch-bench's whole report (report_torch.py BENCH_DIR): the guest's
torch-N.txt from tests/bench/torch_bench.py, as busbw of each collective
on "nnp" and on "gloo" by size, their ratio, the training steps on each,
and the targets: T1, nnp's all_reduce at least 2x gloo's busbw from 1 MiB
(issue 26); T3, the same for all_reduce, all_gather, reduce_scatter and
all_to_all (issue 45); T2, every training step (DDP, and FSDP on torch
2.x) no slower on nnp than on gloo."""
import json
import os
import sys

# nccl-tests' busbw per algbw: what each rank's links must carry.
BUSBW_FACTOR = {"all_reduce": lambda n: 2 * (n - 1) / n,
                "all_gather": lambda n: (n - 1) / n,
                "reduce_scatter": lambda n: (n - 1) / n,
                "all_to_all": lambda n: (n - 1) / n}
FROM = 1 << 20


def load(raw, device_allreduce=lambda n: {}):
    """{n: {...}} from raw/torch-N.txt; @device_allreduce(n) gives the
    devices' own allreduce rows of that run ({size: row}) to compare with."""
    res = {}
    for name in sorted(os.listdir(raw)):
        if not (name.startswith("torch-") and name.endswith(".txt")):
            continue
        n = int(name[6:-4])
        per = {"ops": {}, "unsupported": {}, "steps": {}, "failed": [], "torch": None}
        with open(os.path.join(raw, name), errors="replace") as fh:
            for line in fh:
                if line.startswith("TORCHBENCH FAIL"):
                    per["failed"].append(line.strip())
                if line.startswith("TORCHBENCH torch "):
                    per["torch"] = line.split()[2]
                if not line.startswith("TORCHBENCH {"):
                    continue
                row = json.loads(line.split(" ", 1)[1])
                if "wrapper" in row:
                    # A model whose job failed is named with no figure.
                    model = per["steps"].setdefault("%s --hidden %d --batch %d" % (
                        row["wrapper"], row["hidden"], row["batch"]), {})
                    if "step_ms" in row:
                        model["grad_bytes"] = row["grad_bytes"]
                        model[row["backend"]] = row["step_ms"]
                    continue
                if "unsupported" in row:
                    per["unsupported"].setdefault(row["op"], {})[row["backend"]] = \
                        row["unsupported"]
                    continue
                row["busbw_gbps"] = (BUSBW_FACTOR[row["op"]](n) * row["size"]
                                     / row["time_us"] / 1e3)
                per["ops"].setdefault(row["op"], {}).setdefault(
                    row["backend"], {})[row["size"]] = row
        device = device_allreduce(n)
        nnp = per["ops"].get("all_reduce", {}).get("nnp", {})
        per["device_time_us"] = {size: device[size]["out_of_place"]["time_us"]
                                 for size in nnp if size in device}
        res[str(n)] = per
    return res


def lowest_ratio(per, op):
    """nnp's busbw over gloo's for @op, lowest from FROM up, or None."""
    rows = per["ops"].get(op, {})
    nnp, gloo = rows.get("nnp", {}), rows.get("gloo", {})
    ratios = [nnp[z]["busbw_gbps"] / gloo[z]["busbw_gbps"]
              for z in nnp if z >= FROM and z in gloo]
    return min(ratios) if ratios else None


def targets(res):
    """On 4 chips: each collective's lowest nnp/gloo busbw ratio from 1 MiB
    (want >= 2) and the training steps on each backend (want nnp's no
    longer than gloo's)."""
    per = res.get("4")
    if not per:
        return None
    lowest = {op: lowest_ratio(per, op) for op in BUSBW_FACTOR}
    steps = {m: d for m, d in per["steps"].items() if "nnp" in d and "gloo" in d}
    return {"torch": per["torch"],
            "lowest_nnp_over_gloo_from_1M": lowest,
            "steps": per["steps"],
            "met": {"T1": lowest["all_reduce"] is not None and lowest["all_reduce"] >= 2,
                    "T3": all(v is not None and v >= 2 for v in lowest.values()),
                    "T2": bool(steps) and len(steps) == len(per["steps"]) and
                    all(d["nnp"] <= d["gloo"] for d in steps.values())}}


def wrong(res):
    bad = []
    for n, per in res.items():
        bad += per["failed"]
        bad += ["torch %s %s n=%s %d B" % (b, op, n, z)
                for op, backends in per["ops"].items()
                for b, rows in backends.items()
                for z, row in rows.items() if row["wrong"]]
    return bad


def human(size):
    for unit, shift in (("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return "%d%s" % (size >> shift, unit)
    return str(size)


def print_op(op, rows, device_time_us, human):
    nnp, gloo = rows.get("nnp", {}), rows.get("gloo", {})
    print("%8s %9s %9s %9s %11s %11s %9s" % ("size", "nnp", "gloo", "nnp/gloo",
                                               "nnp us", "device us", "device/nnp"))
    for size in sorted(set(nnp) | set(gloo)):
        a, b = nnp.get(size), gloo.get(size)
        dev = device_time_us.get(size) if op == "all_reduce" else None
        print("%8s %9s %9s %9s %11s %11s %9s" % (
            human(size),
            "%.4f" % a["busbw_gbps"] if a else "-",
            "%.4f" % b["busbw_gbps"] if b else "-",
            "%.2fx" % (a["busbw_gbps"] / b["busbw_gbps"]) if a and b else "-",
            "%.1f" % a["time_us"] if a else "-",
            "%.1f" % dev if dev else "-",
            "%.2fx" % (dev / a["time_us"]) if a and dev else "-"))


def print_tables(res, human=human):
    for n, per in res.items():
        for op, rows in per["ops"].items():
            print("\n## n = %s, torch %s: torch.distributed %s (float32%s), busbw in GB/s%s" % (
                n, per["torch"] or "?", op, " sum" if op in ("all_reduce", "reduce_scatter")
                else "", "; the devices' own allreduce time against nnp's (the staging's cost)"
                if op == "all_reduce" and per["device_time_us"] else ""))
            print_op(op, rows, per["device_time_us"], human)
        for op, backends in per["unsupported"].items():
            for backend, why in backends.items():
                print("\n## n = %s, torch %s: %s on %s: not measured (%s)" % (
                    n, per["torch"] or "?", op, backend, why))
        for model, d in per["steps"].items():
            print("training step, examples/ddp_fashion_mnist %s (%s), "
                  "the slowest rank's, median: nnp %s, gloo %s, gloo/nnp %s" % (
                      model, "%.2f MB of gradients" % (d["grad_bytes"] / 1e6)
                      if "grad_bytes" in d else "its job failed",
                      "%.1f ms" % d["nnp"] if "nnp" in d else "n/a",
                      "%.1f ms" % d["gloo"] if "gloo" in d else "n/a",
                      "%.2fx" % (d["gloo"] / d["nnp"]) if "nnp" in d and "gloo" in d else "-"))
    t = targets(res)
    if not t:
        return
    low = t["lowest_nnp_over_gloo_from_1M"]
    shown = ", ".join("%s %s" % (op, "n/a" if v is None else "%.2fx" % v) for op, v in low.items())
    print("T1 %s: torch all_reduce nnp/gloo busbw from 1M on 4 chips, lowest %s "
          "(want >= 2.00x)" % ("met" if t["met"]["T1"] else "NOT met",
                               "n/a" if low["all_reduce"] is None else
                               "%.2fx" % low["all_reduce"]))
    print("T3 %s: every collective's nnp/gloo busbw from 1M on 4 chips, lowest: %s "
          "(want >= 2.00x each)" % ("met" if t["met"]["T3"] else "NOT met", shown))
    print("T2 %s: no training step longer on nnp (want gloo/nnp >= 1.00x for each)" % (
        "met" if t["met"]["T2"] else "NOT met"))


def main(out):
    """make torch-bench: the tables and targets of OUT/raw, OUT/results.json;
    exit 1 if any result was wrong or a rank failed."""
    raw = os.path.join(out, "raw")
    res = load(raw)
    for when in ("start", "end"):
        path = os.path.join(raw, "load-%s.txt" % when)
        if os.path.exists(path):
            with open(path) as fh:
                print("load at the %s: %s" % (when, fh.read().split("load average:")[-1].strip()))
    print_tables(res)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump({"torch": res, "targets": targets(res)}, fh, indent=1)
    bad = wrong(res)
    for line in bad:
        print("WRONG: " + line)
    return 1 if bad or not res else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
