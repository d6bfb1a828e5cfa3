# SPDX-License-Identifier: MIT
"""make scaling's tables and chart (tests/bench/scaling.sh): from the
replays in OUT/replay-JOB-TOPO-SCALE.json, projected samples per second
against chips, a panel per job and a line per topology and compute
scale, with the ideal (N times one chip's rate); OUT/scaling.dat and,
with gnuplot, OUT/scaling.png.

usage: scaling_plot.py OUT SCALE JOB:SAMPLES_PER_CHIP:TITLE...
"""
import json
import os
import shutil
import subprocess
import sys

TOPOS = ["ring", "torus", "pod"]


def load(out, job, topo, scale):
    with open(os.path.join(out, "replay-%s-%s-%s.json" % (job, topo, scale))) as fh:
        return json.load(fh)["runs"]


def table(out, job, per_chip, title, scale):
    """Rows (topo, scale, chips, step us, samples/s, efficiency), printed."""
    rows = []
    for s in ("1", scale):
        for topo in TOPOS:
            for run in load(out, job, topo, s):
                rate = run["chips"] * per_chip / (run["step_ns"] / 1e9)
                rows.append((topo, s, run["chips"], run["step_ns"] / 1e3, rate,
                             run["efficiency"]))
    print("# %s: projected training throughput, %d samples per chip a step"
          % (title, per_chip))
    print("%-6s %8s %6s %12s %14s %10s" % ("topo", "compute", "chips", "step (us)",
                                          "samples/s", "efficiency"))
    for topo, s, n, step, rate, eff in rows:
        print("%-6s %8s %6d %12.1f %14.1f %10s" % (
            topo, "x" + s, n, step, rate, "-" if eff is None else "%.4f" % eff))
    return rows


def main():
    out, scale = sys.argv[1], sys.argv[2]
    jobs = [a.split(":", 2) for a in sys.argv[3:]]
    dat = os.path.join(out, "scaling.dat")
    panels = []
    with open(dat, "w") as fh:
        block = 0
        for job, per_chip, title in jobs:
            rows = table(out, job, int(per_chip), title, scale)
            plots = []
            for s, dash in (("1", 1), (scale, 2)):
                for topo, colour in zip(TOPOS, ("#1f77b4", "#d62728", "#2ca02c")):
                    fh.write("# %s, %s compute x%s: chips samples/s ideal\n" % (job, topo, s))
                    for t, rs, n, _, rate, eff in rows:
                        if t == topo and rs == s:
                            fh.write("%d %.3f %.3f\n" % (n, rate, rate / eff if eff else 0))
                    fh.write("\n\n")
                    plots.append("'%s' index %d u 1:2 w lp lw 2 dt %d lc rgb '%s' "
                                 "t '%s, compute x%s'" % (dat, block, dash, colour, topo, s))
                    if topo == "ring":
                        plots.append("'%s' index %d u 1:3 w l lw 1 dt %d lc rgb 'black' "
                                     "t 'ideal, compute x%s'" % (dat, block, dash, s))
                    block += 1
            panels.append("set title '%s'\nplot %s" % (title, ", ".join(plots)))
    if not shutil.which("gnuplot"):
        print("# no gnuplot: %s has the numbers" % dat)
        return 0
    script = [
        "set terminal pngcairo size %d,600" % (700 * len(jobs)),
        "set output '%s'" % os.path.join(out, "scaling.png"),
        'set multiplot layout 1,%d title "Data-parallel training recorded on 4 '
        'simulated chips, projected by nnp-sim --replay at NNP-T rates"' % len(jobs),
        "set xlabel 'chips'", "set ylabel 'samples per second'",
        "set logscale x 2", "set logscale y 10", "set format y '%.0s%c'",
        "set key top left font ',9'", "set grid",
    ] + panels + ["unset multiplot"]
    subprocess.run(["gnuplot"], input="\n".join(script), text=True, check=True)
    print("# chart: %s" % os.path.join(out, "scaling.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
