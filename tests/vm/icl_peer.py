#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for the far end of an nnp ICL socket link, well-behaved or
hostile, for the tests in tests/vm (see qemu-device/nnp_icl_socket.c for the
protocol). Usage: icl_peer.py SCENARIO ADDR [OPTIONS], ADDR being
HOST:TCPPORT or unix:PATH; exit status 0 if QEMU behaved as SCENARIO wants,
else 1 with the reason on stderr.

  link            hello and AUTH with --secret as chip --chip, port --port
                  (to chip --want-chip port --want-port); QEMU must prove the
                  secret and keep the connection; with --monitor, a link-down
                  from there must reach us as a LINK_DOWN frame
  refused         the same, and QEMU must drop us within --within seconds
  stall           one byte of a hello, then nothing: QEMU must drop us within
                  --within seconds
  silent          connect and send nothing: QEMU must drop us within
                  --within seconds
  truncated       link, then a DATA frame header promising 1000 bytes and
                  only 10 of them: QEMU must drop us within --within seconds
  no-read         link, then never read while --toggles link-down/link-up
                  pairs go through --monitor: each must return within
                  --within seconds, and the monitor must still answer
  garbage         link, then send --frame (hex) after the handshake: QEMU
                  must drop us
  raw             send --frame (hex) instead of a hello: QEMU must drop us
  share           over a unix socket, link offering to share --mem-shift
                  (log2 bytes) of memory; QEMU must send its own memory, a
                  read-only sealed memfd that we can write through no
                  descriptor (not a re-open of /proc/self/fd/N read-write,
                  not pwrite, not a writable shared mapping); we send
                  --memfd: sealed (a sealed memfd of the size offered, all
                  of it allocated: QEMU must keep us, and then with --send
                  (hex) drop us after it), unsealed, sparse (sealed but not
                  allocated), large (twice the size offered) or none (SHARE
                  without a descriptor): QEMU must drop us within --within
                  seconds
  oversize        over a unix socket, link offering to share --mem-shift
                  bytes, more than QEMU's own memory: QEMU must drop us
                  within --within seconds without sending its memory
  squat           --strangers connections that say nothing, then a real
                  link as in "link": its AUTH must come within --within
                  seconds, and QEMU must then drop every stranger within 1 s
  wedge           link, then read nothing more: QEMU must drop us within
                  --within seconds (its frames left unread)
  hoard           as "share" with a sealed memfd, then read every frame but
                  give back no LENT chunk and answer no RECLAIM: QEMU must
                  lend us some, ask for them back, and drop us within
                  --within seconds
