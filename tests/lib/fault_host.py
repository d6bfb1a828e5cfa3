# SPDX-License-Identifier: MIT
# Host side of the fault tests (tests/vm/faults.sh, make stress,
# tests/vm/torch_nnp.sh): sets on the QEMU monitor every "FAULT nnpN SPEC"
# line the guest prints to OUT (the device's fault), every "LINK nnpN
# down|up PORT" (the port's link), and every "CHECK nnpN on|off" (the
# device's call-check, read back and printed: tests/bench/call_check.sh),
# until the guest prints END (exit 0) or SECS pass (exit 1).
# usage: fault_host.py MONITOR-SOCKET OUT END SECS
import os, re, socket, sys, time

mon, out, end_text, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])


def monitor(cmd):
    """Run HMP command @cmd; what the monitor printed in 0.2 s."""
    s = socket.socket(socket.AF_UNIX)
    s.connect(mon)
    s.sendall(cmd.encode() + b"\n")
    time.sleep(0.2)
    s.setblocking(False)
    said = b""
    try:
        while True:
            chunk = s.recv(4096)
            if not chunk:
                break
            said += chunk
    except BlockingIOError:
        pass
    s.close()
    return said.decode(errors="replace")


done = 0
end = time.time() + secs
while time.time() < end:
    text = open(out, errors="replace").read() if os.path.exists(out) else ""
    asks = re.findall(r"^(?:FAULT (nnp\d+) (\S+)|LINK (nnp\d+) (down|up) (\d+)"
                      r"|CHECK (nnp\d+) (on|off))$", text, re.M)
    for dev, spec, link_dev, state, port, check_dev, check in asks[done:]:
        if dev:
            monitor("qom-set /machine/peripheral/%s fault %s" % (dev, spec))
            print("set", dev, spec)
        elif check_dev:
            path = "/machine/peripheral/%s call-check" % check_dev
            monitor("qom-set %s %s" % (path, check))
            now = re.findall(r"^(true|false)\s*$", monitor("qom-get " + path), re.M)
            print("call-check", check_dev, check, "reads", now[-1] if now else "nothing")
            sys.stdout.flush()
        else:
            monitor("qom-set /machine/peripheral/%s link-%s %s" % (link_dev, state, port))
            print("link", link_dev, state, port)
    done = len(asks)
    if end_text in text:
        sys.exit(0)
    time.sleep(0.05)
sys.exit("the guest never finished")
