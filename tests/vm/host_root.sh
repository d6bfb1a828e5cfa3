#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tools/nnp-vm --host-root: one boot of 3 devices, started in the checkout,
# runs a shell of the host's in the guest's read-only view of the host's
# root. In it the host's /usr/bin/python3 prints what it prints on the
# host, this checkout's nnptool (first on PATH) lists the guest's 3
# devices, the command starts in the checkout, /dev and /proc are the
# guest's, a write to a host path fails with EROFS, /tmp is writable and
# is not the host's, and the command's exit status 3 is nnp-vm's.
# nnp-vm refuses --host-root on the debug kernel, which has no 9p.
#
# In detail (docs/testing.md has the summary):
# in the host's root seen read-only over 9p: the host's `/usr/bin/python3`
# prints what it prints on the host, the checkout's `build/bin/nnptool`
# (first on PATH) lists exactly the guest's 3 devices, the command starts in
# the checkout, `/dev` (accel0..2) and `/proc` (host name `nnp-vm`) are the
# guest's, a write to a host path fails with EROFS and leaves nothing,
# `/tmp` is writable and does not show the host's, exit status 3 comes
# through; `--kernel debug --host-root` exits 2 naming the missing 9p
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
tap_needs_host_root
out=$(mktemp /tmp/host_root.XXXXXX)
probe=$root/build/host_root_probe
trap 'rm -f "$out" "$probe"' EXIT
rm -f "$probe"
tap_plan 12

py='import hashlib, sys
print("py", sys.version.split()[0], hashlib.sha256(b"nnp").hexdigest()[:16], sum(i * i for i in range(1000)))'
write='import errno, sys
try:
    open(sys.argv[1], "w")
except OSError as e:
    print("write", errno.errorcode[e.errno])
else:
    print("write ok")'
# The guest's shell gets the programs and paths as arguments.
guest='echo "cwd=$(pwd)"
echo "nnptool=$(command -v nnptool)"
/usr/bin/python3 -c "$1"
"$3/build/bin/nnptool" list --json
echo "accel=$(ls /dev/accel | tr "\n" " ")"
echo "hostname=$(cat /proc/sys/kernel/hostname)"
/usr/bin/python3 -c "$2" "$3/build/host_root_probe"
echo made >/tmp/made && echo "tmp=$(cat /tmp/made)"
if [ -e "$4" ]; then echo "host-tmp=seen"; else echo "host-tmp=unseen"; fi
exit 3'
(cd "$root" && tools/nnp-vm --chips 3 --mem-size 16M --host-root -- \
	/bin/sh -c "$guest" sh "$py" "$write" "$root" "$out") >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "the command's exit status 3 is nnp-vm's" "$out" '^vm-status=3$'
tap_context=$out tap_grep "the command starts in the checkout ($root)" "$out" "^cwd=$root\$"
tap_context=$out tap_grep "nnptool on PATH is the checkout's build/bin/nnptool" "$out" \
	"^nnptool=$root/build/bin/nnptool\$"
expect=$(/usr/bin/python3 -c "$py")
tap_context=$out tap_grep "the host's python3 prints in the guest what it prints on the host ($expect)" \
	"$out" "^$expect\$"
tap_check "the checkout's nnptool lists the guest's 3 devices, chip ids 0..2, 16 MiB" \
	python3 - "$out" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.startswith('{"devices"')]
assert len(lines) == 1, lines
devs = json.loads(lines[0])["devices"]
assert [(d["index"], d["chip_id"], d["mem_size"]) for d in devs] == \
    [(i, i, 16 << 20) for i in range(3)], devs
PY
tap_context=$out tap_grep "/dev is the guest's: accel0 accel1 accel2" "$out" '^accel=accel0 accel1 accel2 $'
tap_context=$out tap_grep "/proc is the guest's: host name nnp-vm" "$out" '^hostname=nnp-vm$'
tap_context=$out tap_grep "a write to a host path fails with EROFS" "$out" '^write EROFS$'
tap_check "the host path was not written" test ! -e "$probe"
tap_context=$out tap_grep "/tmp is writable" "$out" '^tmp=made$'
tap_context=$out tap_grep "/tmp is not the host's (a file in the host's /tmp is not seen)" "$out" '^host-tmp=unseen$'
"$root/tools/nnp-vm" --kernel debug --host-root -- true >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_check "--host-root on the debug kernel: exit 2, saying it has no 9p" \
	test "$(cat "$out")" = "nnp-vm: --host-root needs the stock kernel: the debug kernel has no virtio or 9p (scripts/debug-kernel.config)
vm-status=2"
tap_done
