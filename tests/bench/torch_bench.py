#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch.distributed on "nnp" against "gloo" in one guest (make bench,
tests/bench/run.sh; tests/bench/report_torch.py reads the output).

torch_bench.py WORLD MIN_BYTES MAX_BYTES DDP_STEPS

Imports torch once, then for each backend forks WORLD ranks
(tests/lib/torch_ranks.py) that time all_reduce of float32 sums from
MIN_BYTES to MAX_BYTES in powers of 4, and then train
examples/ddp_fashion_mnist/train.py for DDP_STEPS steps, timing each, with
its model as it is and with a wide first layer on few images (DDP_MODELS).
Per size, a timing is as many all_reduces as move 64 MiB (1 to 10), timed
from a barrier on every rank; the slowest rank's time is the trial's, and
the best of 3 trials is the result. The tensor starts at 1 on every rank,
so after k all_reduces every element must be WORLD^k, exactly: a wrong
element is counted. A DDP step's time is the median of steps 3 to the
last (DDP rebuilds its buckets in the second). Prints one line per result:
    TORCHBENCH {"backend": B, "size": S, "time_us": T, "wrong": W}
    TORCHBENCH {"backend": B, "hidden": H, "batch": N, "grad_bytes": G, "ddp_step_ms": T, ...}
or "TORCHBENCH FAIL B rank R: WHY".
"""
import json
import os
import statistics
import sys
import time

T0 = time.time()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch_nnp  # noqa: E402,F401  registers "nnp"

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "ddp_fashion_mnist"))
import train  # noqa: E402
from torch_ranks import fork_ranks  # noqa: E402

print(f"TORCHBENCH import torch, torch_nnp: {time.time() - T0:.0f} s", flush=True)
TRIALS = 3
BYTES_PER_TIMING = 64 << 20
DEADLINE_S = 1800
# (--hidden, --batch): the example as it is (110 KB of gradients, 32
# images a step: in a TCG guest its step is the CPU's work), and a wide
# first layer on few images (1.7 MB, 4 images: the allreduce's share
# grows). Wider models cost seconds a step in the guest and show no more.
DDP_MODELS = ((64, 32), (1024, 4))


def all_reduce_times(rank, world, backend, port, sizes):
    """{size: ([seconds of each trial], wrong elements)} on this rank."""
    torch.set_num_threads(1)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    out = {}
    for size in sizes:
        iters = max(1, min(10, BYTES_PER_TIMING // size))
        t = torch.ones(size // 4)
        dist.all_reduce(t)  # the first use of a size sets its buffers up
        times, wrong = [], 0
        for _ in range(TRIALS):
            t.fill_(1)
            dist.barrier()
            start = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t)
            times.append(time.perf_counter() - start)
            wrong += int((t != float(world) ** iters).sum())
        out[size] = (times, wrong)
    dist.destroy_process_group()
    return out


def ddp_step_times(rank, world, backend, port, steps, hidden, batch):
    """The seconds each step of the example's DDP training took on this rank,
    and the bytes of its gradients."""
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    ends = [time.perf_counter()]
    result = train.train(train.parse(["--backend", backend, "--steps", str(steps),
                                      "--hidden", str(hidden), "--batch", str(batch)]),
                         lambda step: ends.append(time.perf_counter()))
    return [b - a for a, b in zip(ends, ends[1:])], result["grad_bytes"]


def run(fn, world, args, backend):
    """@fn's reports of every rank, or None after printing why not."""
    reports = fork_ranks(fn, world, args, DEADLINE_S)
    bad = [(r, reports[r][1] if r in reports else "no report within the deadline")
           for r in range(world) if not reports.get(r, (False,))[0]]
    for r, why in bad:
        print(f"TORCHBENCH FAIL {backend} rank {r}: {why}", flush=True)
    return None if bad else [reports[r][1] for r in range(world)]


def main():
    world, lo, hi, steps = (int(a) for a in sys.argv[1:5])
    sizes = []
    while lo <= hi:
        sizes.append(lo)
        lo *= 4
    ports = iter(range(29601, 29700))  # a fresh one per job
    for backend in ("nnp", "gloo"):
        ranks = run(all_reduce_times, world, (backend, next(ports), sizes), backend)
        for size in sizes if ranks else []:
            trials = [max(r[size][0][i] for r in ranks) for i in range(TRIALS)]
            iters = max(1, min(10, BYTES_PER_TIMING // size))
            print("TORCHBENCH " + json.dumps({
                "backend": backend, "size": size, "iters": iters,
                "time_us": round(min(trials) / iters * 1e6, 1),
                "trials_us": [round(t / iters * 1e6, 1) for t in trials],
                "wrong": sum(r[size][1] for r in ranks)}), flush=True)
        for hidden, batch in DDP_MODELS:
            ranks = run(ddp_step_times, world, (backend, next(ports), steps, hidden, batch),
                        backend)
            if not ranks:
                continue
            # Steps 3 on: the slowest rank's time of each, then the median.
            per_step = [max(r[0][i] for r in ranks) for i in range(2, steps)]
            print("TORCHBENCH " + json.dumps({
                "backend": backend, "hidden": hidden, "batch": batch,
                "grad_bytes": ranks[0][1],
                "steps": steps, "ddp_step_ms": round(statistics.median(per_step) * 1e3, 2),
                "steps_ms": [round(t * 1e3, 1) for t in per_step]}), flush=True)


if __name__ == "__main__":
    main()
