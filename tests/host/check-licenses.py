#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every tracked source file names its licence in an SPDX-License-Identifier
line within its first three lines, the licence its part must have (LICENSE:
qemu-device/ GPL-2.0-or-later as QEMU is, driver/ and Kbuild GPL-2.0-only as
the module's MODULE_LICENSE("GPL") says, uapi/ the Linux uapi dual licence,
the rest MIT), and debian/copyright's Files stanza for it says the same.
What is not source (documents, the fuzz corpus, Debian's control files,
licence texts) needs no line. Prints TAP; exits 1 on a failure."""
import fnmatch
import re
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2]
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, str(root / "tests/lib"))
import tap  # noqa: E402
UAPI = "(GPL-2.0 WITH Linux-syscall-note) OR MIT"
# The first pattern a path matches gives its licence.
PARTS = [("qemu-device/*", "GPL-2.0-or-later"), ("driver/*", "GPL-2.0-only"),
         ("Kbuild", "GPL-2.0-only"), ("uapi/*", UAPI), ("*", "MIT")]
NOT_SOURCE = ["*.md", "*.png", "tests/fuzz/corpus/*", "docs/ABI/*", ".gitignore",
              "LICENSE", "LICENSES/*", "debian/changelog", "debian/control",
              "debian/copyright", "debian/source/*", "debian/*.install",
              "debian/*.symbols", "libnnp/abi/*"]
# debian/copyright's licence names, in SPDX's words.
DEP5 = {"MIT": "MIT", "GPL-2.0-only": "GPL-2.0-only",
        "GPL-2.0-or-later": "GPL-2.0-or-later",
        "GPL-2.0-only with Linux-syscall-note exception or MIT": UAPI}


def matches(path, patterns):
    return any(fnmatch.fnmatchcase(path, p) for p in patterns)


def unparen(expr):
    """EXPR without parentheses around all of it: ((A WITH B) OR C) is
    (A WITH B) OR C."""
    while expr.startswith("(") and expr.endswith(")"):
        depth = 0
        for i, c in enumerate(expr):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth == 0 and i < len(expr) - 1:
                return expr
        expr = expr[1:-1]
    return expr


def spdx(path):
    with open(root / path, errors="replace") as f:
        head = [f.readline() for _ in range(3)]
    for line in head:
        m = re.search(r"SPDX-License-Identifier: (.*?)\s*(\*/)?\s*$", line)
        if m:
            return unparen(m.group(1))
    return None


def copyright_stanzas():
    """(patterns, licence) of each Files stanza, in order: the last one a
    path matches is its licence (the machine-readable format's rule)."""
    text = (root / "debian/copyright").read_text()
    out = []
    for para in text.split("\n\n"):
        files = re.search(r"^Files: (.*)$", para, re.M)
        lic = re.search(r"^License: (.*)$", para, re.M)
        if files and lic:
            out.append((files.group(1).split(), lic.group(1)))
    return out


files = subprocess.run(["git", "-C", str(root), "ls-files"], check=True,
                       capture_output=True, text=True).stdout.split()
sources = [f for f in files if not matches(f, NOT_SOURCE) and (root / f).is_file()]
stanzas = copyright_stanzas()
tests = []
for f in sources:
    want = next(lic for pat, lic in PARTS if fnmatch.fnmatchcase(f, pat))
    got = spdx(f)
    deb = [DEP5.get(lic, "unknown licence name " + lic)
           for pats, lic in stanzas if matches(f, pats)]
    deb = deb[-1] if deb else "no Files stanza"
    ok = got == want and deb == want
    name = "%s: %s" % (f, want)
    if not ok:
        name += " (SPDX line: %s; debian/copyright: %s)" % (got, deb)
    tests.append((ok, name))

drv = (root / "driver/nnp_drv.c").read_text()
tests.append((re.search(r'^MODULE_LICENSE\("GPL"\);$', drv, re.M) is not None,
              'driver/nnp_drv.c: MODULE_LICENSE("GPL"), v2 to the kernel, as GPL-2.0-only'))
tests.append((len(sources) >= 250, "found the tracked sources (%d)" % len(sources)))
for text in ("LICENSE", "LICENSES/GPL-2.0.txt", "LICENSES/Linux-syscall-note.txt"):
    tests.append(((root / text).is_file(), "licence text: " + text))

tap.report(tests)
