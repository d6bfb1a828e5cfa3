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
