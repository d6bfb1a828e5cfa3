#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Write the fuzzers' seed corpora into tests/fuzz/corpus/<target>/.

Each seed is a well-formed input that reaches deep into its target (keys
registered, commands that succeed, packets a collective waits for), so
that mutation starts from there. The layouts are those the fuzz targets'
comments describe; run this again after changing one.
"""
import os
import struct

ROOT = os.path.dirname(os.path.abspath(__file__))
HOST_BASE = 0x100000
PAGE = 4096

# hw/nnp_hw.h
ADMIN = dict(NOP=0, IDENTIFY=1, CTX_CREATE=2, CTX_DESTROY=3, KEY_REGISTER=4,
             KEY_UNREGISTER=5, QUEUE_CREATE=6, QUEUE_DESTROY=7, QUEUE_RESET=8,
             GET_COUNTERS=9, COMM_CREATE=10, COMM_DESTROY=11, GET_PORTS=12)
CMD = dict(NOP=0, COPY=1, FILL=2, TIMESTAMP=3, BARRIER=4, ALLREDUCE=5,
           BROADCAST=6, ALLGATHER=7, REDUCE_SCATTER=8, SEND=9, RECV=10)
KEY_DEVICE, KEY_HOST, RW = 1, 2, 3


def coll_value(dtype, op, comm, root=0):
    return dtype | op << 8 | comm << 16 | root << 32


def queue_cmd(opcode, src_key=0, dst_key=0, src_off=0, dst_off=0, length=0, value=0):
    return struct.pack("<BBHIIIQQQQQQ", opcode, 0, 0, 0, src_key, dst_key,
                       src_off, dst_off, length, value, 0, 0)


def admin_cmd(opcode, addr=0, length=0, args=b""):
    return struct.pack("<BBHIQII", opcode, 0, 0, 0, addr, length, 0) + \
        args.ljust(40, b"\0")


def write(target, name, data):
    d = os.path.join(ROOT, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def queue_seeds():
    # Three device keys (page, length / 16, rights) and a host key of 4 pages.
    setup = b"".join(struct.pack("<BHB", page, 0x10000 // 16, RW) for page in (0, 16, 32))
    setup += bytes([4, 0, 1, 2, 3, 0, 0, 0, 0]) + struct.pack("<HIB", 0, 4 * PAGE, RW)
    setup = setup.ljust(32, b"\0")
    post = lambda c: b"\0" + c  # noqa: E731
    # Key fields 1..8 pick a slot: device keys 1-3, host key 4, theirs 5.
    copies = [
        queue_cmd(CMD["COPY"], 1, 2, 0, 0x100, 0x1000),
        queue_cmd(CMD["FILL"], 0, 3, 0, 0x10, 0x2000, 0xab),
        queue_cmd(CMD["COPY"], 1, 4, 0x80, 0x10, 0x3000),
        queue_cmd(CMD["COPY"], 4, 2, 0x7, 0x0, 0x1001),
        queue_cmd(CMD["TIMESTAMP"], 0, 1, 0, 0x40, 0),
        queue_cmd(CMD["BARRIER"]),
    ]
    write("queue", "copies", setup + b"".join(post(c) for c in copies))
    colls = [
        queue_cmd(CMD["ALLREDUCE"], 1, 2, 0, 0, 256, coll_value(0, 0, 1)),
        queue_cmd(CMD["REDUCE_SCATTER"], 1, 3, 0, 0, 64, coll_value(4, 4, 1)),
        queue_cmd(CMD["ALLGATHER"], 2, 3, 0, 0, 64, coll_value(3, 0, 1)),
        queue_cmd(CMD["BROADCAST"], 1, 2, 0, 0, 64, coll_value(2, 0, 1)),
        queue_cmd(CMD["ALLREDUCE"], 1, 2, 0, 0, 256, coll_value(0, 0, 2)),
        queue_cmd(CMD["SEND"], 1, 0, 0, 0, 128, 2 << 16),
    ]
    drain, reset = b"\x05" + bytes(64), b"\x07" + bytes(64)
    # The last two fail (a link that is not wired): drain, reset, go on.
    write("queue", "collectives", setup + b"".join(post(c) for c in colls) +
          drain + reset + post(copies[0]))
    # Another context's key (slot 5), an unregister (op 6), a drain (op 5).
    theirs = queue_cmd(CMD["COPY"], 5, 1, 0, 0, 0x100)
    write("queue", "isolation", setup + post(theirs) + drain + reset +
          b"\x06" + struct.pack("<BBH", 0, 0, 1).ljust(64, b"\0") + post(copies[1]))


def admin_seeds():
    data = struct.pack("<QQ", HOST_BASE + 8 * PAGE, HOST_BASE + 9 * PAGE).ljust(64, b"\0")
    data += struct.pack("<II", 1, 0).ljust(448, b"\0")
    key = lambda t, ln, base=0, off=0: struct.pack(  # noqa: E731
        "<IIIIQQ", 1, t, RW, off, ln, base)
    cmds = [
        admin_cmd(ADMIN["NOP"]),
        admin_cmd(ADMIN["IDENTIFY"], 0x100, 64),
        admin_cmd(ADMIN["CTX_CREATE"], args=struct.pack("<I", 1)),
        admin_cmd(ADMIN["KEY_REGISTER"], 0, 16, key(KEY_HOST, 2 * PAGE - 8, off=8)),
        admin_cmd(ADMIN["KEY_REGISTER"], 0, 0, key(KEY_DEVICE, 0x10000, 0x20000)),
        admin_cmd(ADMIN["QUEUE_CREATE"], args=struct.pack(
            "<IIIIQQ", 1, 0, 16, 1, HOST_BASE + 10 * PAGE, HOST_BASE + 11 * PAGE)),
        admin_cmd(ADMIN["GET_COUNTERS"], 0x200, 64),
        admin_cmd(ADMIN["GET_PORTS"], 0x400, 4 * 48),
        admin_cmd(ADMIN["COMM_CREATE"], 64, 8, struct.pack("<IIIIIIQ", 1, 1, 2, 0, 0, 1, 7)),
        admin_cmd(ADMIN["COMM_DESTROY"], args=struct.pack("<II", 1, 1)),
        admin_cmd(ADMIN["QUEUE_RESET"], args=struct.pack("<II", 1, 0)),
        admin_cmd(ADMIN["QUEUE_DESTROY"], args=struct.pack("<II", 1, 0)),
        admin_cmd(ADMIN["KEY_UNREGISTER"], args=struct.pack("<II", 1, 1)),
        admin_cmd(ADMIN["CTX_DESTROY"], args=struct.pack("<I", 1)),
    ]
    write("admin", "lifecycle", data + b"".join(cmds))


# fuzz_icl_chip.h: the commands posted first, 8 bytes each.
def icl_command(kind, dtype, op, count, comm_root, src_page, dst_page):
    return bytes([kind, dtype, op, count & 0xff, count >> 8, comm_root,
                  src_page, dst_page])


ICL_NOP = icl_command(5, 0, 0, 0, 0, 0, 0)  # a RECV of 0 bytes on comm 1 port 0
# Rank 0 of 3 (comm 1) receives on port 1: segments of 1024 floats.
ICL_ALLREDUCE = icl_command(0, 0, 0, 1024, 0, 0, 1) + ICL_NOP * 3
ICL_SEGMENTS = [1368, 1364, 1364, 1368]
# Rank 1 of 2 (comm 2) receives on port 0: a RECV of 100 bytes.
ICL_RECV = icl_command(5, 0, 0, 100, 1, 0, 2) + ICL_NOP * 3


def icl_seeds():
    def packet(port, epoch, seq, payload, abort=0):
        return struct.pack("<BBIBH", port, epoch, seq, abort, len(payload)) + payload

    write("icl", "allreduce", ICL_ALLREDUCE + b"".join(
        packet(1, 0, 0, bytes([i + 1]) * n) for i, n in enumerate(ICL_SEGMENTS)))
    write("icl", "aborted", ICL_ALLREDUCE + packet(1, 0, 0, b"", abort=1))
    write("icl", "recv", ICL_RECV + packet(0, 1, 0x80000000, b"\x5a" * 100) +
          packet(0, 2, 0, b"stranger"))


def icl_frame_seeds():
    # firmware-sim/include/nnp_icl_frame.h
    HELLO, DATA, ABORT, LINK_DOWN, LINK_UP, AUTH = 1, 2, 3, 4, 5, 6
    LENT, GIVE_BACK, RECLAIM, CREDIT = 8, 9, 10, 11
    EPOCHS = [0x1111, 0x2222, 0xdead]  # fuzz_icl_chip.c
    PEERS = [(2, 1), (3, 0)]  # the far ends of our ports 0 and 1
    CHIP = 1  # FUZZ_CHIP_ID

    def frame(kind, payload=b"", epoch=0, seq=0, model=None):
        version = 3 if model is None else 4
        return struct.pack("<IBBHIIQ", 0x4c43494e, version, kind, 0, len(payload),
                           seq, epoch) + \
            (b"" if model is None else struct.pack("<Q", model)) + payload

    def hello(port, chip=None, up=1, share=False, credit=False):
        # share: offering 1 MiB of memory (log2 20), as fuzz_icl_frame.c wants
        peer_chip, peer_port = PEERS[port]
        features = 1 | (2 if share else 0) | (4 if credit else 0)
        body = struct.pack("<IHBBIHH", peer_chip if chip is None else chip,
                           peer_port, up, features, CHIP, port,
                           20 if share else 0) + bytes(range(32))
        # On port PORT, the peer's HELLO and an AUTH (not checked here).
        return bytes([port]) + frame(HELLO, body) + frame(AUTH, b"\xa5" * 32)

    data = b"".join(frame(DATA, bytes([i + 1]) * n, EPOCHS[0], 0,
                          None if i % 2 else 1000 * i)
                    for i, n in enumerate(ICL_SEGMENTS))
    write("icl_frame", "allreduce", ICL_ALLREDUCE + hello(1) + data)
    write("icl_frame", "link-state", ICL_ALLREDUCE + hello(1) + frame(LINK_DOWN) +
          frame(LINK_UP) + data[:1400] + frame(ABORT, b"", EPOCHS[0], 0, 5))
    write("icl_frame", "recv", ICL_RECV + hello(0) +
          frame(DATA, b"\x5a" * 100, EPOCHS[1], 0x80000000) +
          frame(DATA, b"stranger", EPOCHS[2]) + frame(7))
    write("icl_frame", "down-peer", ICL_RECV + hello(0, up=0) +
          frame(DATA, b"\x5a" * 100, EPOCHS[1]) + frame(LINK_UP) +
          frame(DATA, b"\x5a" * 100, EPOCHS[1]))
    write("icl_frame", "wrong-chip", ICL_RECV + hello(0, chip=4) +
          frame(DATA, b"\x5a" * 100, EPOCHS[1]))

    def lent(offset, n, tag, model=None):
        return frame(LENT, struct.pack("<QII", offset, n, tag), EPOCHS[0], 0,
                     model)

    def tags(kind, *t):
        return frame(kind, struct.pack("<%dI" % len(t), *t))

    # A shared link: the segments lent from the peer's 1 MiB, then tags.
    shared = b"".join(lent(i << 16, n, i, 1000 * i)
                      for i, n in enumerate(ICL_SEGMENTS))
    write("icl_frame", "shared-allreduce", ICL_ALLREDUCE + hello(1, share=True) +
          shared + tags(RECLAIM, 2, 3) + tags(GIVE_BACK, 1 << 10))
    write("icl_frame", "shared-outside", ICL_ALLREDUCE + hello(1, share=True) +
          lent((1 << 20) - 8, 16, 0) + lent(2**64 - 8, 16, 1))

    # Credits: the allreduce sends on port 0 once a frame has let the
    # queue run (a stray DATA, dropped there and credited), and that
    # port's peer credits back a packet, then more than it was ever sent
    # (the link drops it); and packets received on a counting link, each
    # credited once taken.
    def credit(packets, n):
        return frame(CREDIT, struct.pack("<IQ", packets, n))

    write("icl_frame", "credits", ICL_ALLREDUCE + hello(0, credit=True) +
          frame(DATA, b"\x5a" * 16, EPOCHS[0]) + credit(1, 4) + credit(1, 0) +
          credit(5, 0))
    write("icl_frame", "credits-recv", ICL_RECV + hello(0, credit=True) +
          frame(DATA, b"\x5a" * 100, EPOCHS[1], 0x80000000) +
          frame(DATA, b"stranger", EPOCHS[2]) + credit(1, 8))


def ring_seeds():
    def rank(chip, ports):
        b = bytes([chip, len(ports)])
        for state, peer_chip, peer_port in ports:
            b += bytes([state, peer_chip, peer_port])
        return b.ljust(2 + 16 * 3, b"\0")

    n = 4
    ring = bytes([n]) + b"".join(
        rank(c, [(3, (c + 1) % n, 1), (3, (c - 1) % n, 0)]) for c in range(n))
    write("ring_plan", "rank-order", ring)
    # Chips wired 0-2-1-3-0: the planner must search.
    wires = {0: (2, 3), 1: (3, 2), 2: (1, 0), 3: (0, 1)}
    write("ring_plan", "search", bytes([n]) + b"".join(
        rank(c, [(3, wires[c][0], 1), (3, wires[c][1], 0)]) for c in range(n)))
    write("ring_plan", "same-chip", bytes([2]) + rank(5, [(3, 5, 0)]) * 2)
    # QEMU's torus:4x4 (port 0 east to 1, 2 south to 3): a torus to find.
    w = h = 4

    def at(x, y):
        return y % h * w + x % w
    write("ring_plan", "torus-4x4", bytes([w * h]) + b"".join(
        rank(at(x, y), [(3, at(x + 1, y), 1), (3, at(x - 1, y), 0),
                        (3, at(x, y + 1), 3), (3, at(x, y - 1), 2)])
        for y in range(h) for x in range(w)))
    # A ring of 6 with two links between neighbours: a second port pair.
    n = 6
    write("ring_plan", "double-ring", bytes([n]) + b"".join(
        rank(c, [(3, (c + 1) % n, 1), (3, (c - 1) % n, 0),
                 (3, (c + 1) % n, 3), (3, (c - 1) % n, 2)]) for c in range(n)))


def bootstrap_seeds():
    # libnnp/src/bootstrap.h and fuzz_bootstrap.c
    magic, version, mac = 0x6e6e7062, 2, bytes(32)  # the MACs the harness seals
    SUCCESS, INVALID, TIMEOUT = 0, 1, 10
    HOLDS_SECRET, PROVES, SEALS = 0x80, 0x80, 0x40
    up = 3  # NNP_LINK_UP | NNP_LINK_TRAINED

    def info(chip, ports):
        b = struct.pack("<II", chip, len(ports))
        for state, peer_chip, peer_port in ports:
            b += struct.pack("<III", state, peer_chip, peer_port)
        return b.ljust(8 + 16 * 12, b"\0")

    def msg(body):
        return struct.pack("<II", magic, len(body)) + body

    def ring(n):
        return [info(10 + c, [(up, 10 + (c + 1) % n, 1), (up, 10 + (c - 1) % n, 0)])
                for c in range(n)]

    def hello(nranks, rank, what, nonce=0x31):
        return msg(struct.pack("<II", version, 0) + bytes([nonce]) * 32) + \
            msg(struct.pack("<II", nranks, rank) + what + mac)

    def records(chunks):
        out = b""
        for conn, data in chunks:
            while data:
                out += bytes([conn, min(len(data), 255)]) + data[:255]
                data = data[255:]
        return out

    def seed(chunks, n, answer, root_holds=PROVES | SEALS):
        root = records(chunks)
        proof = msg(bytes([0x77]) * 32 + mac)
        rank = bytes([(n - 1) | root_holds])
        return struct.pack("<H", len(root)) + root + rank + proof + answer

    table = ring(3)
    hellos = [hello(3, r, table[r]) for r in range(3)]
    honest = lambda conn: conn | HOLDS_SECRET  # noqa: E731
    # Rank 1 in pieces across connections, a stranger, a hello not sealed
    # with the secret, rank 1 again.
    chunks = [(honest(0), hellos[0]), (honest(1), hellos[1][:50]), (2, b"\x55" * 64),
              (honest(1), hellos[1][50:]), (5, hello(3, 2, table[2], 0x32)),
              (honest(3), hellos[2]), (honest(4), hellos[1])]
    reply = lambda st, missing=0: msg(struct.pack("<IIQ", st, missing, 0x1234) + mac)  # noqa: E731
    write("bootstrap", "job", seed(chunks, 3, reply(SUCCESS) + msg(b"".join(table))))
    write("bootstrap", "timeout", seed(chunks[:2], 3, reply(TIMEOUT, 1)))
    # A job of no ranks, a header of another length, a rank past the job.
    bad = [(honest(0), hello(0, 0, table[0])),
           (honest(1), hello(2, 0, table[0])[:48] + struct.pack("<II", magic, 7)),
           (honest(2), hello(2, 2, table[0]))]
    write("bootstrap", "refused", seed(bad, 2, reply(INVALID)))
    # Two ranks on one chip: no ring.
    write("bootstrap", "same-chip", seed([], 2, reply(SUCCESS) + msg(table[0] * 2)))
    # A root without the secret: its proof is not taken; a man in the
    # middle who relays the proof: its reply is not.
    write("bootstrap", "impostor", seed([], 3, reply(SUCCESS) + msg(b"".join(table)), 0))
    write("bootstrap", "replay", seed([], 3, reply(SUCCESS) + msg(b"".join(table)), PROVES))
    # A status no root sends, sealed: NNP_ERROR_IO, never that status.
    write("bootstrap", "regress-reply-status-no-root-sends",
          seed([], 2, reply(0xb2b2b2b2)))


if __name__ == "__main__":
    queue_seeds()
    admin_seeds()
    icl_seeds()
    icl_frame_seeds()
    ring_seeds()
    bootstrap_seeds()
