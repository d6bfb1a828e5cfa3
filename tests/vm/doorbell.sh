#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Shadow doorbells (hardware interface 1.11, docs/hw-interface.md): QEMU
# traces every SQ_TAIL doorbell write (nnp_doorbell) while
# tests/guest/doorbell_job.c submits a receive that waits on chip 0, 32
# fills behind it, then the send on chip 1 that ends the wait, then one
# copy once chip 0 is idle. On a 1.11 device only the receive and the
# copy write chip 0's doorbell: 2 writes for 34 submissions. On a device
# that presents 1.10 (shadow-doorbells=off), the driver and libnnp take
# the older path: 34. Both runs check every byte.
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
tap_needs_host_root
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Boot 2 chips with device options "$@", run the job, keep its output and trace.
run_job() { # NAME [--device-opt K=V]
	local name=$1
	shift
	"$root/tools/nnp-vm" --chips 2 --mem-size 16M --fabric ring --host-root \
		--qemu-log "$tmp/$name.trace" --qemu-arg -trace --qemu-arg nnp_doorbell \
		"$@" -- build/tests/guest/doorbell_job >"$tmp/$name.out" 2>&1
	echo "vm-status=$?" >>"$tmp/$name.out"
}

# SQ_TAIL writes to chip 0's queue pages (0x10000 + qid * 0x1000).
sq_tail_writes() {
	grep -cE 'nnp_doorbell chip 0 addr 0x[1-4][0-9a-f]000 ' "$tmp/$1.trace"
}

tap_plan 6
run_job shadow
run_job legacy --device-opt shadow-doorbells=off
for name in shadow legacy; do
	echo "# $name: $(sq_tail_writes $name) SQ_TAIL writes on chip 0"
done
tap_context=$tmp/shadow.out tap_grep "1.11: the job's data are exact" \
	"$tmp/shadow.out" '^doorbell_job: ok, 34 submissions on chip 0$'
tap_context=$tmp/shadow.out tap_grep "1.11: the VM exits 0" "$tmp/shadow.out" '^vm-status=0$'
tap_check "1.11: 2 doorbell writes on chip 0 for 34 submissions" \
	test "$(sq_tail_writes shadow)" = 2
tap_context=$tmp/legacy.out tap_grep "1.10: the job's data are exact" \
	"$tmp/legacy.out" '^doorbell_job: ok, 34 submissions on chip 0$'
tap_context=$tmp/legacy.out tap_grep "1.10: the VM exits 0" "$tmp/legacy.out" '^vm-status=0$'
tap_check "1.10: a doorbell write per submission, 34" \
	test "$(sq_tail_writes legacy)" = 34
tap_done
