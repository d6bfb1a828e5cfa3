#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make check: every suite prints TAP into build/test-results/<suite>.tap;
# the run ends with the ten slowest suites, what was skipped and why, then
# one summary line "N passed, N skipped, N failed"
# (tests/lib/tap-summary.sh), and fails if
# any test failed or any suite exited non-zero, printed no TAP plan, or
# fewer results than a plan it printed.
#
# Suites: host CMocka tests of the firmware simulator, the uapi padding and
# checkpatch checks, the guest tests (kselftest harness, libnnp, nnptool,
# module reload) in a VM with 2 devices, and VM scenarios in tests/vm/.
#
# NNP_VM_KERNEL=debug (make check-debug) runs only what boots a guest, the
# guest suite and the VM scenarios, on the debug kernel (tools/nnp-vm reads
# the variable), with results in build/test-results-debug/.
#
# Arguments, if any, are shell patterns of the suites to run, by the names
# the summary gives them: `run-tests.sh guest 'vm-icl*' host-test_fw_coll`.
# Such a run replaces only its own suites' results and sums up only them.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
export NNP_VM_KERNEL=${NNP_VM_KERNEL:-stock}
case "$NNP_VM_KERNEL" in
stock) results=$root/build/test-results ;;
debug) results=$root/build/test-results-debug ;;
*) echo "run-tests: NNP_VM_KERNEL is stock or debug" >&2; exit 2 ;;
esac
patterns=("$@")
[ ${#patterns[@]} -gt 0 ] || rm -rf "$results"
mkdir -p "$results"
suites_failed=0
suites_run=0
taps=()
durations=()

# Whether suite NAME is one the arguments ask for (all if there are none).
wanted() {
	local p
	[ ${#patterns[@]} = 0 ] && return 0
	for p in "${patterns[@]}"; do
		# shellcheck disable=SC2254 # the argument is a pattern
		case "$1" in $p) return 0 ;; esac
	done
	return 1
}

# A "not ok" line for what is wrong with the plans of suite $1's TAP file
# $2, if anything: none at all, or one with fewer results after it than it
# announced (a suite that stopped early). The guest suite prints one plan
# per test program.
plan_problems() {
	awk -v name="$1" '
	function check() {
		if (got < want)
			printf "not ok - %s: plan 1..%d but %d results\n", name, want, got
	}
	/^1\.\.[0-9]+/ {
		if (plans++)
			check()
		want = substr($0, 4) + 0
		got = 0
		next
	}
	/^(not )?ok( |$)/ { got++ }
	END {
		if (plans)
			check()
		else
			printf "not ok - %s: no TAP plan\n", name
	}' "$2"
}

# Suites that spend most of their time waiting run beside the suites after
# them: started in their turn, their output shown once the others are
# done. vm-comm_fault waits out a 65 s timeout (10 s of CPU in 71 s);
# vm-icl_socket_peers, a QEMU with no guest, out its peers' hello and frame
# timeouts (23 s of CPU in 65 s). Both passed beside vm-allreduce and
# vm-torch_nnp, and the suites after them beside them.
beside=" vm-comm_fault vm-icl_socket_peers "
beside_jobs=()

run_suite() { # NAME COMMAND...
	local name=$1 tap=$results/$1.tap
	shift
	wanted "$name" || return 0
	suites_run=$((suites_run + 1))
	taps+=("$tap")
	if [[ $beside == *" $name "* ]]; then
		echo "== $name: runs beside the next suites, its output at the end"
		(
			start=$SECONDS
			"$@" >"$tap" 2>&1 </dev/null
			echo "$? $((SECONDS - start))" >"$tap.status"
		) &
		beside_jobs+=("$!:$name")
		return 0
	fi
	echo "== $name"
	SECONDS=0
	"$@" 2>&1 | tee "$tap"
	suite_done "$name" "${PIPESTATUS[0]}" "$SECONDS"
}

# The suites started beside the others: wait for each, then show it.
finish_beside() {
	local job name tap status secs
	for job in "${beside_jobs[@]}"; do
		wait "${job%%:*}"
		name=${job#*:} tap=$results/${job#*:}.tap
		read -r status secs <"$tap.status"
		rm -f "$tap.status"
		echo "== $name"
		cat "$tap"
		suite_done "$name" "$status" "$secs"
	done
}

suite_done() { # NAME STATUS SECONDS: its time, and whatever went wrong
	local name=$1 tap=$results/$1.tap status=$2 problems
	echo "== $name: $3 s"
	durations+=("$3 $name")
	if [ "$status" != 0 ] && ! grep -q '^not ok' "$tap"; then
		echo "not ok - $name exited with status $status" | tee -a "$tap"
	fi
	problems=$(plan_problems "$name" "$tap")
	if [ -n "$problems" ]; then
		echo "$problems" | tee -a "$tap"
		status=1
	fi
	[ "$status" = 0 ] || suites_failed=$((suites_failed + 1))
}

if [ "$NNP_VM_KERNEL" = stock ]; then
	for t in "$root"/build/tests/host/test_*; do
		run_suite "host-$(basename "$t")" env CMOCKA_MESSAGE_OUTPUT=TAP "$t"
	done
	run_suite host-uapi-padding bash "$root/tests/host/check-uapi-padding.sh"
	run_suite host-fw-layers bash "$root/tests/host/check-fw-layers.sh"
	run_suite host-versions bash "$root/tests/host/check-versions.sh"
	run_suite host-libnnp-abi bash "$root/tests/host/check-libnnp-abi.sh"
	run_suite host-deps-goals bash "$root/tests/host/check-deps-goals.sh"
	run_suite host-phases bash "$root/tests/host/check-phases.sh"
	run_suite host-mpi-coll bash "$root/tests/host/check-mpi-coll.sh"
	run_suite host-tap-summary bash "$root/tests/host/check-tap-summary.sh"
	run_suite host-torch-dist-compare bash "$root/tests/host/check-torch-dist-compare.sh"
	run_suite host-report-torch python3 "$root/tests/host/check-report-torch.py"
	run_suite host-licenses python3 "$root/tests/host/check-licenses.py"
	run_suite host-syz-description bash "$root/tests/host/check-syz-description.sh"
	run_suite host-abi-doc python3 "$root/tests/host/check-abi-doc.py"
	run_suite host-doc-links python3 "$root/tests/host/check-doc-links.py"
	run_suite host-pod-switch python3 "$root/tests/host/check-pod-switch.py"
	run_suite host-fuzz bash "$root/tests/fuzz/run.sh" 10
	run_suite host-checkpatch bash "$root/tests/host/checkpatch.sh"
	run_suite host-install bash "$root/tests/host/check-install.sh"
	run_suite host-dkms bash "$root/tests/host/check-dkms.sh"
fi
run_suite guest "$root/tools/nnp-vm" --chips 2 --mem-size 512M --guest-mem 2048 \
	-- run-guest-tests.sh
for t in "$root"/tests/vm/*.sh; do
	run_suite "vm-$(basename "$t" .sh)" bash "$t"
done

finish_beside

if [ "$suites_run" = 0 ]; then
	echo "run-tests: no suite matches: $*" >&2
	exit 2
fi
echo "== the slowest suites"
printf '%s\n' "${durations[@]}" | sort -rn | head -n 10 |
	awk '{ printf "%6d s  %s\n", $1, $2 }'
bash "$root/tests/lib/tap-summary.sh" "${taps[@]}" && [ "$suites_failed" = 0 ]
