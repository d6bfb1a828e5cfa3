#!/bin/sh
# SPDX-License-Identifier: MIT
# udev/60-nnp.rules applied by udev itself: `udevadm test --action=add`
# runs the rules for a device and sets its node's owner and mode as udevd
# would. Every nnp accel node, root-only 0600 as the kernel makes it, must
# end up group render, mode 0660; a node of another driver (/dev/null)
# must be left as it was.
#
# In detail (docs/testing.md has the summary):
# `udevadm test --action=add` on each accel node with `udev/60-nnp.rules`:
# root 0600 before, group render 0660 after, `/dev/null` unchanged
. /usr/libexec/nnp-tests/tap.sh
n=$NNP_VM_CHIPS
log=/tmp/udev.log
tap_plan 4

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
tap_check "udevadm test runs 60-nnp.rules for each of the $n accel nodes" test $ok = 1
after=$(for i in $(seq 0 $((n - 1))); do perms /dev/accel/accel$i; done | sort -u)
tap_check "after: every accel node group render, 0660 (got: $after)" test "$after" = "660 render"
udevadm test --action=add /sys/class/mem/null >$log 2>&1
tap_check "another driver's node is left alone: /dev/null still $null_before" \
	test "$(perms /dev/null)" = "$null_before"
tap_done
