# SPDX-License-Identifier: MIT
"""TAP for the Python host checks: tap.report(tests) prints a plan and a
line per (ok, name) pair, and exits 1 if any failed."""
import sys


def report(tests):
    print("TAP version 13")
    print("1..%d" % len(tests))
    fails = 0
    for i, (ok, name) in enumerate(tests, 1):
        print("%s %d %s" % ("ok" if ok else "not ok", i, name))
        fails += not ok
    sys.exit(1 if fails else 0)
