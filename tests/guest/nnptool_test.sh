#!/bin/sh
# SPDX-License-Identifier: MIT
# nnptool in the guest: tables, JSON, errors and exit statuses.
#
# In detail (docs/testing.md has the summary):
# including memtest and bench copy, `info`'s `modeled clock` and `modeled
# busy` lines with 4 ports, its JSON `model` block, `links`' TX BUSY NS
# column a number on every port
. /usr/libexec/nnp-tests/tap.sh
n=$NNP_VM_CHIPS
out=/tmp/nnptool.out
err=/tmp/nnptool.err

runs() { # EXPECTED_STATUS ARGS...: nnptool exits with EXPECTED_STATUS
	want=$1
	shift
	nnptool "$@" >"$out" 2>"$err"
	[ $? = "$want" ]
}

tap_plan 21
tap_check "list exits 0" runs 0 list
tap_check "list has a header and $n rows" test "$(wc -l <"$out")" = $((n + 1))
tap_check "list shows every node" sh -c "for i in \$(seq 0 $((n - 1))); do grep -q \"^\$i .*/dev/accel/accel\" $out || exit 1; done"
tap_check "list --json exits 0" runs 0 list --json
tap_check "list --json has $n devices with distinct chip ids" \
	test "$(grep -o '"chip_id": [0-9]*' "$out" | sort -u | wc -l)" = "$n"
tap_check "--json before the command works too" runs 0 --json list
tap_check "info 0 exits 0" runs 0 info 0
tap_check "info shows firmware, memory and every capability by name" sh -c \
	"grep -q '^firmware: *1.2.0 (nnp-fwsim 1.2.0)$' $out && grep -q \"^memory: *$NNP_VM_MEM_SIZE bytes\" $out && grep -q '^capabilities: admin-queue, user-queues, icl, collectives$' $out"
tap_check "info by path, as JSON" sh -c \
	"nnptool info --json /dev/accel/accel0 | grep -q '\"capabilities\": \[\"admin-queue\", \"user-queues\", \"icl\", \"collectives\"\]'"
tap_check "info shows the modeled clock and each of the 4 ports' busy time" sh -c \
	"nnptool info 0 >$out && grep -qE '^modeled clock: [0-9]+ ns, [0-9]+ commands$' $out && grep -qE '^modeled busy:  memory [0-9]+ ns, host dma [0-9]+ ns, port tx 0 [0-9]+, 1 [0-9]+, 2 [0-9]+, 3 [0-9]+ ns$' $out"
tap_check "info --json: the model with 4 port busy times" sh -c \
	"nnptool info --json 0 | grep -qE '\"model\": \{\"now_ns\": [0-9]+, \"commands\": [0-9]+, \"hbm_busy_ns\": [0-9]+, \"pcie_busy_ns\": [0-9]+, \"port_tx_busy_ns\": \[[0-9]+, [0-9]+, [0-9]+, [0-9]+\]\}\}$'"
tap_check "links: a TX BUSY NS column, a number on each of the $((n * 4)) ports" sh -c \
	"nnptool links >$out && head -1 $out | grep -qE ' TX BUSY NS$' && test \$(grep -cE '^[0-9]+ .* [0-9]+$' $out) = $((n * 4))"
tap_check "info on a missing device exits 1 with a message" sh -c \
	"! nnptool info $n 2>$err && grep -q 'no such nnp device' $err"
tap_check "unknown command exits 2" runs 2 frobnicate
tap_check "info without DEV exits 2" runs 2 info
tap_check "memtest passes on every path" runs 0 memtest --size 1M
tap_check "memtest reports each path and the verdict" sh -c \
	"test \$(grep -c '^PASS ' $out) = 29 && ! grep -q '^FAIL' $out && grep -q '^memtest: passed$' $out"
tap_check "bench copy exits 0" runs 0 bench copy --max 64K --iters 2
tap_check "bench copy prints a row per size with nonzero bandwidth" sh -c \
	"test \$(awk 'NR > 1 && \$3 > 0 && \$4 > 0 && \$5 > 0 && \$6 > 0' $out | wc -l) = 3"
tap_check "bench with an unknown benchmark exits 2" runs 2 bench frobnicate
tap_check "memtest with a bad size exits 2" runs 2 memtest --size 0
tap_done
