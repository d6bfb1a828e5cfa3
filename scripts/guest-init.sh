#!/bin/sh
# SPDX-License-Identifier: MIT
# /init of the nnp test guest. Loads the driver, runs the command that
# tools/nnp-vm packed into /nnp-vm/cmd (or a shell), unloads the driver,
# checks the kernel log (and on the debug kernel kmemleak), and reports the exit status on the console as
# "NNP-VM-EXIT=<status>" for nnp-vm to pick up.
export PATH=/usr/bin:/bin:/sbin:/usr/libexec/nnp-tests
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# The debug kernel's kmemleak (tools/nnp-vm --kernel debug) runs from boot
# but scans only when asked. What boot left unreferenced is not ours to
# judge: scan once now and forget it, so the scan at the end reports only
# what this run leaked.
kmemleak=/sys/kernel/debug/kmemleak
if [ -e "$kmemleak" ]; then
	echo scan >"$kmemleak"
	echo clear >"$kmemleak"
fi
mkdir -p /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
# MPI jobs run here as root, on one node, over loopback (see
# /etc/openmpi/openmpi-mca-params.conf for the rest of their defaults).
hostname nnp-vm
ip link set lo up
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export HOME=/root
# nnp-vm's files are root's alone (--env may hold the job's secret); the
# environment is read once and gone.
[ -f /nnp-vm/env ] && . /nnp-vm/env && rm -f /nnp-vm/env
# On a LAN with other VMs (nnp-vm --lan): its NIC gets NNP_VM_LAN_IP.
if [ -n "${NNP_VM_LAN_IP:-}" ]; then
	insmod /lib/modules/e1000.ko
	for i in $(seq 50); do
		[ -e /sys/class/net/eth0 ] && break
		sleep 0.1
	done
	ip addr add "$NNP_VM_LAN_IP" dev eth0
	ip link set eth0 up
fi

finish() {
	echo "NNP-VM-EXIT=$1"
	poweroff -f
	sleep 10
}

# The kernel log must stay free of warnings, BUGs and oopses, and of the
# debug kernel's reports: KASAN and sleeping in atomic context (BUG:),
# lockdep (WARNING: possible circular locking dependency and the like, or
# a bare "INFO:" with a stack), debug objects (ODEBUG:) and UBSAN.
kernel_log_clean() {
	if dmesg | grep -E -B2 -A20 'WARNING:|BUG:|Oops|general protection|Call Trace:|UBSAN:|KASAN:|ODEBUG:|INFO: (possible|trying to register|lockdep)|possible (circular|recursive) locking|inconsistent lock state|list_add corruption|refcount_t:'; then
		echo "nnp-vm: the kernel log shows a WARN, BUG, oops or debug report (above)"
		return 1
	fi
	return 0
}

# No leak may be left once nnp.ko is gone. kmemleak reports only objects
# older than 5 s, and an object it saw unreferenced in one scan but
# referenced in the next (a pointer only in a register) is no leak: wait,
# then scan twice.
kmemleak_clean() {
	[ -e "$kmemleak" ] || return 0
	sleep 6
	echo scan >"$kmemleak"
	echo scan >"$kmemleak"
	if grep -q . "$kmemleak"; then
		cat "$kmemleak"
		echo "nnp-vm: kmemleak reports $(grep -c '^unreferenced object' "$kmemleak") leaked objects (above)"
		return 1
	fi
	return 0
}

if [ "${NNP_VM_LOAD:-1}" = 1 ]; then
	if ! nnp-load ${NNP_VM_MODPARAMS:-}; then
		dmesg | tail -n 30
		echo "nnp-vm: nnp.ko failed to load"
		finish 125
	fi
	n=$(ls /dev/accel 2>/dev/null | grep -c '^accel')
	if [ "$n" != "${NNP_VM_CHIPS:-0}" ]; then
		dmesg | tail -n 30
		echo "nnp-vm: $n accel nodes for ${NNP_VM_CHIPS:-0} devices"
		finish 125
	fi
fi

