#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reference docs cannot go stale. Every sysfs attribute nnp.ko makes
(DEVICE_ATTR_* in any driver/*.c, the port fields of nnp_sysfs_ports.c, the
hwmon sensors) is in docs/ABI/testing/sysfs-driver-nnp under
/sys/class/accel/accelN/device/ (where nnptool and the README look), in the
kernel's Documentation/ABI format: What, Date, KernelVersion, Contact,
Description, in that order; and the file names no attribute the driver does
not make. Every function libnnp exports (a global of libnnp/libnnp.map) has
its entry, `.BR name ()`, in docs/man/libnnp.3, and the page names no
nnp_ function the library does not export. Prints TAP; exits 1 on a
failure."""
import re
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2]
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, str(root / "tests/lib"))
import tap  # noqa: E402
doc = (root / "docs/ABI/testing/sysfs-driver-nnp").read_text()
driver = "".join(p.read_text() for p in sorted((root / "driver").glob("*.c")))
ports = (root / "driver/nnp_sysfs_ports.c").read_text()
hwmon = (root / "driver/nnp_hwmon.c").read_text()
DEV = "/sys/class/accel/accelN/device/"

attrs = [DEV + a for a in re.findall(r"DEVICE_ATTR_(?:RO|WO|RW)\((\w+)\)", driver)]
names = re.search(r"nnp_port_field_names\[[^]]*\] = \{([^}]*)\}", ports, re.S)
attrs += [DEV + "portP/" + n for n in re.findall(r'"(\w+)"', names.group(1))]
if "HWMON_T_INPUT" in hwmon:
    attrs.append("/sys/class/hwmon/hwmonN/temp1_input")
if "HWMON_P_INPUT" in hwmon:
    attrs.append("/sys/class/hwmon/hwmonN/power1_input")

entries = re.split(r"\n\n(?=What:)", doc.strip())
whats = {}
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
    tests.append((a in whats, "documented: " + a))
for w in whats:
    tests.append((w in attrs, "an attribute the driver makes: " + w))
tests.append((len(attrs) >= 20, "found the driver's attributes (%d)" % len(attrs)))

libmap = (root / "libnnp/libnnp.map").read_text()
exported = []
for block in re.findall(r"global:(.*?)(?:local:|\})", libmap, re.S):
    exported += re.findall(r"^\s*(nnp_\w+);", block, re.M)
man = (root / "docs/man/libnnp.3").read_text()
entries3 = set(re.findall(r"^\.BR (nnp_\w+) \(\)", man, re.M))
for f in exported:
    tests.append((f in entries3, "libnnp.3 has an entry for " + f + "()"))
for f in sorted(entries3 - set(exported)):
    tests.append((False, "libnnp.3 names " + f + "(), which libnnp does not export"))
tests.append((len(exported) >= 45, "found libnnp's exported functions (%d)" % len(exported)))

tap.report(tests)
