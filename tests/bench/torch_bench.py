#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch.distributed on "nnp" against "gloo" in one guest (make bench and
make torch-bench, tests/bench/torch_run.sh; tests/bench/report_torch.py
reads the output).

torch_bench.py WORLD MIN_BYTES MAX_BYTES DDP_STEPS

Imports torch once, then for each backend forks WORLD ranks
(tests/lib/torch_ranks.py) that time each of OPS on float32 tensors from
MIN_BYTES to MAX_BYTES in powers of 4 (the size in nccl-tests' terms: the
buffer of all_reduce and all_to_all_single, all_gather_into_tensor's
output, reduce_scatter_tensor's input); then, for each model of
examples/ddp_fashion_mnist/train.py (MODELS: as it is, and a wide first
layer on few images) under DistributedDataParallel and, on torch 2.x,
under FullyShardedDataParallel, forks WORLD ranks that train it on both
backends in turn, DDP_STEPS steps each, timing each step.
Per size, a timing is as many calls as move 64 MiB (1 to 10), timed from
a barrier on every rank; the slowest rank's time is the trial's, and the
best of 3 trials is the result. Every result is checked exactly after
each trial (all_reduce's input starts at 1 on every rank, so after k
calls every element must be WORLD^k; the others' outputs do not depend
on k): a wrong element is counted. A training step's time is the median
of steps 3 to the last (DDP rebuilds its buckets in the second), both
backends training in one job, a step each in turn (step_times()). Prints
one line per result:
    TORCHBENCH {"backend": B, "op": OP, "size": S, "time_us": T, "wrong": W, ...}
    TORCHBENCH {"backend": B, "op": OP, "unsupported": WHY}
    TORCHBENCH {"backend": B, "wrapper": "ddp"|"fsdp", "hidden": H, "batch": N,
                "grad_bytes": G, "step_ms": T, ...}
    TORCHBENCH {"wrapper": W, "hidden": H, "batch": N, "failed": true}
and "TORCHBENCH FAIL WHAT rank R: WHY" for a job that failed.
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
print(f"TORCHBENCH torch {torch.__version__}", flush=True)
TRIALS = 3
BYTES_PER_TIMING = 64 << 20
DEADLINE_S = 1800
# (--hidden, --batch): the example as it is (110 KB of gradients, 32
# images a step: in a TCG guest its step is the CPU's work), and a wide
# first layer on few images (1.7 MB, 4 images: the allreduce's share
# grows). Wider models cost seconds a step in the guest and show no more.
MODELS = ((64, 32), (1024, 4))
OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
BACKENDS = ("nnp", "gloo")
# torch 1.13's FSDP does not import on Debian 12's Python 3.11.
WRAPPERS = ("ddp", "fsdp") if int(torch.__version__.split(".")[0]) >= 2 else ("ddp",)


def op_tensors(op, rank, world, elems):
    """(calls, input, output, expected output after k calls) for @op over
    @elems float32 elements in nccl-tests' terms; calls are the forms to
    try, best first: torch 1.13's gloo has neither the tensor form of
    all_gather nor reduce_scatter at all."""
    if op == "all_reduce":
        t = torch.ones(elems)
        return [lambda: dist.all_reduce(t)], t, t, lambda k: float(world) ** k
    part = elems // world
    if op == "all_gather":
        inp, out = torch.full((part,), float(rank + 1)), torch.empty(elems)
        want = torch.arange(1, world + 1, dtype=torch.float32).repeat_interleave(part)
        calls = [lambda: dist.all_gather_into_tensor(out, inp),
                 lambda: dist.all_gather(list(out.chunk(world)), inp)]
    elif op == "reduce_scatter":
        inp, out = torch.full((elems,), float(rank + 1)), torch.empty(part)
        want = torch.full((part,), float(world * (world + 1) // 2))
        calls = [lambda: dist.reduce_scatter_tensor(out, inp),
                 lambda: dist.reduce_scatter(out, list(inp.chunk(world)))]
    else:  # all_to_all: chunk j of rank r's input is r * world + j, so
        # chunk j of its output must be j * world + r
        chunks = torch.arange(world, dtype=torch.float32) + rank * world
        inp, out = chunks.repeat_interleave(part), torch.empty(elems)
        want = (torch.arange(world, dtype=torch.float32) * world + rank).repeat_interleave(part)
        calls = [lambda: dist.all_to_all_single(out, inp)]
    return calls, inp, out, lambda k: want


def first_working(calls):
    """The first of @calls that runs (the first use of a size sets its
    buffers up), or the error of the last."""
    for call in calls:
        try:
            call()
            return call, None
        except RuntimeError as e:
            why = str(e).splitlines()[0]
    return None, why


def op_times(rank, world, backend, port, sizes):
    """{op: {size: ([seconds of each trial], wrong elements)}, or {op:
    why not} for a collective the backend lacks} on this rank."""
    torch.set_num_threads(1)
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    out = {}
    for op in OPS:
        out[op] = {}
        for size in sizes:
            iters = max(1, min(10, BYTES_PER_TIMING // size))
            calls, inp, res, want = op_tensors(op, rank, world, size // 4)
            call, why = first_working(calls)
            if not call:
                out[op] = why
                break
            times, wrong = [], 0
            for _ in range(TRIALS):
                if op == "all_reduce":
                    inp.fill_(1)
                else:
                    res.fill_(-1)
                dist.barrier()
                start = time.perf_counter()
                for _ in range(iters):
                    call()
                times.append(time.perf_counter() - start)
                wrong += int((res != want(iters)).sum())
            out[op][size] = (times, wrong)
    dist.destroy_process_group()
    return out


def step_times(rank, world, port, steps, wrapper, hidden, batch):
    """On this rank, the seconds each training step under @wrapper took on
    each backend, and the bytes of the gradients. Both backends train in
    one job, the same model from the same seed, a step each in turn (nnp
    then gloo, then gloo then nnp): the machine's load moves step times by
    a fifth between jobs a minute apart, which separate jobs would read as
    the backends' difference."""
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("nnp")
    torch.set_num_threads(1)
    groups = {"nnp": dist.group.WORLD, "gloo": dist.new_group(backend="gloo")}
    args = train.parse(["--hidden", str(hidden), "--batch", str(batch)])
    data = train.shard_data(args, rank, world)
    runs = {}
    for backend, group in groups.items():
        torch.manual_seed(0)
        net = train.Net(hidden)
        grad_bytes = sum(p.numel() * p.element_size() for p in net.parameters())
        model = train.wrap(net, wrapper == "fsdp", group)
        runs[backend] = (model, torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9))
    times = {backend: [] for backend in BACKENDS}
    for step in range(steps):
        for backend in BACKENDS if step % 2 == 0 else BACKENDS[::-1]:
            model, opt = runs[backend]
            start = time.perf_counter()
            train.train_step(model, opt, data, step, batch, groups[backend])
            times[backend].append(time.perf_counter() - start)
    dist.destroy_process_group()
    return times, grad_bytes


def run(fn, world, args, what):
    """@fn's reports of every rank, or None after printing why not, as
    "TORCHBENCH FAIL @what rank R: WHY"."""
    reports = fork_ranks(fn, world, args, DEADLINE_S)
    bad = [(r, reports[r][1] if r in reports else "no report within the deadline")
           for r in range(world) if not reports.get(r, (False,))[0]]
    for r, why in bad:
        print(f"TORCHBENCH FAIL {what} rank {r}: {why}", flush=True)
    return None if bad else [reports[r][1] for r in range(world)]


def time_ops(world, sizes, ports):
    """Each backend's OPS at every size, a line per result."""
    for backend in BACKENDS:
        ranks = run(op_times, world, (backend, next(ports), sizes), backend)
        for op in OPS if ranks else []:
            if isinstance(ranks[0][op], str):
                print("TORCHBENCH " + json.dumps({"backend": backend, "op": op,
                                                  "unsupported": ranks[0][op]}), flush=True)
                continue
            for size in sizes:
                trials = [max(r[op][size][0][i] for r in ranks) for i in range(TRIALS)]
                iters = max(1, min(10, BYTES_PER_TIMING // size))
                print("TORCHBENCH " + json.dumps({
                    "backend": backend, "op": op, "size": size, "iters": iters,
                    "time_us": round(min(trials) / iters * 1e6, 1),
                    "trials_us": [round(t / iters * 1e6, 1) for t in trials],
                    "wrong": sum(r[op][size][1] for r in ranks)}), flush=True)


def time_steps(world, steps, ports):
    """Each model's training steps on both backends (step_times()), a line
    per backend: the median from the third step (DDP rebuilds its buckets
    in the second) of the slowest rank's time of each step."""
    for wrapper in WRAPPERS:
        for hidden, batch in MODELS:
            model = {"wrapper": wrapper, "hidden": hidden, "batch": batch}
            ranks = run(step_times, world, (next(ports), steps, wrapper, hidden, batch),
                        f"steps {wrapper} --hidden {hidden} --batch {batch}")
            if not ranks:  # the model is named, with no figure: T2 fails
                print("TORCHBENCH " + json.dumps({**model, "failed": True}), flush=True)
                continue
            for backend in BACKENDS:
                per_step = [max(r[0][backend][i] for r in ranks) for i in range(2, steps)]
                print("TORCHBENCH " + json.dumps({
                    "backend": backend, **model, "grad_bytes": ranks[0][1], "steps": steps,
                    "step_ms": round(statistics.median(per_step) * 1e3, 2),
                    "steps_ms": [round(t * 1e3, 1) for t in per_step]}), flush=True)


def main():
    world, lo, hi, steps = (int(a) for a in sys.argv[1:5])
    sizes = []
    while lo <= hi:
        sizes.append(lo)
        lo *= 4
    ports = iter(range(29601, 29800))  # a fresh one per job
    time_ops(world, sizes, ports)
    time_steps(world, steps, ports)


if __name__ == "__main__":
    main()
