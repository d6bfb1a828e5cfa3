#!/usr/bin/env bash
# Probe and remove at every injected allocation failure
# (tests/guest/probe_failnth_test.c) on the debug kernel, in a VM of its
# own: some 500 binds of about 3 s each there (the probe half ran past
# 30 min beside other work), so CI's debug run (the guest suite only,
# .ci/run) leaves it to a whole `make check-debug`. The stock kernel has
# no fault injection: skipped there without a VM.
root=$(cd "$(dirname "$0")/../.." && pwd)
if [ "${NNP_VM_KERNEL:-stock}" != debug ]; then
	echo "1..0 # SKIP needs the debug kernel's fault injection (make check-debug)"
	exit 0
fi
exec "$root/tools/nnp-vm" --chips 2 --mem-size 64M --timeout 9600 -- probe_failnth_test
