# SPDX-License-Identifier: MIT
# TAP producer for the shell tests, host and guest (POSIX sh; sourced).
tap_n=0
tap_failed=0
tap_plan() { echo "TAP version 13"; echo "1..$1"; }
tap_ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1"; }
tap_not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n $1"; }
# tap_check NAME COMMAND...: ok if COMMAND succeeds; on failure the
# files named in $tap_context, if any, are shown as TAP comments.
tap_check() {
	tap_name=$1
	shift
	if "$@"; then
		tap_ok "$tap_name"
	else
		for f in ${tap_context:-}; do sed 's/^/# /' "$f"; done
		tap_not_ok "$tap_name"
	fi
}
# tap_grep NAME FILE ERE: ok if FILE has a line matching ERE; on failure
# the files named in $tap_context are shown as TAP comments.
tap_grep() {
	if grep -qE "$3" "$2"; then
		tap_ok "$1"
	else
		for f in ${tap_context:-$2}; do sed 's/^/# /' "$f"; done
		tap_not_ok "$1"
	fi
}
tap_done() { [ "$tap_failed" = 0 ]; }
# A VM test that boots with nnp-vm --host-root skips whole on the debug
# kernel, which has no 9p (nnp-vm refuses it there).
tap_needs_host_root() {
	if [ "${NNP_VM_KERNEL:-stock}" = debug ]; then
		echo "1..0 # SKIP the debug kernel has no 9p: nnp-vm --host-root refuses it"
		exit 0
	fi
}
