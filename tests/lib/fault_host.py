# SPDX-License-Identifier: MIT
# Host side of the fault tests (tests/vm/faults.sh, make stress): sets on
# the QEMU monitor every "FAULT nnpN SPEC" line the guest prints to OUT,
# until the guest prints END (exit 0) or SECS pass (exit 1).
# usage: fault_host.py MONITOR-SOCKET OUT END SECS
import os, re, socket, sys, time

mon, out, end_text, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])


def monitor(cmd):
    s = socket.socket(socket.AF_UNIX)
    s.connect(mon)
    s.sendall(cmd.encode() + b"\n")
    time.sleep(0.2)
    s.close()


done = 0
end = time.time() + secs
while time.time() < end:
    text = open(out, errors="replace").read() if os.path.exists(out) else ""
    asks = re.findall(r"^FAULT (nnp\d+) (\S+)$", text, re.M)
    for dev, spec in asks[done:]:
        monitor("qom-set /machine/peripheral/%s fault %s" % (dev, spec))
        print("set", dev, spec)
    done = len(asks)
    if end_text in text:
        sys.exit(0)
    time.sleep(0.05)
sys.exit("the guest never finished")
