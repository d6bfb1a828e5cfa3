#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch's own distributed tests on one backend, as upstream runs them.

torch_dist_suite.py BACKEND [--world N] [--list] [TEST...]

Runs the tests of torch.testing._internal.distributed.distributed_test
(the suite upstream runs for gloo, NCCL and MPI; python3-torch ships it)
with BACKEND ("gloo" or "nnp") on WORLD ranks (default 4), each test in
its own WORLD processes that join by a file store, as upstream's
test_distributed_spawn.py does, except that the ranks are forked from
this process, which has imported torch already: importing it takes a
minute or more in a TCG guest, and the suite makes 4 processes a test.
TEST names tests (test_foo, or a prefix ending in '*'); without any, every
test of the suite. --list prints the names and runs nothing.

The suite picks its tests by the backend's name when it is imported:
gloo's are picked (it is imported with BACKEND=gloo), and then every rank
joins with BACKEND, the only thing changed, so nnp runs every test that
gloo runs, those the suite reserves to gloo by name included. Inside a
test, a branch on the backend's name takes gloo's path for nnp too.

Prints "DISTTEST torch VERSION" first, then
"DISTTEST NAME: pass|FAIL|skip|error[: WHY] (S s)" per test and
a last line "DISTTEST total: P passed, F failed, S skipped in T s". Exits
0 whatever the tests did: comparing backends is torch_dist_compare.py's.
"""
import argparse
import fnmatch
import os
import re
import sys
import time
import unittest
import warnings

parser = argparse.ArgumentParser()
parser.add_argument("backend", choices=["gloo", "nnp"])
parser.add_argument("--world", type=int, default=4)
parser.add_argument("--list", action="store_true")
parser.add_argument("tests", nargs="*")
args = parser.parse_args()

# distributed_test reads both when it is imported, and picks its tests by
# BACKEND then: gloo's, whichever backend then runs them.
os.environ["BACKEND"] = "gloo"
os.environ["WORLD_SIZE"] = str(args.world)

T0 = time.time()
import torch  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

if args.backend == "nnp":
    import torch_nnp  # noqa: E402,F401  registers "nnp" (torch 1.13 has no autoloading)
try:
    import expecttest  # noqa: F401  torch's test helpers need it
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib",
                                    "expecttest_shim"))
from torch.testing._internal.distributed import distributed_test as suite  # noqa: E402



class NnpTakesGloosPaths(str):
    """The name "nnp", which a test's branch on the backend's name finds
    equal to "gloo" as well: the suite's branches for gloo are its CPU
    paths, which nnp serves, and it has none for a name it does not know
    (a DDP test would use a model it never made)."""

    def __eq__(self, other):
        return str.__eq__(self, other) or other == "gloo"

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


suite.BACKEND = NnpTakesGloosPaths("nnp") if args.backend == "nnp" else args.backend
print(f"DISTTEST torch {torch.__version__}", flush=True)

print(f"DISTTEST import torch: {time.time() - T0:.0f} s", flush=True)
torch.set_num_threads(1)
warnings.filterwarnings("ignore")


class TestSuiteOnBackend(suite.TestDistBackend, suite.DistributedTest._DistTestBase):
    """Each test in WORLD processes forked from this one."""

    def setUp(self):
        super().setUp()
        self._start_processes(mp.get_context("fork").Process)


def selected(names, patterns):
    if not patterns:
        return names
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


EXCEPTION = re.compile(r"^(\w+\.)*\w*(Error|Exception|Failure): ")


class Recorder(unittest.TestResult):
    """One line per test, as it ends, and the results by name."""

    def __init__(self):
        super().__init__()
        self.results = {}
        self.started = 0.0

    def startTest(self, test):
        super().startTest(test)
        self.started = time.time()

    def _record(self, test, result, why=""):
        name = test.id().rsplit(".", 1)[-1]
        took = time.time() - self.started
        why = " ".join(str(why).split())[:300]
        self.results[name] = result
        print(f"DISTTEST {name}: {result}{': ' + why if why else ''} ({took:.1f} s)", flush=True)

    @staticmethod
    def _last_line(err):
        """The last exception named in @err's text (a rank's traceback, as
        the parent got it, ends in C++ frames for an error from C++)."""
        lines = [ln.strip() for ln in str(err[1]).splitlines() if ln.strip()]
        named = [ln for ln in lines if EXCEPTION.match(ln)]
        return (named or lines or [err[0].__name__])[-1]

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "FAIL", self._last_line(err))

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "error", self._last_line(err))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "skip", "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "pass")


names = selected(unittest.TestLoader().getTestCaseNames(TestSuiteOnBackend), args.tests)
if args.list:
    print("\n".join(names))
    sys.exit(0)
if not names:
    sys.exit(f"torch_dist_suite: no test of torch's suite matches {' '.join(args.tests)}")

recorder = Recorder()
unittest.TestSuite(TestSuiteOnBackend(n) for n in names).run(recorder)
counts = {k: sum(1 for r in recorder.results.values() if r == k)
          for k in ("pass", "FAIL", "error", "skip")}
print(f"DISTTEST total: {counts['pass']} passed, {counts['FAIL'] + counts['error']} failed, "
      f"{counts['skip']} skipped in {time.time() - T0:.0f} s", flush=True)
