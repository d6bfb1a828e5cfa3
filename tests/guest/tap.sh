# Minimal TAP producer for the guest's shell tests (sourced).
tap_n=0
tap_failed=0
tap_plan() { echo "TAP version 13"; echo "1..$1"; }
tap_ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1"; }
tap_not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n $1"; }
# tap_check NAME COMMAND...: ok if COMMAND succeeds
tap_check() {
	name=$1
	shift
	if "$@"; then tap_ok "$name"; else tap_not_ok "$name"; fi
}
tap_done() { [ "$tap_failed" = 0 ]; }