"""
import argparse
import fcntl
import hashlib
import errno
import hmac
import mmap
import os
import select
import socket
import struct
import sys
import time

HDR = struct.Struct("<IBBHIIQ")
HELLO = struct.Struct("<IHBBIHH32s")
MAGIC = 0x4C43494E
VERSION = 3
T_HELLO, T_DATA, T_ABORT, T_LINK_DOWN, T_LINK_UP, T_AUTH = 1, 2, 3, 4, 5, 6
T_SHARE, T_LENT, T_GIVE_BACK, T_RECLAIM = 7, 8, 9, 10
FEAT_SHARE = 2
F_SEAL_FUTURE_WRITE = 0x0010  # linux/fcntl.h; not in Python 3.11's fcntl
SEALS = (fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL |
         F_SEAL_FUTURE_WRITE)


def fail(why):
    print("icl_peer: " + why, file=sys.stderr)
    sys.exit(1)


def connect(addr):
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX)
        target = addr[5:]
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.socket()
        target = (host, int(port))
    end = time.time() + 30
    while True:
        try:
            s.connect(target)
            return s
        except OSError:
            if time.time() > end:
                raise
            time.sleep(0.1)


def frame(ftype, payload=b"", tag=0):
    return HDR.pack(MAGIC, VERSION, ftype, 0, len(payload), 0, tag) + payload


def recv_exact(s, n, timeout):
    """n bytes, or None if the connection ended (or timed out)."""
    s.settimeout(timeout)
    got = b""
    try:
        while len(got) < n:
            c = s.recv(n - len(got))
            if not c:
                return None
            got += c
    except (socket.timeout, ConnectionResetError):
        return None
    return got


def recv_frame(s, timeout=10):
    h = recv_exact(s, HDR.size, timeout)
    if h is None:
        return None, None
    magic, ver, ftype, _, n, _, _ = HDR.unpack(h)
    if (magic, ver) != (MAGIC, VERSION):
        fail("QEMU sent a bad frame header %r" % h)
    return ftype, recv_exact(s, n, timeout) if n else b""


def closed_within(s, secs):
    """True if QEMU ends the connection within secs (data is discarded)."""
    end = time.time() + secs
    while time.time() < end:
        r, _, _ = select.select([s], [], [], max(0, end - time.time()))
        if r:
            try:
                if not s.recv(65536):
                    return True
            except ConnectionResetError:
                return True
    return False


def handshake(s, a, share=0):
    """Hello and AUTH, offering to share 2**share bytes of memory (0: not);
    returns whether QEMU's AUTH proves our secret."""
    mine = HELLO.pack(a.chip, a.port, 1, FEAT_SHARE if share else 0,
                      a.want_chip, a.want_port, share, os.urandom(32))
    s.sendall(frame(T_HELLO, mine))
    t, theirs = recv_frame(s)
    if t != T_HELLO or len(theirs) != HELLO.size:
        fail("no hello from QEMU (got type %r)" % t)
    key = a.secret.encode()
    s.sendall(frame(T_AUTH, hmac.new(key, mine + theirs, hashlib.sha256).digest()))
    t, mac = recv_frame(s)
    if t != T_AUTH:
        fail("no AUTH from QEMU (got type %r)" % t)
    return hmac.compare_digest(mac, hmac.new(key, theirs + mine,
                                             hashlib.sha256).digest())


def memfd(size, seals, backed=True):
    fd = os.memfd_create("icl-peer", os.MFD_ALLOW_SEALING)
    os.ftruncate(fd, size)
    if backed:
        os.posix_fallocate(fd, 0, size)
    if seals:
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    return fd


def expect_errno(err, what, call, *args):
    try:
        call(*args)
    except OSError as e:
        if e.errno != err:
            fail("%s: %s, not %s" % (what, e, os.strerror(err)))
        return
    fail("%s succeeded: QEMU's memory is writable" % what)


def try_writes(fd):
    """Write QEMU's memory every way a peer has: a re-open read-write
    (refused unless we are root: mode 0400), then pwrite and a writable
    shared mapping through it (refused by the seal, root or not)."""
    path = "/proc/self/fd/%d" % fd
    if os.geteuid() != 0:
        expect_errno(errno.EACCES, "re-open read-write", os.open, path,
                     os.O_RDWR)
    else:
        rw = os.open(path, os.O_RDWR)
        expect_errno(errno.EPERM, "pwrite through a re-open", os.pwrite, rw,
                     b"x", 0)
        expect_errno(errno.EPERM, "a writable shared mapping of a re-open",
                     mmap.mmap, rw, 4096, mmap.MAP_SHARED,
                     mmap.PROT_READ | mmap.PROT_WRITE)
        os.close(rw)
    mode = os.fstat(fd).st_mode & 0o7777
    if mode != 0o400:
        fail("QEMU's memory has mode %o, not 400" % mode)


def share(s, a):
    """After the handshake: QEMU's SHARE (its memory, read-only and
    sealed), then ours as --memfd says."""
    s.settimeout(10)
    h, fds, _, _ = socket.recv_fds(s, HDR.size, 4)
    if len(h) != HDR.size or HDR.unpack(h)[2] != T_SHARE or len(fds) != 1:
        fail("no SHARE with one descriptor from QEMU (%r, %d fds)" % (h, len(fds)))
    theirs = fds[0]
    if fcntl.fcntl(theirs, fcntl.F_GETFL) & os.O_ACCMODE != os.O_RDONLY:
        fail("QEMU gave us its memory writable")
    try_writes(theirs)
    if fcntl.fcntl(theirs, fcntl.F_GET_SEALS) & SEALS != SEALS:
        fail("QEMU's memory is not sealed")
    print("QEMU shares %d bytes, read-only, sealed" % os.fstat(theirs).st_size)
    os.close(theirs)
    size = 1 << a.mem_shift
    if a.memfd == "none":
        s.sendall(frame(T_SHARE))
        return
    fd = memfd(2 * size if a.memfd == "large" else size,
               0 if a.memfd == "unsealed" else SEALS, a.memfd != "sparse")
    socket.send_fds(s, [frame(T_SHARE)], [fd])
    os.close(fd)


