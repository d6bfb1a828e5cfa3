#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""DistributedDataParallel training on the guest's chips (torch_nnp.sh).

torch_ddp.py WORLD STEPS

Imports torch once (a minute or more in a TCG guest), then for each of
the backends "nnp" and "gloo" forks WORLD ranks, each running
examples/ddp_fashion_mnist/train.py's train() as a rank of an env://
job. Prints "DDP BACKEND {json}" per rank as train() returns it, with
the bytes of host DMA (and of peer DMA, to another device's memory) the
rank's device counted from the end of the second step to the end of the
last (nnp only: "steps_host_dma_bytes", "steps_peer_dma_bytes"),
and "DDP BACKEND ranks returned in N s"; a rank that has not returned
within the deadline prints "DDP BACKEND rank R: FAIL ...".
"""
import json
import os
import sys
import time

T0 = time.time()
import torch  # noqa: E402
import torch_nnp  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "ddp_fashion_mnist"))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import train  # noqa: E402
from torch_ranks import fork_ranks  # noqa: E402

print(f"DDP import torch, torch_nnp: {time.time() - T0:.0f} s", flush=True)
DEADLINE_S = 900


def rank_main(rank, world, backend, port, steps):
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world),
                      MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dma = {}

    def after_step(step):
        # From the end of the second step to the end of the last: only the
        # steps' own collectives, none of DDP's setup nor the broadcast of
        # its rebuilt buckets' order (in the second step).
        if backend == "nnp" and step in (1, steps - 1):
            dma[step] = torch_nnp.device_counters(rank)

    result = train.train(train.parse(["--backend", backend, "--steps", str(steps),
                                      "--images", "4096"]), after_step)
    for kind in ("host", "peer") if dma else ():
        key = f"{kind}_dma_bytes"
        result[f"steps_{key}"] = dma[steps - 1][key] - dma[1][key]
    return json.dumps(result)


def job(world, backend, port, steps):
    t0 = time.time()
    reports = fork_ranks(rank_main, world, (backend, port, steps), DEADLINE_S)
    for r in range(world):
        ok, line = reports.get(r, (False, "no report within the deadline"))
        print(f"DDP {backend} {line}" if ok else f"DDP {backend} rank {r}: FAIL {line}",
              flush=True)
    print(f"DDP {backend} ranks returned in {time.time() - t0:.0f} s", flush=True)


def main():
    world, steps = int(sys.argv[1]), int(sys.argv[2])
    job(world, "nnp", 29511, steps)
    job(world, "gloo", 29512, steps)


if __name__ == "__main__":
    main()
