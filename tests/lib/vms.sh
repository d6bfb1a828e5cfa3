# SPDX-License-Identifier: MIT
# Several VMs (or QEMUs) at once in one vm test. Source after setting $tmp,
# a directory the test owns: on exit every process started here is killed
# with its process group and $tmp is removed.
vms_pids=()

vms_cleanup() {
	local p
	for p in "${vms_pids[@]}"; do
		kill -- "-$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$tmp"
}
trap vms_cleanup EXIT

# vm_start NAME CMD...: CMD in a process group of its own, output in
# $tmp/NAME, its pid in $pid_NAME
vm_start() {
	local name=$1
	shift
	setsid "$@" >"$tmp/$name" 2>&1 </dev/null &
	vms_pids+=($!)
	eval "pid_$name=$!"
}

# free_port: a TCP port on 127.0.0.1 that nothing listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