def dropped_within(s, secs):
    """True if QEMU shuts the connection down within secs; reads nothing."""
    p = select.poll()
    p.register(s, select.POLLRDHUP)
    return bool(p.poll(secs * 1000))


def hoard(s, secs):
    """Read frames for up to secs, keeping every LENT chunk: the LENT and
    RECLAIM frames seen, and whether QEMU ended the connection."""
    end = time.time() + secs
    lent = reclaims = 0
    while time.time() < end:
        t, _ = recv_frame(s, end - time.time())
        if t is None:
            return lent, reclaims, time.time() < end
        lent += t == T_LENT
        reclaims += t == T_RECLAIM
    return lent, reclaims, False


class Monitor:
    """HMP over a unix socket, one command at a time, timed; the last
    command's output in .last."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.connect(path)
        self.buf = b""
        if not self.read_prompt(10):
            fail("no monitor prompt")

    def read_prompt(self, timeout):
        end = time.time() + timeout
        while b"(qemu) " not in self.buf:
            left = end - time.time()
            if left <= 0 or not select.select([self.s], [], [], left)[0]:
                return False
            c = self.s.recv(65536)
            if not c:
                return False
            self.buf += c
        self.last, self.buf = self.buf.split(b"(qemu) ", 1)
        return True

    def cmd(self, line, timeout):
        """Seconds the command took, or None if no prompt in timeout."""
        t0 = time.time()
        self.s.sendall(line.encode() + b"\n")
        return time.time() - t0 if self.read_prompt(timeout) else None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("scenario")
    p.add_argument("addr")
    p.add_argument("--secret", default="")
    p.add_argument("--chip", type=int, default=1)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--want-chip", type=int, default=0)
    p.add_argument("--want-port", type=int, default=0)
    p.add_argument("--within", type=float, default=8)
    p.add_argument("--monitor")
    p.add_argument("--device", default="nnp0")
    p.add_argument("--toggles", type=int, default=1000)
    p.add_argument("--frame", default="")
    p.add_argument("--mem-shift", type=int, default=20)
    p.add_argument("--memfd", default="sealed")
    p.add_argument("--send", default="")
    p.add_argument("--strangers", type=int, default=1)
    a = p.parse_args()

    if a.scenario == "share":
        s = connect(a.addr)
        if not handshake(s, a, a.mem_shift):
            fail("QEMU's AUTH does not prove the secret")
        share(s, a)
        if a.memfd != "sealed":
            if not closed_within(s, a.within):
                fail("QEMU kept a peer whose memory is %s" % a.memfd)
            return
        if closed_within(s, 1):
            fail("QEMU dropped a peer sharing sealed memory")
        if a.send:
            s.sendall(bytes.fromhex(a.send))
            if not closed_within(s, a.within):
                fail("QEMU kept the connection after %s" % a.send)
        return

    if a.scenario == "hoard":
        s = connect(a.addr)
        if not handshake(s, a, a.mem_shift):
            fail("QEMU's AUTH does not prove the secret")
        share(s, a)
        lent, reclaims, dropped = hoard(s, a.within)
        print("kept %d lent chunks, ignored %d RECLAIM frames" %
              (lent, reclaims))
        if not lent or not reclaims or not dropped:
            fail("QEMU lent %d chunks, asked %d times, and %s us" %
                 (lent, reclaims, "dropped" if dropped else "kept"))
        return

    if a.scenario == "wedge":
        s = connect(a.addr)
        if not handshake(s, a):
            fail("QEMU's AUTH does not prove the secret")
        t0 = time.time()
        if not dropped_within(s, a.within):
            fail("QEMU kept a peer that read nothing for %.1f s" % a.within)
        print("dropped %.1f s after linking, %d bytes unread" %
              (time.time() - t0, len(s.recv(1 << 24, socket.MSG_DONTWAIT))))
        return

    if a.scenario == "oversize":
        s = connect(a.addr)
        if not handshake(s, a, a.mem_shift):
            fail("QEMU's AUTH does not prove the secret")
        s.settimeout(a.within)
        try:
            h, fds, _, _ = socket.recv_fds(s, HDR.size, 4)
        except ConnectionResetError:
            h, fds = b"", []
        except socket.timeout:
            h, fds = None, []
        if h is None:
            fail("QEMU kept a peer announcing %d bytes" % (1 << a.mem_shift))
        if h or fds:
            fail("QEMU sent its memory to a peer announcing %d bytes"
                 % (1 << a.mem_shift))
        return

    if a.scenario == "squat":
        strangers = []
        for i in range(a.strangers):
            t = socket.socket(socket.AF_UNIX)
            t.settimeout(1)
            try:
                t.connect(a.addr[5:])
                strangers.append(t)
            except OSError as e:
                print("stranger %d could not connect: %s" % (i, e))
        time.sleep(0.2)
        t0 = time.time()
        s = connect(a.addr)
        if not handshake(s, a):
            fail("QEMU's AUTH does not prove the secret")
        took = time.time() - t0
        if took > a.within:
            fail("linked only after %.1f s with %d strangers connected"
                 % (took, a.strangers))
        for i, t in enumerate(strangers):
            if not closed_within(t, 1):
                fail("stranger %d still connected 1 s after the peer linked"
                     % i)
        if closed_within(s, 1):
            fail("QEMU dropped an authenticated peer")
        print("linked in %.3f s past %d strangers" % (took, a.strangers))
        return

    if a.scenario in ("stall", "silent"):
        s = connect(a.addr)
        if a.scenario == "stall":
            s.sendall(b"N")
        t0 = time.time()
        if not closed_within(s, a.within):
            fail("still connected %.1f s after %s" %
                 (a.within, "a 1-byte hello" if a.scenario == "stall"
                  else "connecting silently"))
        print("dropped after %.1f s" % (time.time() - t0))
        return

    if a.scenario == "raw":
        s = connect(a.addr)
        s.sendall(bytes.fromhex(a.frame))
        if not closed_within(s, a.within):
            fail("QEMU kept the connection after a bad frame")
        return

    s = connect(a.addr)
    proved = handshake(s, a)
    if a.scenario == "refused":
        if not closed_within(s, a.within):
            fail("QEMU kept a peer it should refuse")
        return
    if not proved:
        fail("QEMU's AUTH does not prove the secret")
    if a.scenario == "garbage":
        s.sendall(bytes.fromhex(a.frame))
        if not closed_within(s, a.within):
            fail("QEMU kept the connection after a bad frame")
        return
    if a.scenario == "truncated":
        s.sendall(frame(T_DATA, bytes(1000))[:HDR.size + 10])
        t0 = time.time()
        if not closed_within(s, a.within):
            fail("still connected %.1f s after a cut-short frame" % a.within)
        print("dropped after %.1f s" % (time.time() - t0))
        return
    if closed_within(s, 1):
        fail("QEMU dropped an authenticated peer")
    if a.scenario == "link":
        if a.monitor:
            m = Monitor(a.monitor)
            m.cmd("qom-set /machine/peripheral/%s link-down 0" % a.device, 10)
            t, _ = recv_frame(s)
            if t != T_LINK_DOWN:
                fail("no LINK_DOWN frame after link-down (got %r)" % t)
            m.cmd("qom-set /machine/peripheral/%s link-up 0" % a.device, 10)
        return
    if a.scenario == "no-read":
        m = Monitor(a.monitor)
        worst = 0
        for i in range(a.toggles):
            for state in ("down", "up"):
                took = m.cmd("qom-set /machine/peripheral/%s link-%s 0"
                             % (a.device, state), a.within)
                if took is None:
                    fail("link-%s %d did not return within %.1f s"
                         % (state, i, a.within))
                worst = max(worst, took)
        if m.cmd("info version", a.within) is None:
            fail("the monitor does not answer")
        print("worst link-down/up %.3f s" % worst)
        return
    fail("unknown scenario " + a.scenario)


if __name__ == "__main__":
    main()
