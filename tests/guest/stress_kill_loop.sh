#!/bin/sh
# SPDX-License-Identifier: MIT
# make stress, in the guest: N loops of kill -9 in the middle of
# collectives and DMA; every third loop the devices are unbound and bound
# again, every third rmmod and reload. After each loop no device memory and
# no memory object may be left (fault_test --leaks).
n=${1:-10}
pci() { basename "$(readlink "/sys/class/accel/$1/device")"; }
bad=0
i=1
while [ "$i" -le "$n" ]; do
	nnptool bench allreduce --max 1M --iters 50 >/dev/null 2>&1 &
	a=$!
	nnptool memtest 0 --size 8M >/dev/null 2>&1 &
	b=$!
	sleep "0.$((RANDOM % 9 + 1))"
	kill -9 "$a" "$b" 2>/dev/null
	wait "$a" "$b" 2>/dev/null
	case $((i % 3)) in
	1)
		for d in $(ls /sys/class/accel); do
			p=$(pci "$d")
			echo "$p" >/sys/bus/pci/drivers/nnp/unbind
			echo "$p" >/sys/bus/pci/drivers/nnp/bind
		done ;;
	2)
		if ! err=$(rmmod nnp 2>&1); then
			# Who still holds the module: its use count, open device files.
			echo "# loop $i: rmmod failed: $err; refcnt $(cat /sys/module/nnp/refcnt)" \
				"holders: $(ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c accel)"
			bad=$((bad + 1))
		elif ! nnp-load >/dev/null; then
			echo "# loop $i: reload failed"
			bad=$((bad + 1))
		fi ;;
	esac
	if ! fault_test --leaks >/tmp/leaks 2>&1; then
		echo "# loop $i: leak: $(cat /tmp/leaks | tr '\n' ' ')"
		bad=$((bad + 1))
	fi
	# Progress, so that a long run stopped early still tells how far it got.
	[ $((i % 50)) = 0 ] && echo "# loop $i done, $bad failures"
	i=$((i + 1))
done
warn=$(dmesg | grep -cE 'WARNING:|BUG:|Oops|Call Trace:')
echo "KILLLOOP loops=$n failures=$bad kernel_warnings=$warn"
[ "$bad" = 0 ] && [ "$warn" = 0 ]
