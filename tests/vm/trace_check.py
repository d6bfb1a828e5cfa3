# SPDX-License-Identifier: MIT
"""Check trace_job's two trace files (tests/guest/trace_job.c) against the
format of docs/trace.md, line by line: prints TAP-style "ok - ..." or
"not ok - ..." lines, for tests/vm/trace.sh to count.

Usage: trace_check.py RANK0_FILE RANK1_FILE
"""
import json
import re
import sys

KEYS = ["seq", "comm", "rank", "nranks", "op", "dtype", "count", "bytes",
        "redop", "root", "peer", "issue_ns", "wait_ns", "done_ns", "gap_ns",
        "dev_start_ns", "dev_end_ns", "status", "name"]
COMPUTE_NS = 50 * 1000 * 1000
TIMEOUT_NS = 1000 * 1000 * 1000

# (op, dtype, count, bytes, redop, root, peer, status) by rank, in order.
SHARED = [
    ("allreduce", "f32", 1024, 4096, "sum", None, None, "ok"),
    ("broadcast", "i32", 100, 400, None, 1, None, "ok"),
    ("allgather", "bf16", 64, 128, None, None, None, "ok"),
    ("reduce_scatter", "f64", 32, 256, "max", None, None, "ok"),
]
WANT = {
    0: SHARED + [("send", "f32", 16, 64, None, None, 1, "ok")],
    1: SHARED + [("recv", "f32", 16, 64, None, None, 0, "ok"),
                 ("recv", "f32", 16, 64, None, None, 0, "peer_timeout"),
                 ("allreduce", "f32", 8, 32, "sum", None, None, "not_run")],
}

failed = 0


def check(what, ok):
    global failed
    print(("ok - " if ok else "not ok - ") + what)
    failed += not ok


def load(path):
    with open(path) as f:
        lines = [json.loads(line) for line in f]
    return lines[0], lines[1:]


def main(paths):
    heads, ops = {}, {}
    for rank, path in enumerate(paths):
        heads[rank], ops[rank] = load(path)
    for rank in (0, 1):
        head, lines = heads[rank], ops[rank]
        check(f"rank {rank}: header version 1, CLOCK_MONOTONIC",
              list(head) == ["nnp_trace", "pid", "clock", "start_ns"] and
              head["nnp_trace"] == 1 and head["clock"] == "CLOCK_MONOTONIC")
        check(f"rank {rank}: every line has the keys in order",
              all(list(o) == KEYS for o in lines))
        check(f"rank {rank}: no name: the communicator was made without one",
              all(o["name"] is None for o in lines))
        got = [(o["op"], o["dtype"], o["count"], o["bytes"], o["redop"],
                o["root"], o["peer"], o["status"]) for o in lines]
        check(f"rank {rank}: the operations, exactly: {got}",
              got == WANT[rank])
        check(f"rank {rank}: seq 0.. in order, rank and nranks",
              [o["seq"] for o in lines] == list(range(len(lines))) and
              all(o["rank"] == rank and o["nranks"] == 2 for o in lines))
        check(f"rank {rank}: start <= issue <= wait <= done, gap >= 0",
              all(head["start_ns"] <= o["issue_ns"] <= o["wait_ns"] <=
                  o["done_ns"] and o["gap_ns"] >= 0 for o in lines))
        ran = [o for o in lines if o["status"] == "ok"]
        check(f"rank {rank}: modeled start < end on what ran, null on the rest",
              all(o["dev_start_ns"] is not None and
                  o["dev_start_ns"] < o["dev_end_ns"] for o in ran) and
              all(o["dev_start_ns"] is None and o["dev_end_ns"] is None
                  for o in lines if o["status"] != "ok"))
        check(f"rank {rank}: the allreduce waited for after 50 ms of compute",
              lines[0]["wait_ns"] - lines[0]["issue_ns"] >= COMPUTE_NS)
        check(f"rank {rank}: the broadcast's gap is the 50 ms before it",
              lines[1]["gap_ns"] ==
              lines[1]["issue_ns"] - lines[0]["done_ns"] >= COMPUTE_NS)
    comms = {o["comm"] for r in (0, 1) for o in ops[r]}
    check(f"one communicator name on both ranks, 16 hex digits: {comms}",
          len(comms) == 1 and re.fullmatch("[0-9a-f]{16}", comms.pop()))
    late = ops[1][5]
    check("the lone receive failed after the 1 s timeout",
          late["done_ns"] - late["issue_ns"] >= TIMEOUT_NS)
    # The chips' clocks: the later rank's start and end of each collective.
    span = [max(ops[r][k]["dev_end_ns"] for r in (0, 1)) -
            max(ops[r][k]["dev_start_ns"] for r in (0, 1)) for k in range(4)]
    check(f"each collective's modeled time over both ranks is positive: {span}",
          all(t > 0 for t in span))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:3]))
