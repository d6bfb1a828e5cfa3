#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where an 8-byte allreduce on a ring of N chips spends its time, from
# QEMU's own trace points (the log backend, microsecond timestamps): the
# guest's user doorbells (nnp_doorbell), the workers' command fetches
# (nnp_dma_read of 64 bytes) and completion writes (nnp_dma_write of 16),
# and the interrupts (nnp_irq of vector 1: since hardware 1.9 only for a
# sleeper). Per allreduce, from chip 0's doorbell to chip 0's next:
#   submit  first to last doorbell (the guest's MMIO writes, one per chip)
#   pickup  first doorbell to the first fetch (a worker wakes)
#   device  first fetch to the last completion written (ring steps)
#   guest   last completion to the next first doorbell (the guest sees the
#           completions and issues the next allreduce)
# and how many interrupts an allreduce took on average.
# Medians and percentiles over the timed allreduces (the first tenth, the
# set-up and warm-up, is left out). Tracing costs some microseconds per
# event, so read the shares, and compare builds in one sitting.
# Usage: latency_breakdown.sh N [ITERS]   (NNP_QEMU picks another QEMU)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=$1 iters=${2:-3000}

args=()
for ev in nnp_doorbell nnp_dma_read nnp_dma_write nnp_irq; do
	args+=(--qemu-arg -trace --qemu-arg "$ev")
done
"$root/tools/nnp-vm" --chips "$n" --fabric ring --mem-size 16M "${args[@]}" \
	--qemu-arg -D --qemu-arg "$tmp/trace.log" \
	--qemu-arg -msg --qemu-arg timestamp=on -- \
	nnptool bench allreduce --min 8 --max 8 --iters "$iters" --trials 1 \
	>"$tmp/vm.out" 2>&1 ||
	{ cat "$tmp/vm.out" >&2; echo "latency_breakdown: the VM failed" >&2; exit 1; }
awk '$1 == "8" { print "nnptool bench (traced): out of place " $5 " us, in place " $11 " us" }' \
	"$tmp/vm.out"
python3 - "$tmp/trace.log" "$n" <<'PY'
import re, statistics, sys
log, n = sys.argv[1], int(sys.argv[2])
pat = re.compile(r'^\d+@(\d+)\.(\d+):(nnp_\w+) chip (\d+) (.*)')
rounds, cur = [], None
for line in open(log, errors="replace"):
    m = pat.match(line)
    if not m:
        continue
    t = int(m[1]) * 1e6 + int(m[2])
    name, chip, rest = m[3], int(m[4]), m[5]
    if name == "nnp_doorbell" and "addr 0x10000 " in rest:
        if chip == 0:
            if cur:
                cur["next"] = t
                rounds.append(cur)
            cur = {"db0": t, "dbn": t, "fetch": None, "cqe": [], "irq": 0}
        elif cur:
            cur["dbn"] = t
    elif cur and name == "nnp_dma_read" and "len 64 " in rest and cur["fetch"] is None:
        cur["fetch"] = t
    elif cur and name == "nnp_dma_write" and " len 16 " in rest:
        cur["cqe"].append(t)
    elif cur and name == "nnp_irq" and "vector 1 " in rest:
        cur["irq"] += 1
ok = [r for r in rounds if r["fetch"] and len(r["cqe"]) == n]
ok = ok[len(ok) // 10:]
if not ok:
    sys.exit("latency_breakdown: no allreduce in the trace")
parts = (("period", lambda r: r["next"] - r["db0"]),
         ("submit", lambda r: r["dbn"] - r["db0"]),
         ("pickup", lambda r: r["fetch"] - r["db0"]),
         ("device", lambda r: r["cqe"][-1] - r["fetch"]),
         ("guest", lambda r: r["next"] - r["cqe"][-1]))
print("latency_breakdown chips=%d allreduces=%d (us: median, p10 p75 p90 p99)" % (n, len(ok)))
for name, f in parts:
    xs = sorted(f(r) for r in ok)
    pct = " ".join("%.0f" % xs[int(len(xs) * p)] for p in (0.1, 0.75, 0.9, 0.99))
    print("%-7s %6.0f   %s" % (name, statistics.median(xs), pct))
print("interrupts per allreduce: %.2f" % (sum(r["irq"] for r in ok) / len(ok)))
PY
