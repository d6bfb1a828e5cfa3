#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch's distributed suite on nnp against the same suite on gloo.

torch_dist_compare.py GLOO.log NNP.log TORCH_MD

GLOO.log and NNP.log hold torch_dist_suite.py's output (other lines, a
guest's console for one, are passed over). Every test
that passed on gloo must pass on nnp, unless docs/torch.md (TORCH_MD)
lists it for the torch version both logs name ("DISTTEST torch X.Y.Z"),
with its reason, in the table under the heading "What nnp does not pass
of torch's suite" (columns: test, the torch versions, X.Y, it holds for,
why); a listed test that passes on nnp, or that ran on gloo and did not
pass, is a stale entry. Rows for other versions are passed over. Prints one line per difference and a
summary; exits 1 if any is unexplained or stale, 2 on bad input.
"""
import re
import sys

HEADING = "What nnp does not pass of torch's suite"
ROW = re.compile(r"^\| `(test_\w+)` \| ([\d.]+(?:, [\d.]+)*) \| (.+) \|\s*$")
VERSION = re.compile(r"DISTTEST torch (\d+\.\d+)\.")
RESULT = re.compile(r"DISTTEST (test_\w+): (pass|FAIL|skip|error)(?:: (.*))? \([\d.]+ s\)\s*$")


def results(path):
    """The torch version (X.Y) a torch_dist_suite.py log names, and
    {test: {"result": ..., "why": ...}} from it."""
    got, version = {}, None
    with open(path, errors="replace") as fh:
        for line in fh:
            m = RESULT.search(line)
            if m:
                got[m.group(1)] = {"result": m.group(2), "why": m.group(3) or ""}
            m = VERSION.search(line)
            if m:
                version = m.group(1)
    return version, got


def documented(path, version):
    """{test: reason} of torch @version from the table under HEADING in @path."""
    listed, inside = {}, False
    with open(path) as fh:
        for line in fh:
            if line.startswith("#"):
                inside = line.lstrip("#").strip() == HEADING
                continue
            m = ROW.match(line) if inside else None
            if m and version in m.group(2).split(", "):
                listed[m.group(1)] = m.group(3).strip()
    return listed


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    (version, gloo), (nnp_version, nnp) = results(argv[1]), results(argv[2])
    if not gloo or not nnp:
        print(f"torch_dist_compare: no results in {argv[1] if not gloo else argv[2]}",
              file=sys.stderr)
        return 2
    if not version or version != nnp_version:
        print(f"torch_dist_compare: the logs name torch {version} and {nnp_version}",
              file=sys.stderr)
        return 2
    listed = documented(argv[3], version)
    if not listed:
        print(f"torch_dist_compare: no row for torch {version} under '{HEADING}' in {argv[3]}",
              file=sys.stderr)
        return 2
    bad = 0
    passed = [t for t, r in sorted(gloo.items()) if r["result"] == "pass"]
    for test in passed:
        got = nnp.get(test, {"result": "not run", "why": ""})
        if got["result"] == "pass":
            if test in listed:
                print(f"STALE {test}: passes on nnp, but docs/torch.md lists it")
                bad += 1
        elif test in listed:
            print(f"KNOWN {test}: {got['result']} on nnp: {listed[test]}")
        else:
            print(f"NEW {test}: passes on gloo, {got['result']} on nnp: {got['why']}")
            bad += 1
    for test in sorted(set(listed) & set(gloo) - set(passed)):
        print(f"STALE {test}: listed in docs/torch.md, but did not pass on gloo")
        bad += 1
    same = sum(1 for t in passed if nnp.get(t, {}).get("result") == "pass")
    print(f"DISTCOMPARE torch {version}: {same} of the {len(passed)} tests that pass on "
          f"gloo pass on nnp; {len(listed)} documented, {bad} unexplained or stale")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
