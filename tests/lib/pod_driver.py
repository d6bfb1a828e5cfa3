#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run tools/nnp-pod and act on what it prints, timing every line.

pod_driver.py LOG FIFO [--on REGEX ACTION]... -- NNP-POD [ARGS...]

Each line nnp-pod prints (stdout and stderr) goes to LOG as "SECONDS
LINE", SECONDS on the host's monotonic clock from the start. The first
line matching REGEX writes ACTION to nnp-pod's control FIFO (started
with --control FIFO) and logs "SECONDS CONTROL ACTION"; an ACTION that
starts with "!" is a shell command instead, started in the background
with FIFO in its environment as NNP_POD_CONTROL, its output logged as
nnp-pod's. Each rule fires once. Exits with nnp-pod's status.
"""
import os
import re
import subprocess
import sys
import threading
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
    lock = threading.Lock()
    helpers = []

    with open(log_path, "w") as log:
        def write(line):
            with lock:
                log.write(f"{time.monotonic() - t0:.3f} {line}\n")
                log.flush()

        def relay(stream):
            for raw in iter(stream.readline, b""):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                write(line)
                with lock:
                    fire = [r for r in rules if not r[2] and r[0].search(line)]
                    for rule in fire:
                        rule[2] = True
                for rule in fire:
                    act(rule[1])

        def act(action):
            write(f"CONTROL {action}")
            if action.startswith("!"):
                h = subprocess.Popen(["sh", "-c", action[1:]], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     env=dict(os.environ, NNP_POD_CONTROL=fifo))
                t = threading.Thread(target=relay, args=(h.stdout,))
                t.start()
                helpers.append((h, t))
            else:
                with open(fifo, "w") as f:
                    f.write(action + "\n")

        relay(proc.stdout)
        status = proc.wait()
        for h, t in helpers:
            h.wait()
            t.join()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
