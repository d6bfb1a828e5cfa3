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
"""
import datetime
import hashlib
import os
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


def digest(module):
    """The parameters' exact values, as one hash."""
    h = hashlib.sha256()
    for p in module.parameters():
        h.update(repr(p.detach().tolist()).encode())
    return h.hexdigest()[:16]


def exchange(recv, send):
    """One tick's messages: receives first, then sends; waits for all."""
    ops = [dist.P2POp(dist.irecv, t, peer) for t, peer in recv]
    ops += [dist.P2POp(dist.isend, t, peer) for t, peer in send]
    for work in dist.batch_isend_irecv(ops) if ops else []:
        work.wait()


def pipeline(rank, world, steps):
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
            exchange(recv, [(pending, rank + 1)] if pending is not None else [])
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
            exchange(recv, [(pending, rank - 1)] if pending is not None else [])
            pending = None
            if 0 <= m < MICRO:
                outs[m].backward(grad)
                if rank > 0:
                    pending = ins[m].grad
        opt.step()
        losses.append(total)
    return {"losses": losses if last else [], "params": digest(model)}


def experts(rank, world, steps):
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


def fsdp(rank, world, steps):
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
    result = {"pipeline": pipeline(rank, world, steps),
              "experts": experts(rank, world, steps)}
    if TORCH_MAJOR >= 2:
        result["fsdp"] = fsdp(rank, world, steps)
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
            if not why and got["nnp"][model] != got["gloo"][model]:
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


if __name__ == "__main__":
    run(int(sys.argv[1]), int(sys.argv[2]))
