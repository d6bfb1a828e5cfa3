#!/bin/sh
# SPDX-License-Identifier: MIT
# Run every guest test; each prints TAP. A test that exits non-zero without
# reporting a failure (a crash), or prints no plan, gets a "not ok" line of
# its own here.
# An entry with arguments is split into the test and its arguments.
cd /usr/libexec/nnp-tests || exit 1
rc=0
for t in nnp_query_test libnnp_test dma_test dmabuf_test queue_lifetime_test owner_stall_test user_limits_test \
	mem_limits_test ioctl_fuzz_test failnth_test "probe_failnth_test -t probe_unwinds_in_hwmon" \
	observe_test fdinfo_test pm_reset_test nnptool_test.sh udev_rule_test.sh module_reload_test.sh; do
	echo "# guest test: $t"
	./$t >/tmp/tap.out 2>&1
	status=$?
	cat /tmp/tap.out
	if [ $status != 0 ]; then
		rc=1
		grep -q '^not ok' /tmp/tap.out ||
			echo "not ok - $t exited with status $status"
	fi
	# A test that printed no plan would hide among the others' plans.
	grep -q '^1\.\.' /tmp/tap.out || { rc=1; echo "not ok - $t printed no TAP plan"; }
done
exit $rc
