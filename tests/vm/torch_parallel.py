#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Pipeline- and expert-parallel training on the guest's chips, against
gloo (torch_nnp.sh).

torch_parallel.py WORLD STEPS, or run(WORLD, STEPS) from a program that
has imported torch already (torch_collectives.py --parallel STEPS).

Imports torch once (a minute or more in a TCG guest), then for each of
the backends "nnp" and "gloo" forks WORLD ranks that train two small
models for STEPS steps:

- pipeline: an MLP cut into WORLD stages, stage r on rank r, MICRO
  microbatches a step in a GPipe schedule. At each tick a stage receives
  its next input (an activation forward, a gradient back) and sends its
  last output, the receive posted first in one batch_isend_irecv, as
  pipeline schedules post them.
- experts: a mixture-of-experts layer, expert e on rank e. Each rank's
  tokens go to their experts and back by all_to_all_single with uneven
  splits, some of them empty, through autograd (forward and backward);
  the splits themselves are exchanged by an all_to_all_single first.

Neither reduces anything across ranks, so nnp must give gloo's losses
and parameters bit for bit. Prints, per model, "PARALLEL MODEL: nnp =
gloo on every rank (STEPS losses)" or "PARALLEL MODEL: FAIL ..."; a rank
that failed or did not report is a FAIL. On torch 2.x a third model,
FullyShardedDataParallel, reduce-scatters its gradients: its losses must
be gloo's within FSDP_RTOL ("PARALLEL fsdp: ...").

