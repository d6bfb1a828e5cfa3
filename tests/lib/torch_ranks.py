# SPDX-License-Identifier: MIT
"""The ranks of a torch.distributed job as processes forked from one that
has imported torch already: importing it takes a minute or more in a TCG
guest, so the torch tests and the torch benchmark pay for it once.

    reports = fork_ranks(fn, world, (arg, ...), deadline_s)

runs fn(rank, world, arg, ...) in @world forked processes and returns
{rank: (True, what fn returned)} or {rank: (False, "Type: first line of
the exception")} for every rank that reported within @deadline_s seconds.
A rank missing from the result did not report in time, or died without
reporting (all ranks gone ends the wait); it has been killed.
"""
import time
import traceback

import torch.multiprocessing as mp


def first_line(e):
    """The exception @e as one line: its type and the first line of its text."""
    return f"{type(e).__name__}: {e}".splitlines()[0]


def _rank_main(fn, rank, world, args, queue):
    try:
        queue.put((rank, True, fn(rank, world, *args)))
    except Exception as e:  # noqa: BLE001 - every failure is reported
        traceback.print_exc()
        queue.put((rank, False, first_line(e)))


def fork_ranks(fn, world, args=(), deadline_s=600):
    ctx = mp.get_context("fork")
    queue = ctx.SimpleQueue()
    procs = [ctx.Process(target=_rank_main, args=(fn, r, world, args, queue))
             for r in range(world)]
    for p in procs:
        p.start()
    reports = {}
    end = time.time() + deadline_s
    while len(reports) < world and time.time() < end:
        if queue.empty():
            # Each rank puts its report before it exits: none is coming.
            if not any(p.is_alive() for p in procs) and queue.empty():
                break
            time.sleep(0.2)
            continue
        rank, ok, value = queue.get()
        reports[rank] = (ok, value)
    for p in procs:
        p.join(max(1, end - time.time()))
        if p.is_alive():
            p.kill()
    return reports
