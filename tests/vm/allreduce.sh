#!/usr/bin/env bash
# Allreduce device to device over the ICL ring in one VM, on 2, 3, 4 and 8
# chips: coll_test (kselftest harness) checks exact results on every rank,
# zero host-DMA bytes and the ring's share of link bytes.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 4
for n in 2 3 4 8; do
	"$root/tools/nnp-vm" --chips "$n" --mem-size 16M --fabric ring -- coll_test >"$out" 2>&1
	echo "vm-status=$?" >>"$out"
	tap_context=$out tap_grep "allreduce on a ring of $n chips" "$out" '^vm-status=0$'
done
tap_done
