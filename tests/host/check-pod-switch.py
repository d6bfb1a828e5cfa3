#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tools/nnp-pod's management LAN switch, driven over its sockets as QEMU's
stream netdevs drive it (frames behind 4-byte big-endian lengths): a
broadcast reaches every other port and not its sender; a reply goes only
to the port its destination was learned on; a frame for an unknown MAC
floods; a port announcing a frame over FRAME_MAX is dropped and the
others go on; a port that stops reading is dropped after SEND_TIMEOUT_S,
not before, and the frames for the others all arrive. Prints TAP; exits 1 on a
failure."""
import importlib.machinery
import importlib.util
import os
import socket
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

root = Path(__file__).resolve().parents[2]
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, str(root / "tests/lib"))
import tap  # noqa: E402

loader = importlib.machinery.SourceFileLoader("nnp_pod", str(root / "tools/nnp-pod"))
spec = importlib.util.spec_from_loader("nnp_pod", loader)
pod = importlib.util.module_from_spec(spec)
loader.exec_module(pod)

BCAST = b"\xff" * 6


def mac(n):
    return bytes([0x52, 0x54, 0, 0x6E, 0x6E, n])


def frame(dst, src, payload=b"x" * 50):
    return dst + src + b"\x08\x00" + payload


def port(sw, rcvbuf=None):
    s = socket.socket(socket.AF_UNIX)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(sw.path)
    s.settimeout(0.5)
    return s


def send(s, f):
    s.sendall(struct.pack(">I", len(f)) + f)


def recv_frame(s):
    """The next frame on @s, or None if none comes within its timeout."""
    try:
        head = b""
        while len(head) < 4:
            part = s.recv(4 - len(head))
            if not part:
                return None
            head += part
        (n,) = struct.unpack(">I", head)
        body = b""
        while len(body) < n:
            part = s.recv(n - len(body))
            if not part:
                return None
            body += part
        return body
    except OSError:
        return None


def closed(s, within):
    """Whether the switch closed @s within @within seconds."""
    s.settimeout(within)
    try:
        while True:
            if not s.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except OSError:
        return False


tmp = tempfile.TemporaryDirectory(prefix="check-pod-switch.")
sw = pod.LanSwitch(os.path.join(tmp.name, "lan"))
sw.start()
a, b, c = port(sw), port(sw), port(sw)
time.sleep(0.2)  # all three accepted
tests = []

f = frame(BCAST, mac(1))
send(a, f)
tests.append((recv_frame(b) == f and recv_frame(c) == f and recv_frame(a) is None,
              "a broadcast reaches every other port, not its sender"))

f = frame(mac(1), mac(2))
send(b, f)
tests.append((recv_frame(a) == f and recv_frame(c) is None,
              "a reply goes only to the port its destination was learned on"))

f = frame(mac(9), mac(1))
send(a, f)
tests.append((recv_frame(b) == f and recv_frame(c) == f,
              "a frame for an unknown MAC floods the other ports"))

c.sendall(struct.pack(">I", pod.FRAME_MAX + 1))
dropped = closed(c, 2)
f = frame(mac(2), mac(1))
send(a, f)
tests.append((dropped and recv_frame(b) == f,
              "a port announcing a frame over FRAME_MAX is dropped; the others go on"))

# d stops reading: 400 broadcasts of 60 KiB overflow its socket buffers.
d = port(sw, rcvbuf=4096)
time.sleep(0.2)
got = []


def reader():
    b.settimeout(pod.SEND_TIMEOUT_S + 5)
    while len(got) < 400:
        x = recv_frame(b)
        if x is None:
            return
        got.append(x)


def writer():
    for _ in range(400):
        send(a, big)


big = frame(BCAST, mac(1), b"y" * 60000)
a.settimeout(None)  # the switch stops reading a while it waits on d
start = time.monotonic()
threads = [threading.Thread(target=f, daemon=True) for f in (reader, writer)]
for t in threads:
    t.start()
for t in threads:  # a switch stalled by d for good fails here, not hangs
    t.join(pod.SEND_TIMEOUT_S + 10)
took = time.monotonic() - start
# Dropped only once SEND_TIMEOUT_S has passed with d taking nothing (a
# lower bound that load cannot break: it only makes the run longer).
tests.append((len(got) == 400 and all(x == big for x in got) and closed(d, 5) and
              took >= pod.SEND_TIMEOUT_S,
              "a port that stops reading is dropped after %.0f s, not before; the other "
              "port got all 400 frames (%d, in %.1f s)" % (pod.SEND_TIMEOUT_S, len(got), took)))
tap.report(tests)
