#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# torch's own distributed tests (distributed_test, the suite upstream runs
# for gloo, NCCL and MPI) on "gloo" natively on the host and on "nnp" in
# one boot of 4 chips on a ring (the host's torch through
# `nnp-vm --host-root`), 4 ranks each, run alike by
# tests/vm/torch_dist_suite.py; then tests/vm/torch_dist_compare.py: every
# test that passes on gloo passes on nnp, or is listed with its reason in
# docs/torch.md ("What nnp does not pass of torch's suite"), and no listed
# test passes on nnp.
#
# gloo's results do not change with nnp's code: those of a torch version
# that tests/vm/torch-suite-gloo/VERSION.log holds are taken from there
# (90 s saved), and gloo runs only for a version it lacks. With
# NNP_TORCH_SUITE_GLOO=run (`make torch-suite`) gloo runs whatever the
# version, and a further check fails if its passes differ from the
# stored ones.
#
# About 4 minutes on 2 cores (alone: `make check
# SUITES=vm-torch_dist_suite`); the logs stay in build/torch-suite/.
root=$(cd "$(dirname "$0")/../.." && pwd -P)
. "$root/tests/lib/tap.sh"
tap_needs_host_root
out=$root/build/torch-suite
mkdir -p "$out"
version=$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')
stored=$root/tests/vm/torch-suite-gloo/$version.log
run_gloo=${NNP_TORCH_SUITE_GLOO:-}
[ -f "$stored" ] || run_gloo=run
if [ "$run_gloo" = run ] && [ -f "$stored" ]; then
	tap_plan 4
else
	tap_plan 3
fi

# The names of the tests log $1 says passed, one a line, sorted.
passes() { sed -n 's/^DISTTEST \(test_[A-Za-z0-9_]*\): pass .*/\1/p' "$1" | sort; }

if [ "$run_gloo" = run ]; then
	SECONDS=0
	/usr/bin/python3 "$root/tests/vm/torch_dist_suite.py" gloo >"$out/gloo.log" 2>&1
	gloo_s=$SECONDS
	tail -n 30 "$out/gloo.log" >"$out/gloo.tail"
	tap_context="$out/gloo.tail" tap_grep "torch's suite on gloo, natively (${gloo_s} s)" "$out/gloo.log" \
		'^DISTTEST total: [1-9]'
	if [ -f "$stored" ]; then
		diff <(passes "$stored") <(passes "$out/gloo.log") >"$out/gloo.diff"
		tap_context="$out/gloo.diff" tap_check \
			"gloo passes what tests/vm/torch-suite-gloo/$version.log says it passes" \
			test ! -s "$out/gloo.diff"
	fi
else
	cp "$stored" "$out/gloo.log"
	tap_grep "torch's suite on gloo: torch $version's results, stored ($(passes "$stored" | wc -l) passed)" \
		"$out/gloo.log" '^DISTTEST total: [1-9]'
fi

# nnp runs only the tests that passed on gloo: the comparison looks at no
# other, and the rest, most of them skipped for want of GPUs, cost a
# quarter of the guest's time for nothing.
mapfile -t compared < <(passes "$out/gloo.log")
SECONDS=0
# USE_LIBUV=0: torch 2.6's store asks for libuv, which Debian 13's torch lacks.
"$root/tools/nnp-vm" --chips 4 --fabric ring --mem-size 64M --guest-mem 2048 \
	--timeout 1500 --host-root --env PYTHONPATH="$root/build/torch" --env USE_LIBUV=0 -- \
	/usr/bin/python3 "$root/tests/vm/torch_dist_suite.py" nnp "${compared[@]}" >"$out/nnp.log" 2>&1
echo "vm-status=$?" >>"$out/nnp.log"
tail -n 30 "$out/nnp.log" >"$out/nnp.tail"
tap_context="$out/nnp.tail" tap_grep "torch's suite on nnp, one boot of 4 chips (${SECONDS} s)" "$out/nnp.log" \
	'^DISTTEST total: [1-9]'

python3 "$root/tests/vm/torch_dist_compare.py" "$out/gloo.log" "$out/nnp.log" \
	"$root/docs/torch.md" >"$out/compare.txt" 2>&1
status=$?
sed 's/^/# /' "$out/compare.txt"
tap_context="$out/compare.txt" tap_check "every test passing on gloo passes on nnp, or docs/torch.md says why" \
	test "$status" = 0
tap_done
