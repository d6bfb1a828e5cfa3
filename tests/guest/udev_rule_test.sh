#!/bin/sh
# SPDX-License-Identifier: MIT
# udev/60-nnp.rules applied by udev itself: udevd, started here as a booted
# system starts it, handles an add event for each device and sets its
# node's owner and mode. Every nnp accel node, root-only 0600 as the kernel
# makes it, must end up group render, mode 0660; a node of another driver
# (/dev/null) must be left as it was. `udevadm test` shows that udev reads
# the rule; it no longer applies what it finds since udev 256 (Debian 13's
# is 257), so the nodes are checked after udevd's own run.
#
# In detail (docs/testing.md has the summary):
# `udevadm test --action=add` on each accel node reads
# `60-nnp.rules`; then `systemd-udevd --daemon` and `udevadm trigger
# --action=add --settle` on each node: root 0600 before, group render 0660
# after; the same for `/dev/null`: unchanged
. /usr/libexec/nnp-tests/tap.sh
n=$NNP_VM_CHIPS
log=/tmp/udev.log
tap_plan 5

perms() { stat -c '%a %G' "$@"; }
before=$(for i in $(seq 0 $((n - 1))); do perms /dev/accel/accel$i; done | sort -u)
tap_check "before the rule: every accel node root's, 0600 (got: $before)" \
	test "$before" = "600 root"
null_before=$(perms /dev/null)
ok=1
for i in $(seq 0 $((n - 1))); do
	udevadm test --action=add /sys/class/accel/accel$i >$log 2>&1 || ok=0
	grep -q '60-nnp.rules' $log || ok=0
done
tap_context=$log tap_check "udevadm test reads 60-nnp.rules for each of the $n accel nodes" test $ok = 1

# udevadm is udevd when called by that name, as /usr/lib/systemd/systemd-udevd.
# udevd needs inotify, which the debug kernel (tinyconfig) leaves out: there
# it says so and exits, and the checks that need it are skipped, naming why.
# Every wait is bounded, so that a udevd that is not there fails, not hangs.
mkdir -p /run
ln -sf "$(command -v udevadm)" /tmp/systemd-udevd
/tmp/systemd-udevd --daemon --debug >$log 2>&1
if ! timeout 10 udevadm control --ping --timeout=5 2>>$log &&
	grep -q 'Failed to create inotify descriptor: Function not implemented' $log; then
	why="this kernel has no inotify, which udevd needs (the debug kernel)"
	tap_ok "systemd-udevd --daemon starts # SKIP $why"
	tap_ok "after udevd's add events: every accel node group render, 0660 # SKIP $why"
	tap_ok "another driver's node is left alone by udevd # SKIP $why"
	tap_done
	exit
fi
tap_context=$log tap_check "systemd-udevd --daemon starts and answers" \
	timeout 10 udevadm control --ping --timeout=5
for i in $(seq 0 $((n - 1))); do
	timeout 60 udevadm trigger --action=add --settle /sys/class/accel/accel$i
done
after=$(for i in $(seq 0 $((n - 1))); do perms /dev/accel/accel$i; done | sort -u)
tap_check "after udevd's add events: every accel node group render, 0660 (got: $after)" \
	test "$after" = "660 render"
timeout 60 udevadm trigger --action=add --settle /sys/class/mem/null
tap_check "another driver's node is left alone by udevd: /dev/null still $null_before" \
	test "$(perms /dev/null)" = "$null_before"
timeout 10 udevadm control --exit
tap_done
