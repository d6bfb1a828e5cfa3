#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Two QEMU processes on one host, one chip each (chips 0 and 1), joined
# by an ICL link and running one 2-rank allreduce job
# (tests/guest/pair_allreduce_test.c; rendezvous over a LAN between the
# VMs, the ring algorithm): first over a unix socket, where the QEMUs
# share their device memory (sealed memfds passed with SCM_RIGHTS) and
# chunks cross as LENT descriptors read in place, then over TCP, where
# they are copied through the socket. Each way: the 32 MiB allreduce is
# exact on both ranks, each sends exactly 32 MiB on its link and moves
# no host DMA byte, both ends of the link agree byte for byte with no
# error or drop; and QEMU's own trace (nnp_icl_*) shows which path
# carried the bytes: over unix, both ends mapped the peer's 128 MiB, and
# every byte each chip received came in LENT frames (nnp_icl_rx_lent) and
# none as payload; over TCP no memory was shared, every byte came as DATA
# payload, and each chip credited every byte back (nnp_icl_credit_tx).
# 32 MiB: a rank may run a whole 16 MiB segment ahead of its peer, four
# times the receiving port's room; before TCP links had credits, a
# receiver then dropped chunks and the job failed on its timeout.
#
# NNP_PAIR_BENCH_ITERS=N also times N more allreduces each way and
# prints the BENCH lines and the unix/TCP ratio: a figure, not a test.
#
# In detail (docs/testing.md has the summary):
# one 2-rank allreduce job across the two QEMU processes
# (`pair_allreduce_test`, `NNP_JOB`, `NNP_ALGO=ring`) each way: 32 MiB of
# f32 (devices of 128 MiB) exact on both ranks, each sending exactly
# 33554432 bytes on its link with 0 host DMA bytes, and both ends agreeing
# on what crossed with no error or drop (`nnptool links`); QEMU's trace
# (`-trace 'nnp_icl_*'`) shows the path: over unix both QEMUs mapped the
# peer's 128 MiB (`nnp_icl_shared`) and each chip received all 33554432
# bytes as LENT frames and none as payload; over TCP nothing was shared,
# chip 0 received all of them as DATA payload, and each chip credited back
# exactly the packets and bytes it received (`nnp_icl_credit_tx`; a rank may
# run a 16 MiB segment ahead, four times the port's room: with its hello not
# offering credits, chip 0 received 4 MiB less and the TCP job failed).
# `NNP_PAIR_BENCH_ITERS=N` also times N allreduces each way and prints the
# TCP/unix time ratio (not checked)
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
tmp=$(mktemp -d)
. "$root/tests/lib/vms.sh"
tap_plan 17

iters=${NNP_PAIR_BENCH_ITERS:-0}
mib=32
bytes=$((mib << 20))
# What each chip receives in all: the checked allreduce and the timed ones.
total=$(((iters + 1) * bytes))
(umask 077; printf "job-secret-%s" "$$" >"$tmp/secret")

# pair WAY ADDR: the two VMs, linked at ADDR, both run to the end
pair() {
	local way=$1 addr=$2 lan vm r
	lan=$tmp/lan-$way
	NNP_COMM_SECRET=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
	export NNP_COMM_SECRET
	for r in 0 1; do
		local mode=connect lanmode=connect
		[ $r = 0 ] && mode=listen lanmode=listen
		vm=("$root/tools/nnp-vm" --chips 1 --chip-base $r --mem-size 128M
			--guest-mem 1024 --timeout 300 --icl-secret "$tmp/secret"
			--remote "$r.0-$((1 - r)).0=$mode:$addr"
			--lan "$lanmode:unix:$lan:10.0.0.$((r + 1))/24"
			--env NNP_COMM_ID=10.0.0.1:29500 --env NNP_COMM_SECRET
			--env NNP_COMM_TIMEOUT_S=120 --env NNP_COLL_TIMEOUT_S=60
			--env NNP_ALGO=ring
			--env "NNP_JOB=$r:2"
			--qemu-log "$tmp/$way-log$r" --qemu-arg -trace
			--qemu-arg 'nnp_icl_*')
		# A rank done with its part must not power off at once: over TCP
		# its last chunk may still be in its QEMU's socket, which a
		# close with unread data resets.
		vm_start "$way$r" "${vm[@]}" -- sh -c \
			"pair_allreduce_test $mib $iters; rc=\$?; sleep 3; nnptool links; exit \$rc"
	done
	wait "$(eval echo "\$pid_${way}0")"
	echo "vm-status=$?" >>"$tmp/${way}0"
	wait "$(eval echo "\$pid_${way}1")"
	echo "vm-status=$?" >>"$tmp/${way}1"
}

