#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every relative link in README.md and docs/*.md resolves: the file it
names exists, and a #fragment names a heading of that Markdown file (by
GitHub's rule: lower case, punctuation but '-' and '_' dropped, spaces to
'-'). Links to the web are not followed. Prints TAP; exits 1 on a
failure."""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2]
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, str(root / "tests/lib"))
import tap  # noqa: E402
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slugs(md):
    out = set()
    in_code = False
    for line in md.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        m = re.match(r"^#+ (.*)$", line)
        if m and not in_code:
            s = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
            out.add(s.replace(" ", "-"))
    return out


tests = []
pages = [root / "README.md"] + sorted((root / "docs").glob("*.md"))
for page in pages:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, frag = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        ok = dest.is_file()
        if ok and frag:
            ok = dest.suffix == ".md" and frag in slugs(dest)
        tests.append((ok, "%s: %s" % (page.relative_to(root), target)))
tests.append((len(tests) >= 40, "found the links (%d)" % len(tests)))

tap.report(tests)
