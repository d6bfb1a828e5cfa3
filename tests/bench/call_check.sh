#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What the call check costs (hardware 1.16: ranks that call one collective
# otherwise end MISMATCH): the 8-byte allreduce on a ring of 4 chips in one
# VM, with every device's call-check on and then off, ROUNDS times in
# turns (on first in odd rounds, off first in even), switched between runs
# from QEMU's monitor (tests/lib/fault_host.py, which reads each switch
# back). One VM, so that boot and placement cancel out of the ratio.
# Usage: call_check.sh [ROUNDS]
# Prints the guest's output: "## on|off ROUND", then nnptool bench --json;
# then the host side's "call-check nnpN on|off reads true|false" lines.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${1:-10}
iters=2000
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmd="for r in \$(seq $rounds); do
	order='on off'; [ \$((r % 2)) = 1 ] || order='off on'
	for s in \$order; do
		for d in 0 1 2 3; do echo \"CHECK nnp\$d \$s\"; done
		sleep 3
		echo \"## \$s \$r\"
		nnptool --json bench allreduce --min 8 --max 8 --iters $iters --trials 3 || exit 1
	done
done; echo CHECK-END"
"$root/tools/nnp-vm" --chips 4 --fabric ring --mem-size 16M --monitor "$tmp/mon" \
	-- sh -c "$cmd" >"$tmp/out" 2>&1 &
vm=$!
python3 "$root/tests/lib/fault_host.py" "$tmp/mon" "$tmp/out" CHECK-END 600 \
	>"$tmp/host" 2>&1 &
fh=$!
status=0
wait $vm || status=$?
sleep 1
kill $fh 2>/dev/null || true
wait $fh || status=$?
cat "$tmp/out" "$tmp/host"
if [ "$status" != 0 ]; then
	echo "call_check: the VM or its monitor failed" >&2
	exit 1
fi
