#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What another user of the host can take from a running POD
(tests/vm/tools_hostile.sh runs this as user 65534): every command line
and environment it may read, printed whole, for the caller to search for
the job's secret; and any chassis's Ethernet frame it gets, over SECONDS,
from the POD's sockets it may connect to: the loopback TCP PORTS the
POD's processes listen on, and the unix sockets in nnp-pod's directory.
Usage: hostile_host_user.py SECONDS [PORT...]. Prints one line per
finding and a summary; the caller judges."""
import glob
import select
import socket
import sys
import time


def readable(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def process_texts():
    n = 0
    for d in glob.glob("/proc/[0-9]*"):
        for what in ("cmdline", "environ"):
            text = readable(f"{d}/{what}")
            if text:
                n += 1
                text = text.replace(b"\0", b" ").decode("utf-8", "replace")
                print(f"{what} {d[6:]}: {text}")
    print(f"texts-read={n}")


def connect_all(ports):
    socks = {}
    for port in ports:
        s = socket.socket()
        s.settimeout(0.5)
        try:
            s.connect(("127.0.0.1", port))
            socks[s] = f"tcp:{port}"
        except OSError:
            s.close()
    for path in glob.glob("/tmp/nnp-pod.*/*"):
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
            socks[s] = f"unix:{path}"
        except OSError:
            s.close()
    print(f"connected={len(socks)}")
    return socks


def frames(socks, seconds):
    """Say which connection gave a frame from a chassis (MAC 52:54:00:6e:6e:xx)."""
    got = {s: b"" for s in socks}
    end = time.monotonic() + seconds
    while socks and time.monotonic() < end:
        ready, _, _ = select.select(list(socks), [], [], max(0, end - time.monotonic()))
        for s in ready:
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if not data:
                del socks[s]
                continue
            got[s] += data
            # QEMU's stream framing: a 4-byte length, then the frame.
            buf = got[s]
            if len(buf) >= 4 + 14 and buf[4 + 6:4 + 11] == bytes.fromhex("5254006e6e"):
                print(f"lan-frame from {socks[s]}: source {buf[4 + 6:4 + 12].hex(':')}")
                del socks[s]


if __name__ == "__main__":
    process_texts()
    frames(connect_all(int(p) for p in sys.argv[2:]), float(sys.argv[1]))
    print("attacker-done")
