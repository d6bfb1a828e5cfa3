#!/bin/sh
# Unload and reload nnp.ko with devices present; busy module refuses rmmod;
# nnptool reports a missing driver; the kernel log stays clean throughout.
. /usr/libexec/nnp-tests/tap.sh
n=$NNP_VM_CHIPS
nodes() { ls /dev/accel 2>/dev/null | grep -c '^accel'; }
no_warn() { ! dmesg | grep -qE 'WARNING:|BUG:|Oops|Call Trace:'; }

tap_plan 9
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
tap_check "no WARN, BUG or oops in the kernel log" no_warn
tap_done
