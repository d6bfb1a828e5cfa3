#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Collectives device to device over the ICL in one VM: coll_test (kselftest
# harness; every type, op and count, 0 B to 64 MiB, broadcast, allgather,
# reduce-scatter, guard bytes, host-DMA and link counters) on rings of 2,
# 3, 4 and 8 chips and on 2x2 and 4x2 tori, where rank order is not a ring
# and libnnp finds one. Then 16 MiB of each collective on 2 chips (a
# window of chunks larger than a communicator's share of a port hung
# there), and nnptool bench allreduce on 4 chips prints its nccl-tests
# table with nothing wrong.
# coll_test samples its matrix (each type and op at one count, chosen by
# the chip count); NNP_COLL_MATRIX=full runs all of it (make stress).
#
# In detail (docs/testing.md has the summary):
# `coll_test` (one process, `nnp_comm_init_all`): allreduce of all six types
# × five ops, each pair at one of 0, 1, 7, 1003 and 100003 elements (chosen
# by the chip count, so the six fabrics run different pairs; `make stress`
# runs every count), n-1 elements for every type, in and out of place, 64
# MiB of f32 over the ranks (`make stress`: on every rank), broadcast from
# every root and of every type, allgather and reduce-scatter of every
# type and op at a sampled count, random f32/f16/bf16 inputs within
# rounding, a message from every
# rank to every other, routed where their chips share no link (ring of 8,
# 4x2 torus), with exactly one message's bytes per hop on the links; every
# rank's result, the guard bytes around it, unchanged host-DMA counters and
# exact link bytes per case (in all 2(n-1) buffers for an allreduce; each
# rank's share within what its algorithm's segments round it to, `NNP_ALGO`
# unset: auto, so BIDIR on the rings and TORUS on the tori); NO_PATH for
# chips not joined, the same chip twice refused; on 4 chips receives from
# any source again with NNP_TRACE_FILE set (a trace puts timestamps after
# each command, which the source's record must skip); `nnptool bench allreduce`
# on 4 chips with every row checked and 0 wrong; `nnptool bench` reduce,
# alltoall, gather, scatter and sendrecv to rank 1 and to rank 2 (routed,
# 2 hops) on 4 chips, 0 wrong, a --peer past the ranks or on a collective
# a usage error (2); `nnptool bench allreduce -d all -o all` (a row of 0
# wrong for each type, op and size), broadcast, reduce, gather and scatter
# of int32 from root 2, 8 half averages to a group (-m 8) as CSV; a root
# past the ranks, a root or an op the collective has no use for, usage
# errors (2); `group_test` on every
# fabric: a group of receives posted before the sends, every pair, routed
# where no link joins them, byte for byte with no host DMA; 32 small
# allreduces and the other collectives in one group, exact and in order;
# 32 allreduces of 8 bytes in a group in at most 4 times one's modeled
# time;
# nested groups; a group ended twice, an operation refused inside one
# (nothing of it runs), a communicator destroyed under one, 128 messages
# on one stream in one group; alltoallv with uneven counts, and with a
# pair's counts disagreeing; on 4 chips, a group and an alltoallv traced
# (NNP_TRACE_FILE): a line per send and receive, each ok, without device
# times; on 2 chips
# `comm_config_test`: configs of an unknown size, a timeout out of range and
# bad names refused before any rendezvous, a named communicator with a
# 1.5 s timeout that names itself in errors and gives up on a lone
# receive after 1.5 s, and whose trace lines carry its name; a config of
# the size before blocking (or before group_fusion) is blocking;
# non-blocking creation: two ranks started from one thread,
# NNP_IN_PROGRESS (and every call refused with it) until both are in, then
# an exact allreduce; a rendezvous that times out reported as
# NNP_ERROR_TIMEOUT with its last error; abort and destroy end a creation
# under way within 1 s; group_fusion 1 in the config fuses a group of 32
# allreduces (made blocking or not, and on its split), 0 keeps them apart
# under NNP_GROUP_FUSION=1, 2 is refused
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/tap.sh"
out=$(mktemp)
trap 'rm -f "$out"*' EXIT
matrix=()
[ -z "${NNP_COLL_MATRIX:-}" ] || matrix=(--env "NNP_COLL_MATRIX=$NNP_COLL_MATRIX")
tap_plan 25
# What a VM runs after coll_test, by chip count: on 2 chips
# comm_config_test (its group fusion untraced: a traced collective runs
# between its stamps, never in a GROUP) and 16 MiB of each
# collective (a step of 8 MiB goes in 1 MiB chunks, and a window of 4 of
# them outgrew what one communicator may hold of its peer's port, 3 MiB,
# so both chips parked sending to each other for good); on a ring of 4,
# nnptool bench allreduce up to 64 KiB. Sharing the boot saves two.
after_ring2='NNP_TRACE_FILE=/tmp/cfg.%p.trace comm_config_test -T group_fusion_from_the_config
s=$?
comm_config_test -t group_fusion_from_the_config
echo config-status=$s,$? named-lines=$(cat /tmp/cfg.*.trace | grep -c "\"op\":\"allreduce\".*\"status\":\"ok\",\"name\":\"tp.stage-1_b\"}")
for c in allgather reduce_scatter broadcast allreduce; do
	nnptool bench $c --min 16M --max 16M --iters 2 --trials 1 || exit 1
