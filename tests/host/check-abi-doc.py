#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every sysfs attribute nnp.ko makes is in docs/ABI/testing/sysfs-driver-nnp,
in the kernel's Documentation/ABI format: What, Date, KernelVersion, Contact,
Description, in that order. Prints TAP; exits 1 on a failure."""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2]
doc = (root / "docs/ABI/testing/sysfs-driver-nnp").read_text()
sysfs = (root / "driver/nnp_sysfs.c").read_text()
ports = (root / "driver/nnp_sysfs_ports.c").read_text()
hwmon = (root / "driver/nnp_hwmon.c").read_text()

attrs = re.findall(r"DEVICE_ATTR_(?:RO|WO|RW)\((\w+)\)", sysfs)
names = re.search(r"nnp_port_field_names\[[^]]*\] = \{([^}]*)\}", ports, re.S)
attrs += ["portP/" + n for n in re.findall(r'"(\w+)"', names.group(1))]
if "HWMON_T_INPUT" in hwmon:
    attrs.append("hwmon:temp1_input")
if "HWMON_P_INPUT" in hwmon:
    attrs.append("hwmon:power1_input")

entries = re.split(r"\n\n(?=What:)", doc.strip())
whats = {}
fails = 0
tests = []
for e in entries:
    keys = [line.split(":", 1)[0] for line in e.splitlines()
            if re.match(r"^[A-Za-z]+:", line)]
    dedup = [k for i, k in enumerate(keys) if k != "What" or i == 0]
    ok = dedup == ["What", "Date", "KernelVersion", "Contact", "Description"]
    first = e.splitlines()[0]
    tests.append((ok and e.rstrip().splitlines()[-1].startswith("\t\t"),
                  "entry format: " + first))
    for w in re.findall(r"^What:\t+(\S+)", e, re.M):
        whats[w] = e

for a in attrs:
    if a.startswith("hwmon:"):
        want = "/sys/class/hwmon/hwmonN/" + a[6:]
    else:
        want = "/sys/bus/pci/drivers/nnp/<dev>/" + a
    tests.append((want in whats, "documented: " + want))
tests.append((len(attrs) >= 20, "found the driver's attributes (%d)" % len(attrs)))

print("TAP version 13")
print("1..%d" % len(tests))
for i, (ok, name) in enumerate(tests, 1):
    print("%s %d %s" % ("ok" if ok else "not ok", i, name))
    fails += not ok
sys.exit(1 if fails else 0)
