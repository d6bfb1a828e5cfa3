#!/bin/sh
# SPDX-License-Identifier: MIT
# Unload and reload nnp.ko with devices present; busy module refuses rmmod;
# nnptool reports a missing driver; max_queues limits each device's queues
# and refuses what is out of range; the kernel log stays clean throughout.
#
# In detail (docs/testing.md has the summary):
# rmmod refused while open, unload/reload twice, `max_queues=0` and `65`
# refused with no device left, `max_queues=2` giving every device 2 queues
# in `nnptool info` and a plain reload 64 again, no WARN
. /usr/libexec/nnp-tests/tap.sh
n=$NNP_VM_CHIPS
nodes() { ls /dev/accel 2>/dev/null | grep -c '^accel'; }
no_warn() { ! dmesg | grep -qE 'WARNING:|BUG:|Oops|Call Trace:'; }

tap_plan 14
exec 3</dev/accel/accel0
tap_check "rmmod refuses while a file is open" sh -c '! rmmod nnp 2>/dev/null'
exec 3<&-
tap_check "rmmod succeeds once it is closed" rmmod nnp
tap_check "no accel nodes without the driver" test "$(nodes)" = 0
tap_check "nnptool list says the driver is not loaded" sh -c \
	"! nnptool list 2>/tmp/e && grep -q 'nnp driver not loaded' /tmp/e"
tap_check "reload succeeds" nnp-load
tap_check "all $n devices are back" test "$(nodes)" = "$n"
tap_check "nnptool list works again" sh -c "nnptool list >/dev/null"
tap_check "second unload/reload cycle" sh -c "rmmod nnp && nnp-load && test \$(ls /dev/accel | grep -c accel) = $n"
# Every device offers $1 queues (nnptool info, from DEVICE_INFO).
queues_are() {
	i=0
	while [ "$i" -lt "$n" ]; do
		[ "$(nnptool info "$i" | sed -n 's/^queues: *//p')" = "$1" ] || return 1
		i=$((i + 1))
	done
}
refused() { rmmod nnp && ! nnp-load max_queues=0 && ! nnp-load max_queues=65 && test "$(nodes)" = 0; }
tap_check "max_queues=0 and max_queues=65 are refused" refused
tap_check "reload with max_queues=2" nnp-load max_queues=2
tap_check "max_queues=2: each device offers 2 queues (nnptool info)" queues_are 2
tap_check "reload without it" sh -c "rmmod nnp && nnp-load"
tap_check "each device offers 64 queues again" queues_are 64
tap_check "no WARN, BUG or oops in the kernel log" no_warn
tap_done