done'
after_ring4='NNP_TRACE_FILE=/tmp/group.%p.trace group_test -t receives_posted_before_sends \
	-t alltoallv_uneven_counts >/dev/null
echo traced-status=$? traced-messages=$(cat /tmp/group.*.trace |
	grep -cE "\"op\":\"(send|recv)\".*\"dev_start_ns\":null.*\"status\":\"ok\"")
NNP_TRACE_FILE=/tmp/any.%p.trace coll_test -t receive_from_any_source >/dev/null
echo any-traced-status=$?
nnptool bench allreduce --max 64K --iters 2
for c in reduce alltoall gather scatter "sendrecv --peer 1" "sendrecv --peer 2"; do
	nnptool bench $c --max 256K --step 8 --iters 2 || exit 1
done
nnptool bench sendrecv --peer 4 --max 64 2>/dev/null; p4=$?
nnptool bench allreduce --peer 1 --max 64 2>/dev/null
echo peer-usage=$p4,$?
nnptool bench allreduce -b 64 -e 4K -f 64 -n 1 -d all -o all >/tmp/typed.txt
echo typed-status=$? typed-rows=$(awk "/^ / && \$9 == 0 && \$15 == 0 {print \$3, \$4}" /tmp/typed.txt |
	sort -u | wc -l),$(grep -c "^ " /tmp/typed.txt)
for c in broadcast reduce gather scatter; do
	nnptool bench $c -r 2 -b 64 -e 4K -f 8 -n 2 -d int32 || exit 1
