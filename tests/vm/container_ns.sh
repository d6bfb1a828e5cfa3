#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A container given one chip, as a runtime makes it: in a mount namespace
# with a /dev of its own holding only chip 2's accel node (bind-mounted, as
# rootless podman does; sysfs as the host's), libnnp counts exactly one
# device: `nnptool list --json` shows index 0, chip 2, serial
# NNPSIM-00000002 at chip 2's node, `nnptool info 0` the same chip and
# `nnptool info 1` fails (exit 1); with no node at all, `nnptool list`
# fails, and NNP_DEBUG=WARN says none of the 3 has a node in /dev/accel.
# Outside, 3 devices.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 4
# shellcheck disable=SC2016 # expanded in the guest
"$root/tools/nnp-vm" --chips 3 --mem-size 64M -- sh -c '
for d in /sys/class/accel/accel*; do
	[ "$(cat $d/device/chip_id)" = 2 ] && node=${d##*/}
done
echo "node=$node"
echo "host-list=$(nnptool list --json)"
unshare -m sh -c "
	mount --make-rprivate /
	touch /tmp/node && mount --bind /dev/accel/$node /tmp/node
	mount -t tmpfs none /dev && mkdir /dev/accel && touch /dev/accel/$node
	mount --bind /tmp/node /dev/accel/$node
	echo ns-list=\$(nnptool list --json)
	echo ns-info=\$(nnptool info 0 --json)
	nnptool info 1 >/dev/accel/out 2>&1; echo ns-info1=\$?
"
unshare -m sh -c "
	mount --make-rprivate /
	mount -t tmpfs none /dev
	NNP_DEBUG=WARN nnptool list >/dev/out 2>&1; echo none-status=\$? \$(cat /dev/out)
"
' >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_grep "the VM exits 0" "$out" '^vm-status=0$'
tap_check "outside the namespace: 3 devices" python3 - "$out" <<'PY'
import json, sys
line = next(l for l in open(sys.argv[1]) if l.startswith("host-list="))
devs = json.loads(line[len("host-list="):])["devices"]
assert sorted(d["chip_id"] for d in devs) == [0, 1, 2], devs
PY
tap_check "given chip 2's node only: one device, index 0, chip 2, its serial and node" python3 - "$out" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
node = next(l for l in lines if l.startswith("node="))[5:]
devs = json.loads(next(l for l in lines if l.startswith("ns-list="))[8:])["devices"]
assert len(devs) == 1, devs
d = devs[0]
assert (d["index"], d["chip_id"], d["serial"], d["path"]) == \
    (0, 2, "NNPSIM-00000002", "/dev/accel/" + node), d
info = json.loads(next(l for l in lines if l.startswith("ns-info="))[8:])
assert (info["chip_id"], info["serial"]) == (2, "NNPSIM-00000002"), info
assert "ns-info1=1" in lines, lines
PY
tap_grep "given no node: nnptool list fails, none of the 3 has a node" "$out" \
	'^none-status=1 nnp-vm:[0-9]* \[-\] NNP WARN no nnp device: none of the 3 has a node in /dev/accel: no such nnp device nnptool: list: no such nnp device \(no nnp device: none of the 3 has a node in /dev/accel\)$'
tap_done
