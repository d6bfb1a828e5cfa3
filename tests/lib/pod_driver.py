#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run tools/nnp-pod and act on what it prints, timing every line.

pod_driver.py LOG FIFO [--on REGEX ACTION]... -- NNP-POD [ARGS...]

Each line nnp-pod prints (stdout and stderr) goes to LOG as "SECONDS
LINE", SECONDS on the host's monotonic clock from the start. The first
line matching REGEX writes ACTION to nnp-pod's control FIFO (started
with --control FIFO) and logs "SECONDS CONTROL ACTION"; each rule fires
once. Exits with nnp-pod's status.
"""
import re
import subprocess
import sys
import time


def main(argv):
    log_path, fifo = argv[0], argv[1]
    rules, i = [], 2
    while argv[i] == "--on":
        rules.append([re.compile(argv[i + 1]), argv[i + 2], False])
        i += 3
    assert argv[i] == "--", "usage: pod_driver.py LOG FIFO [--on REGEX ACTION]... -- CMD"
    t0 = time.monotonic()
    proc = subprocess.Popen(argv[i + 1:], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    with open(log_path, "w") as log:
        for raw in iter(proc.stdout.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\r\n")
            now = time.monotonic() - t0
            log.write(f"{now:.3f} {line}\n")
            for rule in rules:
                if not rule[2] and rule[0].search(line):
                    rule[2] = True
                    with open(fifo, "w") as f:
                        f.write(rule[1] + "\n")
                    log.write(f"{time.monotonic() - t0:.3f} CONTROL {rule[1]}\n")
            log.flush()
    return proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
