# SPDX-License-Identifier: MIT
"""TAP for the Python host checks: tap.report(tests) prints a plan and a
line per (ok, name) pair, and exits 1 if any failed. A check that reads a
guest's output: tap.sections(text) splits it at its "=== NAME" lines,
tap.check(name, fn) records whether fn() held (an exception is a failure,
printed as a comment), tap.done() reports what was recorded."""
import re
import sys

checks = []


def report(tests):
    print("TAP version 13")
    print("1..%d" % len(tests))
    fails = 0
    for i, (ok, name) in enumerate(tests, 1):
        print("%s %d %s" % ("ok" if ok else "not ok", i, name))
        fails += not ok
    sys.exit(1 if fails else 0)


def sections(text):
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^=== (\S+)\n(.*?)(?=^=== |\Z)", text, re.S | re.M)}


def check(name, fn):
    try:
        ok = bool(fn())
    except Exception as e:
        print("# %s: %r" % (name, e))
        ok = False
    checks.append((ok, name))


def done():
    report(checks)
