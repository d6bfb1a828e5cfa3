# SPDX-License-Identifier: MIT
"""make scaling's table and chart (tests/bench/scaling.sh): from the
replays in OUT/replay-TOPO-SCALE.json, projected samples per second
against chips, a line per topology and compute scale, with the ideal
(N times one chip's rate); OUT/scaling.dat and, with gnuplot,
OUT/scaling.png.

usage: scaling_plot.py OUT GLOBAL_BATCH RANKS SCALE
"""
import json
import os
import shutil
import subprocess
import sys

TOPOS = ["ring", "torus", "pod"]


def load(out, topo, scale):
    with open(os.path.join(out, "replay-%s-%s.json" % (topo, scale))) as fh:
        return json.load(fh)["runs"]


def main():
    out, batch, ranks, scale = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    per_chip = batch // ranks
    rows = []
    for s in ("1", scale):
        for topo in TOPOS:
            for run in load(out, topo, s):
                rate = run["chips"] * per_chip / (run["step_ns"] / 1e9)
                rows.append((topo, s, run["chips"], run["step_ns"] / 1e3, rate,
                             run["efficiency"]))
    print("# projected training throughput, dist_mnist_mlp, %d samples per chip a step"
          % per_chip)
    print("%-6s %8s %6s %12s %14s %10s" % ("topo", "compute", "chips", "step (us)",
                                          "samples/s", "efficiency"))
    for topo, s, n, step, rate, eff in rows:
        print("%-6s %8s %6d %12.1f %14.1f %10s" % (
            topo, "x" + s, n, step, rate, "-" if eff is None else "%.4f" % eff))
    dat = os.path.join(out, "scaling.dat")
    with open(dat, "w") as fh:
        for s in ("1", scale):
            for topo in TOPOS:
                fh.write("# %s compute x%s: chips samples/s ideal\n" % (topo, s))
                for t, rs, n, _, rate, eff in rows:
                    if t == topo and rs == s:
                        fh.write("%d %.3f %.3f\n" % (n, rate, rate / eff if eff else 0))
                fh.write("\n\n")
    if not shutil.which("gnuplot"):
        print("# no gnuplot: %s has the numbers" % dat)
        return 0
    plots, block = [], 0
    for s, dash in (("1", 1), (scale, 2)):
        for topo, colour in zip(TOPOS, ("#1f77b4", "#d62728", "#2ca02c")):
            plots.append("'%s' index %d u 1:2 w lp lw 2 dt %d lc rgb '%s' t '%s, compute x%s'"
                         % (dat, block, dash, colour, topo, s))
            if topo == "ring":
                plots.append("'%s' index %d u 1:3 w l lw 1 dt %d lc rgb 'black' "
                             "t 'ideal, compute x%s'" % (dat, block, dash, s))
            block += 1
    script = [
        "set terminal pngcairo size 900,600",
        "set output '%s'" % os.path.join(out, "scaling.png"),
        'set title "Fashion-MNIST MLP, data parallel: recorded on 4 simulated chips,\\n'
        'projected by nnp-sim --replay at NNP-T rates"',
        "set xlabel 'chips'", "set ylabel 'samples per second'",
        "set logscale x 2", "set logscale y 10", "set format y '%.0s%c'",
        "set key top left", "set grid",
        "plot " + ", ".join(plots),
    ]
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)
    print("# chart: %s" % os.path.join(out, "scaling.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