# lens FILE EVENT: the sum of the len fields of EVENT's lines, and how
# many of them had a payload
lens() {
	awk -v ev="$2" '$0 ~ ev" chip" {
		for (i = 1; i < NF; i++) if ($i == "len") { s += $(i + 1); n += $(i + 1) > 0 }
	} END { printf "%d %d\n", s, n }' "$1"
}

# agree WAY: chip 0 port 0 and chip 1 port 0 agree on what crossed
agree() {
	python3 "$root/tests/lib/links_agree.py" "$tmp/${1}0" "$tmp/${1}1" '0.0>1.0' '1.0>0.0'
}

pair unix "unix:$tmp/icl.sock"
pair tcp "127.0.0.1:$(free_port)"

for way in unix tcp; do
	for r in 0 1; do
		tap_context=$tmp/$way$r tap_check "$way: rank $r's allreduce exact, exit 0" sh -c \
			"grep -q '^ok 1 - rank $r: allreduce of $mib MiB exact' $tmp/$way$r &&
			 grep -q '^vm-status=0\$' $tmp/$way$r"
		tap_context=$tmp/$way$r tap_grep "$way: rank $r sent exactly $bytes bytes, no host DMA" \
			"$tmp/$way$r" "^# rank $r: link_tx_bytes=$bytes host_dma_bytes=0\$"
	done
	tap_context="$tmp/${way}0 $tmp/${way}1" tap_check "$way: both ends agree on the link's bytes" \
		agree "$way"
done

# Which path: the QEMUs' traces.
for r in 0 1; do
	tap_context=$tmp/unix-log$r tap_grep "unix: chip $r mapped its peer's 128 MiB" \
		"$tmp/unix-log$r" "nnp_icl_shared chip $r port 0 maps the peer's 134217728 bytes"
	lent=$(lens "$tmp/unix-log$r" nnp_icl_rx_lent)
	data=$(lens "$tmp/unix-log$r" nnp_icl_rx)
	echo "# unix: chip $r received lent: $lent, as payload: $data (bytes, frames)"
	tap_check "unix: chip $r received all $total bytes lent, none as payload" \
		test "${lent% *}" = "$total" -a "$data" = "0 0"
done
shared=$(cat "$tmp/tcp-log0" "$tmp/tcp-log1" | grep -c nnp_icl_shared)
lent=$(lens "$tmp/tcp-log0" nnp_icl_rx_lent)
data=$(lens "$tmp/tcp-log0" nnp_icl_rx)
echo "# tcp: chip 0 received lent: $lent, as payload: $data (bytes, frames)"
tap_check "tcp: no memory shared, chip 0 received all $total bytes as payload" \
	test "$shared" = 0 -a "$lent" = "0 0" -a "${data% *}" = "$total"
for r in 0 1; do
	credited=$(awk '/nnp_icl_credit_tx chip/ {
		for (i = 1; i < NF; i++) if ($i == "back") { p += $(i + 1); b += $(i + 3) }
	} END { printf "%d %d\n", b, p }' "$tmp/tcp-log$r")
	frames=$(lens "$tmp/tcp-log$r" nnp_icl_rx)
	packets=$(grep -c 'nnp_icl_rx chip' "$tmp/tcp-log$r")
	echo "# tcp: chip $r credited back $credited (bytes, packets) of $frames received, $packets frames in all"
	# Every payload byte and frame; an empty frame (the peer's leave as
	# its communicator went, hw 1.20) too once taken, but one for a
	# communicator already gone here may still be held as the VM ends.
	tap_check "tcp: chip $r credited back every packet it received" \
		test "${credited% *}" = "${frames% *}" -a "${credited#* }" -ge "${frames#* }" \
		-a "${credited#* }" -le "$packets"
done

if [ "$iters" -gt 0 ]; then
	for way in unix tcp; do
		grep -h '^BENCH' "$tmp/${way}0" | sed "s/^/# $way rank 0: /"
	done
	u=$(sed -n 's/^BENCH.*us_per_allreduce=\([0-9.]*\).*/\1/p' "$tmp/unix0")
	t=$(sed -n 's/^BENCH.*us_per_allreduce=\([0-9.]*\).*/\1/p' "$tmp/tcp0")
	[ -n "$u" ] && [ -n "$t" ] &&
		awk -v u="$u" -v t="$t" -v m=$mib 'BEGIN { printf "# %d MiB allreduce, 2 QEMUs: tcp time / unix+memfd time = %.2f\n", m, t / u }'
fi
tap_done
