#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two QEMU builds on the same guest command, alternating, in one run: the
# allreduce time of each at 8 B, 64 KiB, 256 KiB, 1, 4 and 16 MiB on rings
# of 2, 4 and 8 chips (NNP_BENCH_CHIPS), best of ROUNDS VMs each (A then B,
# then B then A, ...), and the ratio A/B (above 1: B is faster). Every
# result is checked by nnptool; a wrong one fails the run. NNP_AB_CMD
# runs other nnptool bench commands in the guest instead.
# Usage: ab_qemu.sh QEMU_A QEMU_B [ROUNDS]  (raw outputs in build/bench/ab/)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
a=$(realpath "$1") b=$(realpath "$2") rounds=${3:-2}
out=$root/build/bench/ab
chips=${NNP_BENCH_CHIPS:-2 4 8}
rm -rf "$out"
mkdir -p "$out"
cmd=${NNP_AB_CMD:-'nnptool bench allreduce --min 8 --max 8 --iters 300 --trials 3 &&
nnptool bench allreduce --min 64K --max 16M --step 4 --iters 10 --bytes 64M --trials 3'}
for n in $chips; do
	for ((r = 1; r <= rounds; r++)); do
		order="A B"
		[ $((r % 2)) = 1 ] || order="B A"
		for q in $order; do
			bin=$a
			[ "$q" = A ] || bin=$b
			echo "ab: $(date +%T) $n chips, round $r, $q" >&2
			NNP_QEMU=$bin "$root/tools/nnp-vm" --chips "$n" --fabric ring \
				--mem-size 128M --guest-mem $((1024 + 48 * n)) \
				-- sh -c "$cmd" >"$out/$q-$n-$r.txt" 2>&1 ||
				{ cat "$out/$q-$n-$r.txt" >&2; echo "ab: the VM failed" >&2; exit 1; }
		done
	done
done
python3 - "$out" "$a" "$b" <<'PY'
import glob, os, sys
out, a, b = sys.argv[1:4]
best = {}
for path in glob.glob(os.path.join(out, "*-*-*.txt")):
    q, n, _ = os.path.basename(path)[:-4].split("-")
    for line in open(path, errors="replace"):
        f = line.split()
        # size count type redop [root], then out-of-place and in-place
        # halves alike: time algbw busbw #wrong [model mbusbw]
        if len(f) not in (12, 16, 17) or not f[0].isdigit():
            continue
        lead = 5 if len(f) == 17 else 4
        h = (len(f) - lead) // 2
        # N/A: not checked (nnptool bench -c 0)
        if {f[lead + 3], f[lead + 3 + h]} - {"0", "N/A"}:
            sys.exit("ab: wrong results in " + path)
        for place, t in (("out", float(f[lead])), ("in", float(f[lead + h]))):
            k = (q, int(n), int(f[0]), place)
            best[k] = min(best.get(k, t), t)
print("A = %s\nB = %s\ntimes in us, best of all rounds; A/B > 1: B is faster" % (a, b))
print("%5s %10s %6s %12s %12s %8s" % ("chips", "bytes", "place", "A", "B", "A/B"))
for (q, n, size, place) in sorted(k for k in best if k[0] == "A"):
    ta, tb = best[("A", n, size, place)], best.get(("B", n, size, place))
    if tb:
        print("%5d %10d %6s %12.1f %12.1f %8.2f" % (n, size, place, ta, tb, ta / tb))
PY