done
nnptool bench reduce -r 4 2>/dev/null; r4=$?
nnptool bench allreduce -r 1 2>/dev/null; r1=$?
nnptool bench gather -o max 2>/dev/null
echo root-usage=$r4,$r1,$?
nnptool bench allreduce -b 8 -e 64 -f 8 -n 3 -m 8 -d half -o avg --csv >/tmp/agg.csv
echo agg-status=$? agg=$(cut -d, -f1,4,5,7,8,10,14 /tmp/agg.csv | tr "\n" " ")
nnptool bench alltoall -b 64K -e 64K -n 2 -c 0 --csv >/tmp/nocheck.csv; s=$?
nnptool bench alltoall -c 2 2>/dev/null
echo nocheck-status=$s,$? nocheck=$(cut -d, -f1,8,10,14 /tmp/nocheck.csv | tr "\n" " ")'
for fabric in ring:2 ring:3 ring:4 ring:8 torus:2x2:4 torus:4x2:8; do
	n=${fabric##*:} topo=${fabric%:*}
	after=
	[ "$fabric" = ring:2 ] && after=$after_ring2
	[ "$fabric" = ring:4 ] && after=$after_ring4
	"$root/tools/nnp-vm" --chips "$n" --mem-size 128M --guest-mem 2048 \
		--fabric "$topo" "${matrix[@]}" -- \
		sh -c "coll_test; echo coll-status=\$?; group_test; echo group-status=\$?; $after" \
		>"$out.$fabric" 2>&1
	echo "vm-status=$?" >>"$out.$fabric"
	tap_context=$out.$fabric tap_grep "collectives on $topo, $n chips" "$out.$fabric" '^coll-status=0$'
	tap_context=$out.$fabric tap_grep "groups on $topo, $n chips" "$out.$fabric" '^group-status=0$'
done
out=$out.ring:2
tap_context=$out tap_check "16 MiB allgather, reduce_scatter, broadcast, allreduce on 2 chips: 0 wrong, none hung" \
	sh -c "test \$(grep -c '^# Out of bounds values : 0 OK' $out) = 4 && grep -q '^vm-status=0$' $out"
tap_context=$out tap_grep "communicator options on 2 chips: bad configs refused, a name and a 1.5 s timeout that hold" \
	"$out" '^config-status=0,0 named-lines=2$'
out=${out%:2}:4
tap_context=$out tap_grep "bench allreduce: 0 wrong, exit 0" "$out" '^# Out of bounds values : 0 OK'
tap_check "bench allreduce: a checked row per size, 8 B to 64 KiB" sh -c \
	"test \$(awk '/^# nnptool bench /{b=\$4} b == \"allreduce:\" && /float +sum/ && \$9 == 0 && \$15 == 0' $out | wc -l) = 14 && grep -q '^vm-status=0$' $out"
tap_grep "a traced group and alltoallv on 4 chips: a line per send and receive, each ok" "$out" \
	'^traced-status=0 traced-messages=48$'
tap_grep "receives from any source, traced, on 4 chips: each names its sender" "$out" \
	'^any-traced-status=0$'
tap_check "bench reduce, alltoall, gather, scatter, sendrecv to 1 and 2 hops, and from root 2, on 4 chips: 0 wrong in each" \
	sh -c "test \$(grep -c '^# Out of bounds values : 0 OK' $out) = 11 && grep -q '^vm-status=0$' $out"
tap_grep "bench sendrecv: a peer past the ranks, or --peer for a collective: usage (2)" "$out" \
	'^peer-usage=2,2$'
tap_grep "bench allreduce -d all -o all: 6 types x 5 ops x 2 sizes, each row 0 wrong" "$out" \
	'^typed-status=0 typed-rows=30,60$'
tap_check "bench broadcast, reduce, gather and scatter from root 2, int32: root 2 in every row" \
	sh -c "test \$(awk '/^# nnptool bench (broadcast|reduce|gather|scatter):/{b=1} b && /^ / && \$5 == 2 && \$3 == \"int32\"' $out | wc -l) = 12"
tap_grep "bench: a root past the ranks, -r for allreduce, -o for gather: usage (2)" "$out" '^root-usage=2,2,2$'
tap_grep "bench -m 8 --csv: 8 half averages per group, a CSV line per pass, 0 wrong" "$out" \
	'^agg-status=0 agg=benchmark,type,redop,agg,size,in_place,wrong allreduce,half,avg,8,8,0,0 allreduce,half,avg,8,8,1,0 allreduce,half,avg,8,64,0,0 allreduce,half,avg,8,64,1,0$'
tap_grep "bench -c 0: nothing checked, the wrong field empty; -c 2: usage (2)" "$out" \
	'^nocheck-status=0,2 nocheck=benchmark,size,in_place,wrong alltoall,65536,0, alltoall,65536,1,$'

tap_done
