#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The "nnp" torch.distributed backend on the guest's chips (torch_nnp.sh).

torch_collectives.py WORLD [WORLD...] [--ddp STEPS] [--parallel STEPS] [--link-down]
                      [--killed-rank] [--aborted]

Imports torch once (a minute or more in a TCG guest), then forks one
process per rank for each job: a WORLD-rank job running every collective,
dtype and op (a 2-rank job with NNP_TORCH_BOUNCE_MAX=0, so the tensors
are registered with the device rather than bounced), and with --link-down a 4-rank job that loops allreduces
while the host takes a link down (rank 0 asks for it with a line "LINK
nnp1 down 0", which tests/lib/fault_host.py acts on), and before it,
with --killed-rank, a 4-rank job whose rank 3 kills itself (SIGKILL)
while the others wait for it (two in an allreduce, one in a recv), each
of which must raise within a second (hardware 1.20's leave), and whose
next call, within 10 s, must raise at the call (the device's event):
"TORCHKILL" lines; with --aborted, a 4-rank job whose rank 3 aborts the
group (torch_nnp.abort()) while the others wait for it, whose ranks then
make a new group: "TORCHABORT" lines. Prints one line per check, "TORCHTEST
w=WORLD NAME: ok" when every rank passed it, else "... FAIL rank R: WHY";
a rank that has not reported within the deadline is a FAIL too. After a
check that any rank failed, the job's later checks are not run (each a
FAIL "not run"): ranks out of step would wait out every call to the end.
With --ddp, before the link goes down, 4 ranks train with DDP for STEPS
steps on "nnp" and then on "gloo" (tests/vm/torch_ddp.py); with
--parallel, a pipeline and a mixture of experts on 4 ranks, each
backend's results against the other's (tests/vm/torch_parallel.py).
"""
import datetime
import os
import signal
import sys
import time
import traceback
import warnings

T0 = time.time()
import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch_nnp  # noqa: E402,F401

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from torch_ranks import first_line, fork_ranks  # noqa: E402

print(f"TORCHTEST import torch, torch_nnp: {time.time() - T0:.0f} s", flush=True)
torch.set_num_threads(1)
# all_reduce_coalesced is what DDP's coalescing calls; torch warns on each use.
warnings.filterwarnings("ignore", message="torch.distributed.all_reduce_coalesced will be deprecated")

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32,
          torch.float64, torch.int64]
# Moving data needs no arithmetic: these the device reduces nothing of,
# but moves as bytes, odd sizes (int8, bool: N bytes) included.
MOVED = DTYPES + [torch.int8, torch.uint8, torch.bool, torch.int16, torch.complex64]
OPS = {
    "SUM": dist.ReduceOp.SUM, "AVG": dist.ReduceOp.AVG,
    "PRODUCT": dist.ReduceOp.PRODUCT, "MIN": dist.ReduceOp.MIN,
    "MAX": dist.ReduceOp.MAX,
}
TORCH_MAJOR = int(torch.__version__.split(".")[0])
N = 1003            # elements per rank: not a multiple of any ring's size
TIMEOUT = 30        # s: init_process_group's, so the communicator's
DEADLINE = 600      # s: a job's ranks must all have reported by then
IN_STEP = 120       # s: the ranks' wait for each other after each check
STORE_PORT = 1000   # the checks' own store: at the job's port + this


def init(rank, world, port):
    """Join the default group of @world ranks on nnp, its store at @port."""
    dist.init_process_group("nnp", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=TIMEOUT))


def values(rank, n, dtype):
    """Rank @rank's data: +-2(rank+1)k, k = 1..3, exact in every dtype,
    and so are their sums, averages, products (at most 3^5 * 2^7 on 4
    ranks) and every partial result on the ring's way."""
    i = torch.arange(n)
    if dtype == torch.bool:
        return (i + rank) % 3 == 0
    sign = torch.where(i % 4 == 3, -1, 1)
    return (sign * 2 * (rank + 1) * (1 + i % 3)).to(dtype)


def reduced(ranks, n, dtype, op):
    stack = torch.stack([values(r, n, torch.int64) for r in ranks])
    out = {
        "SUM": lambda: stack.sum(0),
        "AVG": lambda: stack.sum(0) // len(ranks),   # exact: see values()
        "PRODUCT": lambda: stack.prod(0),
        "MIN": lambda: stack.min(0).values,
        "MAX": lambda: stack.max(0).values,
    }[op]()
    return out.to(dtype)


def same(got, want, what):
    if got.dtype != want.dtype or not torch.equal(got, want):
        bad = (got.to(torch.float64) != want.to(torch.float64)).nonzero()
        first = bad[0].item() if len(bad) else 0
        raise AssertionError(f"{what}: element {first} is {got[first].item()}, "
                             f"not {want[first].item()} ({len(bad)} differ)")


def raises(fn, text, may_return=False):
    """The error @fn raises, which must say @text; with @may_return, ""
    if it returns instead."""
    try:
        fn()
    except RuntimeError as e:
        if text not in str(e):
            raise AssertionError(f"the error does not say {text!r}: {e}")
        return str(e)
    if may_return:
        return ""
    raise AssertionError(f"no error (wanted one saying {text!r})")


# ---- the checks: each runs on every rank of the job --------------------------

def check_allreduce(rank, world):
    for dtype in DTYPES:
        for name, op in OPS.items():
            t = values(rank, N, dtype)
            dist.all_reduce(t, op=op)
            same(t, reduced(range(world), N, dtype, name), f"{dtype} {name}")


def check_broadcast(rank, world):
    for dtype in MOVED:
        for root in range(world):
            t = values(rank, N, dtype) if rank == root else torch.zeros(N, dtype=dtype)
            dist.broadcast(t, src=root)
            same(t, values(root, N, dtype), f"{dtype} from {root}")


def check_all_gather(rank, world):
    for dtype in MOVED:
        outs = [torch.zeros(N, dtype=dtype) for _ in range(world)]
        dist.all_gather(outs, values(rank, N, dtype))
        for r in range(world):
            same(outs[r], values(r, N, dtype), f"{dtype} part {r}")


def check_all_gather_into_tensor(rank, world):
    for dtype in MOVED:
        out = torch.zeros(N * world, dtype=dtype)
        dist.all_gather_into_tensor(out, values(rank, N, dtype))
        same(out, torch.cat([values(r, N, dtype) for r in range(world)]), str(dtype))


def check_reduce_scatter(rank, world):
    for dtype in DTYPES:
        for name, op in OPS.items():
            out = torch.zeros(N, dtype=dtype)
            dist.reduce_scatter(out, list(values(rank, N * world, dtype).chunk(world)), op=op)
            want = reduced(range(world), N * world, dtype, name)[rank * N:(rank + 1) * N]
            same(out, want, f"{dtype} {name}")


def check_reduce_scatter_tensor(rank, world):
    for dtype in DTYPES:
        for name, op in OPS.items():
            out = torch.zeros(N, dtype=dtype)
            dist.reduce_scatter_tensor(out, values(rank, N * world, dtype), op=op)
            want = reduced(range(world), N * world, dtype, name)[rank * N:(rank + 1) * N]
            same(out, want, f"{dtype} {name}")


def check_allreduce_coalesced(rank, world):
    ts = [values(rank, 5, torch.float32), values(rank + 7, 11, torch.float32)]
    dist.all_reduce_coalesced(ts)
    same(ts[0], reduced(range(world), 5, torch.float32, "SUM"), "first")
    want = reduced([r + 7 for r in range(world)], 11, torch.float32, "SUM")
    same(ts[1], want, "second")


def check_coalesced(rank, world):
    """all_gather_coalesced of two int8 tensors of odd sizes (torch 2.6
    wants one dtype); on torch 2.x, two all_gather_into_tensor and two
    reduce_scatter_tensor each in a coalescing manager, as FSDP issues
    them (one call to the backend)."""
    ins = [values(rank, 5, torch.int8), values(rank + 3, 7, torch.int8)]
    # One list per rank, each with a tensor per input, as gloo takes them.
    outs = [[torch.zeros(len(t), dtype=torch.int8) for t in ins] for _ in range(world)]
    dist.all_gather_coalesced(outs, ins)
    for r in range(world):
        same(outs[r][0], values(r, 5, torch.int8), f"first from {r}")
        same(outs[r][1], values(r + 3, 7, torch.int8), f"second from {r}")
    if TORCH_MAJOR < 2:
        return
    from torch.distributed.distributed_c10d import _coalescing_manager
    a, b = torch.zeros(3 * world), torch.zeros(4 * world, dtype=torch.int64)
    with _coalescing_manager():
        dist.all_gather_into_tensor(a, values(rank, 3, torch.float32))
        dist.all_gather_into_tensor(b, values(rank + 1, 4, torch.int64))
    same(a, torch.cat([values(r, 3, torch.float32) for r in range(world)]), "coalesced a")
    same(b, torch.cat([values(r + 1, 4, torch.int64) for r in range(world)]), "coalesced b")
    x, y = torch.zeros(3), torch.zeros(2, dtype=torch.int32)
    with _coalescing_manager():
        dist.reduce_scatter_tensor(x, values(rank, 3 * world, torch.float32))
        dist.reduce_scatter_tensor(y, values(rank + 5, 2 * world, torch.int32))
    same(x, reduced(range(world), 3 * world, torch.float32, "SUM")[3 * rank:3 * rank + 3],
         "coalesced x")
    same(y, reduced([r + 5 for r in range(world)], 2 * world, torch.int32,
                    "SUM")[2 * rank:2 * rank + 2], "coalesced y")


def check_functional(rank, world):
    """torch 2.x's functional collectives (torch.distributed.
    _functional_collectives, what torch.compile traces), on the default
    group: they reach the backend through torch's own ops. Not run on
    torch 1.x, which has none."""
    import torch.distributed._functional_collectives as funcol
    group = dist.group.WORLD
    got = funcol.all_reduce(values(rank, N, torch.float32), "sum", group).wait()
    same(got, reduced(range(world), N, torch.float32, "SUM"), "all_reduce")
    got = funcol.all_gather_tensor(values(rank, 5, torch.int8), 0, group).wait()
    same(got, torch.cat([values(r, 5, torch.int8) for r in range(world)]), "all_gather_tensor")
    got = funcol.reduce_scatter_tensor(values(rank, 3 * world, torch.int64), "sum", 0,
                                       group).wait()
    same(got, reduced(range(world), 3 * world, torch.int64, "SUM")[3 * rank:3 * rank + 3],
         "reduce_scatter_tensor")
    got = funcol.all_to_all_single(values(rank, 2 * world, torch.float16), None, None,
                                   group).wait()
    same(got, torch.cat([values(r, 2 * world, torch.float16)[2 * rank:2 * rank + 2]
                         for r in range(world)]), "all_to_all_single")


def check_future(rank, world):
    """An async allreduce's Future, as DDP's comm hooks use it."""
    t = values(rank, N, torch.float32)
    work = dist.all_reduce(t, async_op=True)
    doubled = work.get_future().then(lambda f: f.value()[0] * 2).wait()
    work.wait()
    want = reduced(range(world), N, torch.float32, "SUM")
    same(doubled, want * 2, "the Future's value, doubled")
    same(t, want, "the tensor")


def check_send_recv(rank, world):
    """Each rank to the next: the even ranks send first, then the odd. Then
    on 4 chips each rank to the one across the ring, whose chip has no link
    to its own: routed through the chip between. Then int8, N bytes."""
    for phase in (0, 1):
        if rank % 2 == phase:
            dist.send(values(rank + 10, N, torch.int64), dst=(rank + 1) % world)
            dist.send(values(rank + 10, N, torch.int8), dst=(rank + 1) % world)
        else:
            src = (rank - 1) % world
            t = torch.zeros(N, dtype=torch.int64)
            dist.recv(t, src=src)
            same(t, values(src + 10, N, torch.int64), f"from {src}")
            t = torch.zeros(N, dtype=torch.int8)
            dist.recv(t, src=src)
            same(t, values(src + 10, N, torch.int8), f"int8 from {src}")
    if world != 4:
        return
    for phase in (0, 1):
        if rank // 2 == phase:
            dist.send(values(rank + 20, N, torch.int64), dst=(rank + 2) % world)
        else:
            src = (rank + 2) % world
            t = torch.zeros(N, dtype=torch.int64)
            dist.recv(t, src=src)
            same(t, values(src + 20, N, torch.int64), f"from {src}, routed")


def check_p2p_any_order(rank, world):
    """batch_isend_irecv with the receives posted before the sends, as a
    pipeline schedule posts them (on CPU tensors torch runs the list one
    by one): each rank receives from both neighbours, then sends to both;
    N elements, then 4 MiB, more than a communicator may hold at a port,
    so the sender waits for the receive to drain it."""
    if world < 2:
        return
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    for n in (N, 1 << 20):
        a, b = torch.zeros(n), torch.zeros(n)
        ops = [dist.P2POp(dist.irecv, a, prv), dist.P2POp(dist.irecv, b, nxt),
               dist.P2POp(dist.isend, values(rank + 30, n, torch.float32), nxt),
               dist.P2POp(dist.isend, values(rank + 40, n, torch.float32), prv)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        same(a, values(prv + 30, n, torch.float32), f"{n} from {prv}")
        same(b, values(nxt + 40, n, torch.float32), f"{n} from {nxt}")


def check_p2p_tags(rank, world):
    """Tags, taken in the order sent and checked: each rank sends the next
    two messages tagged 7 and 9, which it receives so; then one tagged 5
    that the next takes from any source, whose sender recv() names. A
    receive whose tag is not its message's raises naming both, and the
    group works on."""
    if world < 2:
        return
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    for phase in (0, 1):
        if rank % 2 == phase:
            dist.send(values(rank + 50, N, torch.int32), dst=nxt, tag=7)
            dist.send(values(rank + 60, N, torch.int32), dst=nxt, tag=9)
        else:
            for tag, base in ((7, 50), (9, 60)):
                t = torch.zeros(N, dtype=torch.int32)
                dist.recv(t, src=prv, tag=tag)
                same(t, values(prv + base, N, torch.int32), f"tag {tag} from {prv}")
    work = dist.isend(values(rank + 70, N, torch.int32), dst=nxt, tag=5)
    t = torch.zeros(N, dtype=torch.int32)
    src = dist.recv(t, tag=5)
    work.wait()
    if src != prv:
        raise AssertionError(f"recv from any source named rank {src}, not {prv}")
    same(t, values(prv + 70, N, torch.int32), f"any source, from {prv}")
    work = dist.isend(values(rank, N, torch.int32), dst=nxt, tag=3)
    raises(lambda: dist.recv(torch.zeros(N, dtype=torch.int32), src=prv, tag=4),
           f"nnp: recv: the message from rank {prv} has tag 3, the receive tag 4")
    work.wait()
    t = values(rank, N, torch.int32)
    dist.all_reduce(t)
    same(t, reduced(range(world), N, torch.int32, "SUM"), "the allreduce after them")


def check_reduce(rank, world):
    """Every dtype and op to each root in turn; the others' tensors as
    they were."""
    for k, dtype in enumerate(DTYPES):
        for j, (name, op) in enumerate(OPS.items()):
            root = (k + j) % world
            t = values(rank, N, dtype)
            dist.reduce(t, dst=root, op=op)
            want = reduced(range(world), N, dtype, name) if rank == root else \
                values(rank, N, dtype)
            same(t, want, f"{dtype} {name} to {root}")


def check_gather_scatter(rank, world):
    """gather and scatter of every dtype, the roots in turn."""
    for k, dtype in enumerate(MOVED):
        root = k % world
        got = [torch.zeros(N, dtype=dtype) for _ in range(world)] \
            if rank == root else None
        dist.gather(values(rank, N, dtype), gather_list=got, dst=root)
        for r in range(world if rank == root else 0):
            same(got[r], values(r, N, dtype), f"{dtype} gathered from {r}")
        t = torch.zeros(N, dtype=dtype)
        parts = [values(r + 7, N, dtype) for r in range(world)] \
            if rank == root else None
        dist.scatter(t, scatter_list=parts, src=root)
        same(t, values(rank + 7, N, dtype), f"{dtype} scattered from {root}")


def check_all_to_all(rank, world):
    """all_to_all_single and all_to_all: part r of each rank's input goes
    to rank r, every pair at once (routed where chips share no link); and
    all_to_all_single with uneven splits."""
    for dtype in MOVED:
        parts = [values(rank * world + r, N, dtype) for r in range(world)]
        out = torch.zeros(N * world, dtype=dtype)
        dist.all_to_all_single(out, torch.cat(parts))
        same(out, torch.cat([values(r * world + rank, N, dtype) for r in range(world)]),
             f"{dtype} all_to_all_single")
        outs = [torch.zeros(N, dtype=dtype) for _ in range(world)]
        dist.all_to_all(outs, parts)
        for r in range(world):
            same(outs[r], values(r * world + rank, N, dtype), f"{dtype} all_to_all from {r}")
    # Uneven (alltoallv): rank r sends rank p r + 2p + 1 elements.
    for dtype in MOVED:
        ins = [values(rank * world + p, rank + 2 * p + 1, dtype) for p in range(world)]
        out = torch.zeros(sum(p + 2 * rank + 1 for p in range(world)), dtype=dtype)
        dist.all_to_all_single(out, torch.cat(ins),
                               [p + 2 * rank + 1 for p in range(world)],
                               [rank + 2 * p + 1 for p in range(world)])
        same(out, torch.cat([values(p * world + rank, p + 2 * rank + 1, dtype)
                             for p in range(world)]),
             f"{dtype} all_to_all_single, uneven splits")
    raises(lambda: dist.all_to_all_single(torch.zeros(2 * world), torch.zeros(2 * world),
                                          [1] * world, [1] * world),
           f"the splits add up to {world}, not {2 * world}")


def check_barrier(rank, world):
    """No rank leaves before rank 0, 0.5 s late, has written its file."""
    path = f"/tmp/torch_nnp_barrier.{world}"
    if rank == 0:
        time.sleep(0.5)
        open(path, "w").close()
    dist.barrier()
    if not os.path.exists(path):
        raise AssertionError(f"out of the barrier before rank 0 wrote {path}")


def check_unsupported(rank, world):
    """Refused by name on the caller's thread; the group works on."""
    t = values(rank, N, torch.int32)
    raises(lambda: dist.all_reduce(t, op=dist.ReduceOp.BAND),
           "nnp: allreduce: ReduceOp.BAND is not supported")
    raises(lambda: dist.all_reduce(torch.ones(N, dtype=torch.uint8)),
           "nnp: allreduce: dtype Byte is not supported")
    raises(lambda: dist.reduce_scatter_tensor(torch.zeros(N, dtype=torch.int16),
                                              torch.ones(N * world, dtype=torch.int16)),
           "nnp: reduce_scatter_tensor: dtype Short is not supported")
    raises(lambda: dist.all_gather_into_tensor(torch.zeros(N * world, dtype=torch.int8),
                                               torch.ones(N, dtype=torch.int16)),
           "nnp: all_gather_into_tensor: the output needs the input's dtype")
    # A peer names a lane made at its first use: one outside the group is
    # refused before any is (the backend itself: torch's own calls check).
    raises(lambda: dist.all_reduce(torch.ones(2 * N)[::2]),
           "nnp: allreduce: tensors must be dense and contiguous")
    pg = dist.distributed_c10d._get_default_group()
    raises(lambda: pg.send([t], world, 0), f"nnp: send: rank {world} is not in the group of {world}")
    raises(lambda: pg.recv([t], -1, 0), f"nnp: recv: rank -1 is not in the group of {world}")
    dist.all_reduce(t)
    same(t, reduced(range(world), N, torch.int32, "SUM"), "the allreduce after them")


def check_new_group(rank, world):
    """Rows of the 4-chip ring, [0, 1] and [2, 3], work side by side."""
    groups = [dist.new_group([0, 1]), dist.new_group([2, 3])]
    mine = [0, 1] if rank < 2 else [2, 3]
    t = values(rank, N, torch.float32)
    dist.all_reduce(t, group=groups[rank // 2])
    same(t, reduced(mine, N, torch.float32, "SUM"), f"the sum over {mine}")


def check_new_group_no_ring(rank, world):
    """Chips 0 and 2 have no link: creating [0, 2] fails on both with
    NO_PATH's reason, the rank short of links (ranks 1 and 3 skip it, or
    they would wait out torch's store barrier after the creator)."""
    if rank % 2:
        return
    msg = raises(lambda: dist.new_group([0, 2]),
                 "the chips are not connected by a usable inter-chip link")
    print(f"TORCHTEST no ring, rank {rank}: {msg}", flush=True)
    if "rank 0 (chip 0) has an up link to 0 other ranks" not in msg:
        raise AssertionError(f"the error does not name chip 0's missing link: {msg}")


def check_splits_disagree(rank, world):
    """Rank 0 sends rank 1 two rows where rank 1 takes one, in a group of
    its own. Rank 1, the receiver, raises within 10 s, naming the split
    sizes and the 8 bytes rank 0 sent. The others may have had all they
    take before rank 1 failed: their call raises or returns, as gloo's
    may. Then that group runs nothing more on any rank (a call raises,
    at once or once rank 1's abort comes), and the default group sums
    on, exactly."""
    group = dist.new_group(list(range(world)))
    ins = [2 if rank == 0 and p == 1 else 1 for p in range(world)]
    start = time.time()
    err = raises(lambda: dist.all_to_all_single(torch.zeros(world), torch.zeros(sum(ins)),
                                                [1] * world, ins, group=group),
                 "nnp: all_to_all_single failed", may_return=rank != 1)
    if rank == 1:
        for text in ("rank 0 sent this rank 8 bytes", "the ranks' split sizes disagree: "
                     "this rank's output_split_sizes and the sender's input_split_sizes"):
            if text not in err:
                raise AssertionError(f"rank 1's error does not say {text!r}: {err}")
    if time.time() - start > 10:
        raise AssertionError(f"returned after {time.time() - start:.1f} s, not within 10 s")
    err = raises(lambda: dist.all_reduce(torch.ones(N), group=group), "nnp: ")
    if "runs no more operations" not in err and "allreduce failed" not in err:
        raise AssertionError(f"the group's next call did not fail for the last: {err}")
    t = values(rank, N, torch.float32)
    dist.all_reduce(t)
    same(t, reduced(range(world), N, torch.float32, "SUM"), "the default group's allreduce")


def check_destroy_in_flight(rank, world):
    """Last: an isend whose Work and tensor the caller lets go at once,
    then the group destroyed. The send's lane then frees the last
    reference to a tensor Python made, which takes the GIL, while the
    group's destructor, called with the GIL held, waits for the lane:
    every rank hung there until the destructor let the GIL go."""
    dist.isend(values(rank, N, torch.float32), dst=(rank + 1) % world)
    dist.destroy_process_group()


CHECKS = [check_allreduce, check_broadcast, check_all_gather,
          check_all_gather_into_tensor, check_reduce_scatter,
          check_reduce_scatter_tensor, check_allreduce_coalesced, check_coalesced,
          check_future, check_send_recv, check_p2p_any_order, check_p2p_tags, check_reduce, check_gather_scatter,
          check_all_to_all, check_barrier, check_unsupported]
if TORCH_MAJOR >= 2:
    CHECKS.append(check_functional)
# check_new_group_no_ring last: ranks 1 and 3 skip its new_group, so later
# groups would be numbered apart on them.
CHECKS_4 = [check_new_group, check_splits_disagree, check_new_group_no_ring]
# Run after every other check: it destroys the group.
CHECKS_LAST = [check_destroy_in_flight]


def through(store, name, world, failed):
    """Every rank's word that it is through check @name and whether it
    failed it: the ranks the failing one left in a collective meet it here
    once their timeout ends that call. True if any rank failed it."""
    store.add(f"{name}/failed", int(failed))
    if store.add(f"{name}/through", 1) == world:
        store.set(f"{name}/all", "1")
    store.wait([f"{name}/all"], datetime.timedelta(seconds=IN_STEP))
    return store.add(f"{name}/failed", 0) > 0


def collectives(rank, world, port):
    step = "init_process_group"
    try:
        init(rank, world, port)
        step = "the checks' store"
        # Its own store: the job's is torch's, and gone with the group.
        # torch 2.x's constructor asks for libuv whatever USE_LIBUV says
        # (only init_process_group reads it), and Debian's torch has none;
        # torch 1.13's takes no such argument.
        no_libuv = {"use_libuv": False} if TORCH_MAJOR >= 2 else {}
        store = dist.TCPStore("127.0.0.1", port + STORE_PORT, world, rank == 0,
                              datetime.timedelta(seconds=IN_STEP), **no_libuv)
    except Exception as e:  # noqa: BLE001 - every failure is reported
        traceback.print_exc()
        return [(step, first_line(e))]
    checks = CHECKS + (CHECKS_4 if world == 4 else [])
    results, failed = [], None
    for check in checks + CHECKS_LAST:
        name = check.__name__[6:]
        if failed:
            # Ranks out of step would wait out each call: the rest fail at once.
            results.append((name, f"not run: a rank failed {failed}"))
            continue
        start = time.time()
        try:
            check(rank, world)
            results.append((name, None))
        except Exception as e:  # noqa: BLE001
            results.append((name, first_line(e)))
        if rank == 0:
            print(f"TORCHTEST w={world} {name} took {time.time() - start:.1f} s",
                  flush=True)
        if check not in checks:
            continue        # the group is gone: no one to wait for
        try:
            if through(store, name, world, results[-1][1] is not None):
                failed = name
        except Exception as e:  # noqa: BLE001 - a rank never came through
            failed = name
            if results[-1][1] is None:
                results[-1] = (name, f"the ranks were not through it within "
                                     f"{IN_STEP} s: {first_line(e)}")
    return results


def link_down(rank, world, port):
    """Allreduces until one fails, as the host takes a link down."""
    init(rank, world, port)
    t = torch.ones(1 << 18)
    outcome, failed_at = "never failed", None
    for i in range(2000):
        try:
            dist.all_reduce(t)
        except RuntimeError as e:
            outcome, failed_at = first_line(e), time.time()
            break
        t.fill_(1)
        if i == 1 and rank == 0:
            # tests/lib/fault_host.py takes port 0 of chip 1 down.
            print("LINK nnp1 down 0", flush=True)
    return [("link_down", outcome), ("failed_at", failed_at)]


def two_then_last(rank, world, port, stamp, end):
    """Join and run two allreduces; then the last rank, once the others
    are parked in their next call, writes the time to @stamp and calls
    @end. The tensor, for that next call."""
    init(rank, world, port)
    t = torch.ones(1 << 16)
    for _ in range(2):
        dist.all_reduce(t)
    if rank == world - 1:
        time.sleep(1)       # the others are parked in their third by now
        with open(stamp, "w") as f:
            f.write(repr(time.time()))
        end()
    return t


def stamp_of(path, label):
    """The time two_then_last() wrote to @path; None, said, if never."""
    try:
        with open(path) as f:
            return float(f.read())
    except OSError:
        print(f"{label} rank 3 never did", flush=True)
        return None


KILL_TIME = "/tmp/torch_killed_at"


def killed_rank(rank, world, port):
    """Two allreduces; then rank 3 kills itself once the others wait for
    it, ranks 0 and 1 in a third allreduce, rank 2 in a recv from it (a
    pipeline's next stage): theirs raise, each at once, not at the 30 s
    timeout. Then, within 10 s, an allreduce of each raises at the call,
    naming the device's event."""
    t = two_then_last(rank, world, port, KILL_TIME,
                      lambda: os.kill(os.getpid(), signal.SIGKILL))
    try:
        if rank == world - 2:
            dist.recv(t, src=world - 1)
        else:
            dist.all_reduce(t)
    except RuntimeError as e:
        failed = [("killed_rank", first_line(e)), ("failed_at", time.time())]
    else:
        return [("killed_rank", "never failed"), ("failed_at", None),
                ("next_call", "not made")]
    # Once the backend has read the device's COMM_FAILED event, a call
    # raises at once, naming it, rather than returning a Work (whose wait
    # the device fails). Asked again for up to 10 s: a loaded machine may
    # run the event thread late, but it must run.
    end = time.time() + 10
    outcome = "returned a Work for 10 s"
    while time.time() < end:
        try:
            work = dist.all_reduce(t, async_op=True)
        except RuntimeError as e:
            outcome = first_line(e)
            break
        try:
            work.wait()
        except RuntimeError:
            pass
        time.sleep(0.1)
    failed.append(("next_call", outcome))
    return failed


ABORT_TIME = "/tmp/torch_aborted_at"


def aborted_rank(rank, world, port):
    """Two allreduces; then rank 3 aborts the group (torch_nnp.abort())
    once the others wait for it in a third, and does nothing for 3 s:
    theirs raise within those 3 s, not at the 30 s timeout, and rank 3's next call raises, naming the abort.
    Then every rank destroys the group and makes a new one, on a new
    store, whose allreduce sums exactly."""
    # Nothing else of rank 3 may end the group for the others before
    # their 1 s is up: the abort alone must.
    t = two_then_last(rank, world, port, ABORT_TIME,
                      lambda: (torch_nnp.abort(), time.sleep(3)))
    try:
        dist.all_reduce(t)
        report = [("aborted", "never failed"), ("failed_at", None)]
    except RuntimeError as e:
        report = [("aborted", first_line(e)), ("failed_at", time.time())]
    dist.destroy_process_group()
    try:
        init(rank, world, port + 1)
        t = values(rank, N, torch.float32)
        dist.all_reduce(t)
        same(t, reduced(range(world), N, torch.float32, "SUM"), "the new group's allreduce")
        dist.destroy_process_group()
        report.append(("again", "ok"))
    except Exception as e:  # noqa: BLE001 - every failure is reported
        report.append(("again", first_line(e)))
    return report


def run_job(fn, world, port, label):
    """@fn on @world forked ranks: each rank's list of (check, why or None)."""
    reports = {}
    for r, (ok, value) in fork_ranks(fn, world, (port,), DEADLINE).items():
        reports[r] = value if ok else [(fn.__name__, value), ("failed_at", None)]
    for r in range(world):
        if r not in reports:
            print(f"TORCHTEST {label}: FAIL rank {r} did not report within {DEADLINE} s",
                  flush=True)
    return reports


def main():
    args = sys.argv[1:]
    ddp_steps = int(args.pop(args.index("--ddp") + 1)) if "--ddp" in args else 0
    parallel_steps = (int(args.pop(args.index("--parallel") + 1))
                      if "--parallel" in args else 0)
    port = 29500
    flags = ("--link-down", "--ddp", "--parallel", "--killed-rank", "--aborted")
    for world in [int(a) for a in args if a not in flags]:
        port += 1
        # The 2-rank job registers every tensor with the device; the others
        # copy tensors of up to 1 MiB through the bounce buffer (docs/torch.md).
        if world == 2:
            os.environ["NNP_TORCH_BOUNCE_MAX"] = "0"
        reports = run_job(collectives, world, port, f"w={world}")
        os.environ.pop("NNP_TORCH_BOUNCE_MAX", None)
        names = [c.__name__[6:] for c in CHECKS + (CHECKS_4 if world == 4 else []) + CHECKS_LAST]
        for name in names:
            bad = [(r, why) for r in sorted(reports)
                   for n, why in reports[r] if n == name and why]
            seen = all(any(n == name for n, _ in reports.get(r, [])) for r in range(world))
            if bad:
                r, why = bad[0]
                print(f"TORCHTEST w={world} {name}: FAIL rank {r}: {why}", flush=True)
            elif seen:
                print(f"TORCHTEST w={world} {name}: ok", flush=True)
    if ddp_steps:
        import torch_ddp  # noqa: E402  (torch is imported already)

        torch_ddp.job(4, "nnp", port + 2, ddp_steps)
        torch_ddp.job(4, "gloo", port + 3, ddp_steps)
    if parallel_steps:
        import torch_parallel  # noqa: E402  (torch is imported already)

        torch_parallel.run(4, parallel_steps)
    if "--killed-rank" in args:
        # Rank 3 never reports: fork_ranks() ends once every rank is gone.
        reports = fork_ranks(killed_rank, 4, (port + 4,), DEADLINE)
        killed = stamp_of(KILL_TIME, "TORCHKILL")
        for r in sorted(reports):
            ok, value = reports[r]
            (_, why), (_, at), (_, then) = value if ok else [("", value), ("", None), ("", "")]
            after = f"{at - killed:.3f} s after the kill" if at and killed else "never"
            print(f"TORCHKILL rank {r}: {after}: {why}", flush=True)
            print(f"TORCHKILL rank {r} next call: {then}", flush=True)
    if "--aborted" in args:
        reports = run_job(aborted_rank, 4, port + 5, "aborted")
        aborted = stamp_of(ABORT_TIME, "TORCHABORT")
        for r in sorted(reports):
            (_, why), (_, at), *again = reports[r]
            after = f"{at - aborted:.3f} s after the abort" if at and aborted else "never"
            print(f"TORCHABORT rank {r}: {after}: {why}", flush=True)
            print(f"TORCHABORT rank {r} new group: {again[0][1] if again else 'not made'}",
                  flush=True)
    if "--link-down" in args:
        start = time.time()
        reports = run_job(link_down, 4, port + 1, "link_down")
        for r in sorted(reports):
            print(f"TORCHLINK rank {r}: {reports[r][0][1]}", flush=True)
        times = [reports[r][1][1] for r in reports if reports[r][1][1]]
        if len(times) == 4:
            print(f"TORCHLINK every rank failed within {max(times) - min(times):.1f} s "
                  "of the first", flush=True)
        print(f"TORCHLINK {len(reports)} ranks returned in {time.time() - start:.0f} s",
              flush=True)


if __name__ == "__main__":
    main()