# nnp-vm --host-root: the host's root, read-only over virtio-9p (mount tag
# $NNP_VM_HOST_ROOT), at /host with the guest's own /dev (and /dev/shm),
# /proc and /sys and a /tmp of its own. The command nnp-vm packed chroots
# there. A checkout under the host's /tmp ($NNP_VM_HOST_KEEP) is bound
# back in at its path, read-only as the rest, over the guest's /tmp.
mount_host_root() {
	for m in $(cat /etc/nnp-9p-modules); do
		insmod "/lib/modules/$m.ko" || return 1
	done
	mkdir -p /host &&
		# cache=loose keeps what was read in the guest's page cache:
		# importing torch takes 25 s instead of 45 under TCG, and a
		# second rank's import finds it cached. The price is that a host
		# file changed while the guest runs may be seen as it was.
		# nosuid, nodev: a guest user must not gain the host's set-user-ID
		# programs or reach a device through the host's nodes.
		mount -t 9p -o trans=virtio,version=9p2000.L,ro,nosuid,nodev,cache=loose \
			"$NNP_VM_HOST_ROOT" /host &&
		mount -o rbind /dev /host/dev &&
		mount -t proc proc /host/proc &&
		mount -o rbind /sys /host/sys || return 1
	if [ -n "${NNP_VM_HOST_KEEP:-}" ]; then
		mkdir -p /kept && mount -o bind "/host$NNP_VM_HOST_KEEP" /kept || return 1
	fi
	mount -t tmpfs -o mode=1777 tmpfs /host/tmp || return 1
	# Root's home (nnp-vm's HOME for the command), made before any guest
	# user can plant a file there for root's programs to load.
	mkdir -m 0700 /host/tmp/nnp-vm-root || return 1
	if [ -n "${NNP_VM_HOST_KEEP:-}" ]; then
		mkdir -p "/host$NNP_VM_HOST_KEEP" &&
			mount -o bind /kept "/host$NNP_VM_HOST_KEEP" || return 1
	fi
}
if [ -n "${NNP_VM_HOST_ROOT:-}" ] && ! mount_host_root; then
	dmesg | tail -n 30
	echo "nnp-vm: cannot mount the host's root (9p, mount tag $NNP_VM_HOST_ROOT) on /host"
	finish 125
fi

cd /root
if [ -f /nnp-vm/cmd ]; then
	sh /nnp-vm/cmd
	rc=$?
else
	setsid cttyhack sh -l
	rc=$?
fi

# A command killed in the middle of its work may leave processes of its
# own behind that still hold a device: a kselftest test runs in a child in
# a process group of its own, which outlives its harness when that is
# killed (and may sit in a collective for its communicator's timeout); an
# MPI rank outlives mpirun a while. While any process has a /dev/accel file
# open or mapped the module is in use, and rmmod fails with EAGAIN
# ("Resource temporarily unavailable"). They are the command's leftovers:
# name them, kill them, and wait for their files to be closed. One ls and
# one grep over all of /proc: two per process cost every boot over a
# second of TCG time.
device_holders() {
	{
		ls -l /proc/[0-9]*/fd 2>/dev/null | awk '
			/^\/proc\/[0-9]+\/fd:$/ { split($0, part, "/"); pid = part[3] }
			/ \/dev\/accel\// { print pid }'
		grep -l ' /dev/accel/' /proc/[0-9]*/maps 2>/dev/null | cut -d/ -f3
	} | sort -u
}
holders=$(device_holders)
if [ -n "$holders" ]; then
	for pid in $holders; do
		# Another user may have named it to drive a terminal.
		echo "nnp-vm: killing pid $pid ($(tr -c ' -~\n' '?' <"/proc/$pid/comm" 2>/dev/null)), left holding an nnp device"
	done
	kill -9 $holders 2>/dev/null
	i=0
	while [ -n "$(device_holders)" ] && [ "$i" -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
fi

if grep -q '^nnp ' /proc/modules && ! rmmod nnp; then
	echo "nnp-vm: rmmod nnp failed"
	[ "$rc" = 0 ] && rc=125
fi
kernel_log_clean || { [ "$rc" = 0 ] && rc=125; }
kmemleak_clean || { [ "$rc" = 0 ] && rc=125; }
finish "$rc"
