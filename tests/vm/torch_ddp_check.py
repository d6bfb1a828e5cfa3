#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks of the DDP training run (tests/vm/torch_ddp.py) in the guest's
output OUT, STEPS steps long: one line each, "ok NAME" or "FAIL NAME: WHY".

torch_ddp_check.py OUT STEPS
"""
import json, sys

text = open(sys.argv[1], errors="replace").read().splitlines()
steps = int(sys.argv[2])
runs = {b: [json.loads(l.split(" ", 2)[2]) for l in text if l.startswith(f"DDP {b} {{")]
        for b in ("nnp", "gloo")}


def check(name, ok, why=""):
    print(f"{'ok' if ok else 'FAIL'} {name}{'' if ok else ': ' + why}")


nnp, gloo = runs["nnp"], runs["gloo"]
check("4 ranks reported on nnp and on gloo", len(nnp) == 4 and len(gloo) == 4,
      f"{len(nnp)} and {len(gloo)}")
if len(nnp) != 4 or len(gloo) != 4:
    sys.exit()
for b, run in runs.items():
    same = all(r["losses"] == run[0]["losses"] and r["params"] == run[0]["params"]
               for r in run)
    check(f"{b}: every rank the same losses and bit-identical parameters", same,
          str([r["params"][:12] for r in run]))
loss = nnp[0]["losses"]
first, last = sum(loss[:3]) / 3, sum(loss[-3:]) / 3
check(f"nnp: the loss falls ({first:.3f} to {last:.3f} over {steps} steps)",
      len(loss) == steps and last < 0.8 * first, str(loss))
worst = max(abs(a - b) / abs(b) for a, b in zip(loss, gloo[0]["losses"]))
check(f"nnp's losses are gloo's within rounding (worst {worst:.1e} relative)",
      worst < 1e-3, f"{loss} vs {gloo[0]['losses']}")
want = (steps - 2) * 2 * (nnp[0]["grad_bytes"] + 4)
got = [r["steps_host_dma_bytes"] for r in sorted(nnp, key=lambda r: r["rank"])]
check(f"nnp: each device's host DMA over the steps is exactly {want} bytes "
      f"(the bucket and the loss, in once and out once)", got == [want] * 4, str(got))
peer = [r["steps_peer_dma_bytes"] for r in sorted(nnp, key=lambda r: r["rank"])]
check("nnp: no device moves a byte to or from another device's memory "
      "(peer_dma_bytes)", peer == [0] * 4, str(peer))