On nnp, each model's traffic is checked too ("PARALLEL MODEL traffic:
..."): every rank's device moved exactly the bytes the model handed
torch.distributed over host DMA (each input staged in once, each output
out once, a message's tag with it), none to or from another device's
memory, and its links sent at least the bytes that had to leave the
rank (Traffic): the data went chip to chip, not through the host.
"""
import contextlib
import datetime
import hashlib
import json
import os
import subprocess
import sys
import time

T0 = time.time()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.distributed.nn.functional as dnn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import torch_nnp  # noqa: E402,F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from torch_ranks import fork_ranks  # noqa: E402

print(f"PARALLEL import torch, torch_nnp: {time.time() - T0:.0f} s", flush=True)
torch.set_num_threads(1)
DEADLINE_S = 90
D, BATCH, MICRO = 32, 16, 4         # pipeline: features, batch, microbatches
E_D, TOKENS = 16, 24                # experts: features, tokens per rank
FSDP_RTOL = 1e-5                    # FSDP: nnp's losses against gloo's
TORCH_MAJOR = int(torch.__version__.split(".")[0])
TAG_BYTES = 4                       # a message's tag travels after it


def nbytes(t):
    return t.numel() * t.element_size()


class Traffic:
    """What a model hands torch.distributed on this rank: the bytes nnp
    must stage between host and device (every input in once, every output
    out once) and the least that must leave this rank's chip over links
    (its messages; the chunks of an all_to_all for the others; its shard
    of an all_gather; one chunk of a reduce_scatter's input, its part
    towards the others' sums). Messages are counted by exchange(); the
    collectives, which autograd and FSDP call too, by wrapping them."""

    def __init__(self, rank, world):
        self.rank, self.world = rank, world
        self.staged = self.leave = 0

    def message(self, t, sent):
        self.staged += nbytes(t) + TAG_BYTES
        self.leave += (nbytes(t) + TAG_BYTES) if sent else 0

    def all_to_all_single(self, out, inp, output_split_sizes=None, input_split_sizes=None,
                          *a, **k):
        self.staged += nbytes(inp) + nbytes(out)
        row = nbytes(inp) // max(1, inp.shape[0])
        splits = input_split_sizes or [inp.shape[0] // self.world] * self.world
        self.leave += row * (sum(splits) - splits[self.rank])

    def all_gather_into_tensor(self, out, inp, *a, **k):
        self.staged += nbytes(inp) + nbytes(out)
        self.leave += nbytes(inp)

    def all_gather(self, outs, inp, *a, **k):  # FSDP's form on the CPU
        self.staged += nbytes(inp) + sum(nbytes(t) for t in outs)
        self.leave += nbytes(inp)

    def reduce_scatter_tensor(self, out, inp, *a, **k):
        self.staged += nbytes(inp) + nbytes(out)
        self.leave += nbytes(out)

    @contextlib.contextmanager
    def counting(self):
        """Count the collectives torch.distributed is asked for meanwhile."""
        names = ("all_to_all_single", "all_gather_into_tensor", "all_gather",
                 "reduce_scatter_tensor")
        real = {n: getattr(dist, n) for n in names}

        def wrapped(name):
            def call(*a, **k):
                getattr(self, name)(*a, **k)
                return real[name](*a, **k)
            return call
        for n in names:
            setattr(dist, n, wrapped(n))
        try:
            yield self
        finally:
            for n in names:
                setattr(dist, n, real[n])


def link_tx_bytes(device):
    """The bytes device @device's ports have sent (nnptool links)."""
    ports = json.loads(subprocess.run(["nnptool", "--json", "links"], check=True,
                                      capture_output=True, text=True).stdout)["ports"]
    return sum(p["tx_bytes"] for p in ports if p["dev"] == device)


def measured(rank, world, backend, model, steps):
    """@model's result on this rank, with, on nnp, its traffic: what its
    device counted over the model's run against what Traffic expects."""
    traffic = Traffic(rank, world)
    if backend != "nnp":
        return model(rank, world, steps, traffic)
    before = torch_nnp.device_counters(rank), link_tx_bytes(rank)
    with traffic.counting():
        result = model(rank, world, steps, traffic)
    after = torch_nnp.device_counters(rank), link_tx_bytes(rank)
    result["traffic"] = {
        "host_dma": after[0]["host_dma_bytes"] - before[0]["host_dma_bytes"],
        "peer_dma": after[0]["peer_dma_bytes"] - before[0]["peer_dma_bytes"],
        "link_tx": after[1] - before[1], "staged": traffic.staged, "leave": traffic.leave}
    return result


def digest(module):
    """The parameters' exact values, as one hash."""
    h = hashlib.sha256()
    for p in module.parameters():
        h.update(repr(p.detach().tolist()).encode())
    return h.hexdigest()[:16]


def exchange(recv, send, traffic):
    """One tick's messages: receives first, then sends; waits for all."""
    for t, _ in recv:
        traffic.message(t, False)
    for t, _ in send:
        traffic.message(t, True)
    ops = [dist.P2POp(dist.irecv, t, peer) for t, peer in recv]
    ops += [dist.P2POp(dist.isend, t, peer) for t, peer in send]
    for work in dist.batch_isend_irecv(ops) if ops else []:
        work.wait()


def pipeline(rank, world, steps, traffic):
    """GPipe over WORLD stages: at tick t stage r runs microbatch t - r
    forward, then in reverse order back; the last stage's loss each step."""
    torch.manual_seed(100 + rank)
    last = rank == world - 1
    model = torch.nn.Linear(D, 10) if last else torch.nn.Sequential(
        torch.nn.Linear(D, D), torch.nn.Tanh())
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    mb = BATCH // MICRO
    losses = []
    for step in range(steps):
        g = torch.Generator().manual_seed(step)
        xs = torch.randn(BATCH, D, generator=g).chunk(MICRO)
        ys = torch.randint(0, 10, (BATCH,), generator=g).chunk(MICRO)
        opt.zero_grad()
        ins, outs, pending, total = [None] * MICRO, [None] * MICRO, None, 0.0
        for t in range(MICRO + world):
            m = t - rank
            recv = []
            if rank > 0 and 0 <= m < MICRO:
                ins[m] = torch.empty(mb, D)
                recv.append((ins[m], rank - 1))
            exchange(recv, [(pending, rank + 1)] if pending is not None else [], traffic)
            pending = None
            if 0 <= m < MICRO:
                x = xs[m] if rank == 0 else ins[m].requires_grad_()
                outs[m] = model(x)
                if last:
                    outs[m] = F.cross_entropy(outs[m], ys[m]) / MICRO
                    total += outs[m].item()
                else:
                    pending = outs[m].detach()
        for t in range(MICRO + world):
            m = MICRO - 1 - (t - (world - 1 - rank))
            recv, grad = [], None
            if not last and 0 <= m < MICRO:
                grad = torch.empty(mb, D)
                recv.append((grad, rank + 1))
            exchange(recv, [(pending, rank - 1)] if pending is not None else [], traffic)
            pending = None
            if 0 <= m < MICRO:
                outs[m].backward(grad)
                if rank > 0:
                    pending = ins[m].grad
        opt.step()
        losses.append(total)
    return {"losses": losses if last else [], "params": digest(model)}


def experts(rank, world, steps, traffic):
    """Token i of rank r goes to expert (i (r + 1) + step) mod WORLD and
    back; each rank's loss on its own tokens trains the experts."""
    torch.manual_seed(200 + rank)
    expert = torch.nn.Sequential(torch.nn.Linear(E_D, E_D), torch.nn.Tanh())
    opt = torch.optim.SGD(expert.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        g = torch.Generator().manual_seed(1000 * step + rank)
        x = torch.randn(TOKENS, E_D, generator=g)
        target = torch.randn(TOKENS, E_D, generator=g)
        dest = (torch.arange(TOKENS) * (rank + 1) + step) % world
        order = torch.sort(dest, stable=True).indices
        sent = torch.bincount(dest, minlength=world)
        got = torch.empty_like(sent)
        dist.all_to_all_single(got, sent)
        sent, got = sent.tolist(), got.tolist()
        there = dnn.all_to_all_single(torch.empty(sum(got), E_D), x[order], got, sent)
        back = dnn.all_to_all_single(torch.empty(TOKENS, E_D), expert(there), sent, got)
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(TOKENS)
        loss = F.mse_loss(back[inverse], target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "params": digest(expert)}


def fsdp(rank, world, steps, traffic):
    """FullyShardedDataParallel over the ranks (torch 2.x: 1.13's does not
    import on Python 3.11): each pass gathers the sharded parameters,
    each backward reduce-scatters the gradients; each rank's loss."""
    from torch.distributed.fsdp import FullyShardedDataParallel

    torch.manual_seed(300)
    model = FullyShardedDataParallel(
        torch.nn.Sequential(torch.nn.Linear(D, D), torch.nn.Tanh(), torch.nn.Linear(D, 10)),
        device_id=torch.device("cpu"))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        g = torch.Generator().manual_seed(2000 * step + rank)
        x = torch.randn(BATCH, D, generator=g)
        y = torch.randint(0, 10, (BATCH,), generator=g)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses}


def rank_main(rank, world, backend, port, steps):
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=60))
    models = [pipeline, experts] + ([fsdp] if TORCH_MAJOR >= 2 else [])
    result = {m.__name__: measured(rank, world, backend, m, steps) for m in models}
    dist.destroy_process_group()
    return result


