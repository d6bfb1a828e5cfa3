# SPDX-License-Identifier: MIT
# A guest that asks for faults ("FAULT nnpN SPEC" lines) in a VM whose QEMU
# monitor tests/lib/fault_host.py drives. Source after setting $root.
#
# fault_vm DIR MARK SECS NNP-VM-ARGS... -- GUEST-CMD...: runs the VM until
# the guest prints a line starting MARK (or SECS pass); the guest's output
# goes to DIR/out, ending "vm-status=N", the host side's to DIR/host.
# Returns fault_host.py's status: 0 if it set every fault asked for.
fault_vm() {
	local dir=$1 mark=$2 secs=$3 vm host
	shift 3
	"$root/tools/nnp-vm" --monitor "$dir/mon" "$@" >"$dir/out" 2>&1 &
	vm=$!
	python3 "$root/tests/lib/fault_host.py" "$dir/mon" "$dir/out" "$mark" \
		"$secs" >"$dir/host" 2>&1
	host=$?
	wait $vm
	echo "vm-status=$?" >>"$dir/out"
	return $host
}

# fault_vm_kselftest PLAN SECS NNP-VM-ARGS... -- GUEST-CMD...: a script's
# TAP plan of PLAN checks, then fault_vm for a kselftest program in $tmp
# (made here, removed at exit) until its totals; its results shown as TAP
# comments, then the check that the host set every change it asked for.
fault_vm_kselftest() {
	local secs=$2 host
	tap_plan "$1"
	shift 2
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	fault_vm "$tmp" "# Totals: " "$secs" "$@"
	host=$?
	grep -E '^(not )?ok |^# ' "$tmp/out" | grep -v '^# Totals' | sed 's/^/# /'
	tap_context=$tmp/host tap_check "the host set every change the guest asked for" \
		test "$host" = 0
}

# fault_vm_clean DIR: the VM in DIR exited 0: no WARN, BUG or oops, the
# module unloaded.
fault_vm_clean() {
	tap_context=$1/out tap_grep "no WARN, BUG or oops; the module unloads" \
		"$1/out" '^vm-status=0$'
}
