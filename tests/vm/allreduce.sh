#!/usr/bin/env bash
# Allreduce device to device over the ICL ring in one VM, on 2, 3, 4 and 8
# chips: coll_test (kselftest harness) checks exact results on every rank,
# zero host-DMA bytes and the ring's share of link bytes. Then nnptool bench
# allreduce on 4 chips prints its nccl-tests table with nothing wrong.
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
tap_plan 6
for n in 2 3 4 8; do
	"$root/tools/nnp-vm" --chips "$n" --mem-size 16M --fabric ring -- coll_test >"$out" 2>&1
	echo "vm-status=$?" >>"$out"
	tap_context=$out tap_grep "allreduce on a ring of $n chips" "$out" '^vm-status=0$'
done
"$root/tools/nnp-vm" --chips 4 --mem-size 16M --fabric ring -- \
	nnptool bench allreduce --max 64K --iters 2 >"$out" 2>&1
echo "vm-status=$?" >>"$out"
tap_context=$out tap_grep "bench allreduce: 0 wrong, exit 0" "$out" '^# Out of bounds values : 0 OK'
tap_check "bench allreduce: a checked row per size, 8 B to 64 KiB" sh -c \
	"test \$(awk '/float +sum/ && \$8 == 0 && \$12 == 0' $out | wc -l) = 14 && grep -q '^vm-status=0$' $out"
tap_done