def rank_results(runs, r):
    """Rank @r's results on each backend, or why one has none."""
    got = {b: runs[b].get(r, (False, "no report within the deadline")) for b in runs}
    bad = [f"{b} rank {r}: {v}" for b, (ok, v) in got.items() if not ok]
    return (None, bad[0]) if bad else ({b: v for b, (_, v) in got.items()}, None)


def fsdp_verdict(runs, world, steps):
    """FSDP reduces, the ring in another order than gloo's: nnp's losses
    must be gloo's within FSDP_RTOL."""
    worst = 0.0
    for r in range(world):
        got, why = rank_results(runs, r)
        if why:
            return f"FAIL {why}"
        nnp, gloo = got["nnp"]["fsdp"]["losses"], got["gloo"]["fsdp"]["losses"]
        if len(nnp) != steps or len(gloo) != steps:
            return f"FAIL rank {r}: {len(nnp)} and {len(gloo)} losses, not {steps}"
        worst = max([worst] + [abs(a - b) / abs(b) for a, b in zip(nnp, gloo)])
    if worst > FSDP_RTOL:
        return f"FAIL losses differ by {worst:.1e} relative"
    return f"nnp's losses are gloo's within {FSDP_RTOL:g} on every rank ({steps} losses)"


def traffic_verdict(ranks, world, model):
    """Every rank's device: host DMA exactly what was staged, no peer DMA,
    link bytes sent at least what had to leave the rank."""
    for r in range(world):
        ok, got = ranks.get(r, (False, "no report within the deadline"))
        if not ok:
            return f"FAIL rank {r}: {got}"
        t = got[model]["traffic"]
        print(f"PARALLEL {model} rank {r} bytes: {json.dumps(t)}", flush=True)
        if t["host_dma"] != t["staged"] or t["peer_dma"] or t["link_tx"] < t["leave"] \
                or not t["leave"]:
            return f"FAIL rank {r}: {t}"
    return ("every device's host DMA exactly the bytes staged, no peer DMA, "
            "and its links sent at least what left its rank")


def run(world, steps):
    """Both models on both backends, compared; prints the verdicts."""
    runs = {}
    for backend, port in (("nnp", 29521), ("gloo", 29522)):
        t0 = time.time()
        runs[backend] = fork_ranks(rank_main, world, (backend, port, steps), DEADLINE_S)
        print(f"PARALLEL {backend} ranks returned in {time.time() - t0:.0f} s", flush=True)
    for model in ("pipeline", "experts"):
        why = None
        for r in range(world):
            got, why = rank_results(runs, r)
            nnp = {k: v for k, v in got["nnp"][model].items() if k != "traffic"} if got else None
            if not why and nnp != got["gloo"][model]:
                why = f"rank {r}: nnp {got['nnp'][model]}, gloo {got['gloo'][model]}"
            if why:
                break
        losses = runs["gloo"].get(world - 1, (False, {}))[1]
        counted = len(losses[model]["losses"]) if isinstance(losses, dict) else 0
        if not why and counted != steps:
            why = f"{counted} losses, not {steps}"
        print(f"PARALLEL {model}: FAIL {why}" if why else
              f"PARALLEL {model}: nnp = gloo on every rank ({steps} losses)", flush=True)
    if TORCH_MAJOR >= 2:
        print(f"PARALLEL fsdp: {fsdp_verdict(runs, world, steps)}", flush=True)
    for model in ("pipeline", "experts") + (("fsdp",) if TORCH_MAJOR >= 2 else ()):
        print(f"PARALLEL {model} traffic: {traffic_verdict(runs['nnp'], world, model)}",
              flush=True)


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]))
