# SPDX-License-Identifier: MIT
# Both ends of ICL links agree on what crossed them, read off the
# `nnptool links` tables that VMs printed into their output files.
# usage: links_agree.py FILE... C.P>D.Q...
# For each C.P>D.Q: chip C port P sent as many bytes as chip D port Q
# received, more than 0, and neither port counted an error. The rows may
# be in any state: the other VM may be gone by the time one looks.
# Exit 1, naming the first pair that disagrees, else 0.
import re, sys

ROW = re.compile(r"\d+ +(\d+) +(\d+) +\S+ +\S+ +(\d+) +(\d+) +(\d+) +\S+$")
PAIR = re.compile(r"(\d+)\.(\d+)>(\d+)\.(\d+)$")

ports = {}
pairs = []
for arg in sys.argv[1:]:
    m = PAIR.match(arg)
    if m:
        c, p, d, q = map(int, m.groups())
        pairs.append(((c, p), (d, q)))
        continue
    for line in open(arg):
        # DEV CHIP PORT STATE PEER TX RX ERRORS TX-BUSY-NS
        r = ROW.match(line.strip())
        if r:
            ports[int(r[1]), int(r[2])] = tuple(map(int, r.groups()[2:]))

status = 0
for src, dst in pairs:
    if src not in ports or dst not in ports:
        print("# no row for chip %d port %d or chip %d port %d" % (src + dst))
        status = 1
        continue
    (tx, _, tx_err), (_, rx, rx_err) = ports[src], ports[dst]
    print("# chip %d port %d sent %d, chip %d port %d received %d, errors %d %d"
          % (src + (tx,) + dst + (rx, tx_err, rx_err)))
    if not (tx > 0 and tx == rx and tx_err == 0 and rx_err == 0):
        status = 1
sys.exit(status)
