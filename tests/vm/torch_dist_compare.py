#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""torch's distributed suite on nnp against the same suite on gloo.

torch_dist_compare.py GLOO.log NNP.log TORCH_MD

GLOO.log and NNP.log hold torch_dist_suite.py's output (other lines, a
guest's console for one, are passed over). Every test
that passed on gloo must pass on nnp, unless docs/torch.md (TORCH_MD)
lists it, with its reason, in the table under the heading "What nnp does
not pass of torch's suite"; a listed test that passes on nnp, or that ran
on gloo and did not pass, is a stale entry. Prints one line per difference and a
summary; exits 1 if any is unexplained or stale, 2 on bad input.
"""
import re
import sys

HEADING = "What nnp does not pass of torch's suite"
ROW = re.compile(r"^\| `(test_\w+)` \| (.+) \|\s*$")
RESULT = re.compile(r"DISTTEST (test_\w+): (pass|FAIL|skip|error)(?:: (.*))? \([\d.]+ s\)\s*$")


def results(path):
    """{test: {"result": ..., "why": ...}} from a torch_dist_suite.py log."""
    got = {}
    with open(path, errors="replace") as fh:
        for line in fh:
            m = RESULT.search(line)
            if m:
                got[m.group(1)] = {"result": m.group(2), "why": m.group(3) or ""}
    return got


def documented(path):
    """{test: reason} from the table under HEADING in @path."""
    listed, inside = {}, False
    with open(path) as fh:
        for line in fh:
            if line.startswith("#"):
                inside = line.lstrip("#").strip() == HEADING
                continue
            m = ROW.match(line) if inside else None
            if m:
                listed[m.group(1)] = m.group(2).strip()
    return listed


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    gloo, nnp = results(argv[1]), results(argv[2])
    if not gloo or not nnp:
        print(f"torch_dist_compare: no results in {argv[1] if not gloo else argv[2]}",
              file=sys.stderr)
        return 2
    listed = documented(argv[3])
    if not listed:
        print(f"torch_dist_compare: no table under '{HEADING}' in {argv[3]}", file=sys.stderr)
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
    print(f"DISTCOMPARE {same} of the {len(passed)} tests that pass on gloo pass on nnp; "
          f"{len(listed)} documented, {bad} unexplained or stale")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
