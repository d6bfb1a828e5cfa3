// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: ranks that call one collective differently fail
 * fast (v1.16), on a ring of 4 in-process chips.
 *
 * In detail (docs/testing.md has the summary): rank 1 calls an allreduce
 * that differs from the other ranks' in its type, its op or its count, a
 * broadcast from another root, or a broadcast where they call an
 * allreduce. Run on one thread, in chip order: rank 1 finds rank 0's
 * first chunk queued as it starts and ends MISMATCH without reading it,
 * its completion naming rank 0's call and the fields that differ; the
 * others end ABORTED (a broadcast's root too: its chunk never comes
 * back), and every rank's COMM_STATUS is the failure. Alike calls all
 * succeed. An alltoall whose count differs on rank 1, and a GROUP whose
 * second allreduce differs on rank 1, end the same way, the group's
 * completion naming the member's peer. Groups of allreduces flagged to
 * run as one (v1.25): a rank that did not flag its two ends MISMATCH at
 * the other's chunk, naming its group; groups of the same bytes in two
 * and in four members end MISMATCH on the rank that finds the other's
 * chunk, naming its count and group. A relay's copy of rank 1's
 * alltoall chunk carries its call: rank 3 ends MISMATCH naming it.
 * Switched off (nnp_fw_set_call_check()), the check lets a type
 * mismatch run to SUCCESS on every rank; on again, it fails as before.
 *
 * Chunks that are never read are checked too: on a ring of 2, two ranks
 * that each think they are a broadcast's root only send. The one that
 * starts second finds the other's chunk queued and ends MISMATCH, the
 * other ABORTED by its abort, in either order; on a ring of 3 where the
 * odd root starts first, the chunk it never reads fails it as it
 * arrives (MISMATCH), and the next rank finds its chunk queued. All end
 * under the device's default timeout (COLL_TIMEOUT_MS, 60 s), no clock
 * moved, in well under the 30 s the one-thread run is given. A peer one
 * collective ahead, whose next broadcast (another root) lends its chunk
 * while this rank's broadcast is in flight, is no mismatch: both succeed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"

#define COUNT	1000u	/* elements: one chunk */

/* A collective call, as every rank but rank 1 makes it here. */
struct call {
	uint8_t opcode, dtype, op;
	uint16_t root;
	uint64_t count;
};

static const struct call alike = {
	NNP_CMD_ALLREDUCE, NNP_DTYPE_I32, NNP_OP_SUM, 0, COUNT,
};

static struct nnp_hw_queue_cmd coll_cmd(uint32_t i, const struct call *c,
					uint16_t cid)
{
	/* A broadcast's ranks but the root name no source. */
	bool reads = c->opcode != NNP_CMD_BROADCAST || i == c->root;

	return (struct nnp_hw_queue_cmd){
		.opcode = c->opcode, .cid = cid, .len = c->count,
		.src_key = reads ? keys[i] : 0, .src_off = reads ? SRC : 0,
		.dst_key = keys[i], .dst_off = DST,
		.value = NNP_COLL_VALUE(c->dtype, c->op, COMM, c->root),
	};
}

/* What a MISMATCH completion says of @peer's call, @fields differing. */
static uint64_t detail_of(uint32_t peer, const struct call *c, uint32_t fields)
{
	return NNP_MISMATCH_CALL(c->opcode, c->dtype, c->op, c->root) |
	       (uint64_t)NNP_MISMATCH_WHO(peer, fields) << 32;
}

static uint64_t cqe_detail(uint32_t i)
{
	const struct nnp_hw_cqe *e = cqe(i, chips[i].slot);

	return e->result | (uint64_t)e->rsvd << 32;
}

/*
 * Each rank's command ended with @want[rank], one that ended MISMATCH
 * naming its sender's call (the rank before it: rank 1's @odd, another's
 * @base) and @fields; and the communicator is failed on every rank, for
 * that reason, or ABORTED on a rank whose part ended before it learnt.
 */
static void expect_ends(const struct call *base, const struct call *odd,
			const uint16_t want[], uint32_t fields)
{
	uint32_t i;

	for (i = 0; i < N; i++) {
		uint32_t from = (i + N - 1) % N;

		assert_int_equal(chips[i].status, want[i]);
		assert_int_equal(cqe_detail(i),
				 want[i] != NNP_STATUS_MISMATCH ? 0 :
				 detail_of(from, from == 1 ? odd : base, fields));
		assert_int_equal(fw_harness_comm_status(chips[i].h, CTX, COMM),
				 want[i] ? want[i] : NNP_STATUS_ABORTED);
	}
}

/* Every rank posts its call as @cid (rank 1 @odd, the others @base): run. */
static void run_calls(const struct call *base, const struct call *odd,
		      uint16_t cid)
{
	uint32_t i;

	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], coll_cmd(i, i == 1 ? odd : base, cid));
	fw_chips_run_one_thread(chips, N);
}

/* run_calls() on a new ring: expect_ends(). */
static void expect_mismatch(const struct call *base, const struct call *odd,
			    const uint16_t want[], uint32_t fields)
{
	ring_up(ALL);
	run_calls(base, odd, 5);
	expect_ends(base, odd, want, fields);
	ring_down();
}

/*
 * On one thread in chip order, rank 1 takes rank 0's first chunk, and
 * its abort reaches the others before they look at what rank 1 lent.
 */
static const uint16_t ring_failed[] = {
	NNP_STATUS_ABORTED, NNP_STATUS_MISMATCH, NNP_STATUS_ABORTED,
	NNP_STATUS_ABORTED,
};

static void test_alike_calls_succeed(void **state)
{
	uint32_t i;

	(void)state;
	ring_up(ALL);
	run_calls(&alike, &alike, 5);
	for (i = 0; i < N; i++) {
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		assert_int_equal(cqe_detail(i), 0);
	}
	ring_down();
}

static void test_type_differs(void **state)
{
	struct call odd = alike;

	(void)state;
	odd.dtype = NNP_DTYPE_F32;
	expect_mismatch(&alike, &odd, ring_failed, NNP_MISMATCH_DTYPE);
}

static void test_op_differs(void **state)
{
	struct call odd = alike;

	(void)state;
	odd.op = NNP_OP_MAX;
	expect_mismatch(&alike, &odd, ring_failed, NNP_MISMATCH_OP);
}

static void test_count_differs(void **state)
{
	struct call odd = alike;

	(void)state;
	odd.count = COUNT + 4;
	expect_mismatch(&alike, &odd, ring_failed, NNP_MISMATCH_COUNT);
}

static void test_collective_differs(void **state)
{
	struct call odd = alike;

	(void)state;
	odd.opcode = NNP_CMD_BROADCAST;	/* op 0: SUM */
	expect_mismatch(&alike, &odd, ring_failed, NNP_MISMATCH_OPCODE);
}

/* Each chip's nnp_fw_set_call_check(), @on. */
static void call_check(bool on)
{
	uint32_t i;

	for (i = 0; i < N; i++)
		nnp_fw_set_call_check(chips[i].h->fw, on);
}

/*
 * Switched off, the check lets ranks that disagree on an allreduce's type
 * (of one size) run it: every rank ends SUCCESS, none is told. Switched
 * on again on the same chips, the same calls fail as test_type_differs.
 */
static void test_check_switched_off_and_on(void **state)
{
	struct call odd = alike;
	uint32_t i;

	(void)state;
	odd.dtype = NNP_DTYPE_F32;
	ring_up(ALL);
	call_check(false);
	run_calls(&alike, &odd, 5);
	for (i = 0; i < N; i++) {
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		assert_int_equal(cqe_detail(i), 0);
	}
	call_check(true);
	run_calls(&alike, &odd, 6);
	expect_ends(&alike, &odd, ring_failed, NNP_MISMATCH_DTYPE);
	ring_down();
}

static const struct call bcast = {
	NNP_CMD_BROADCAST, NNP_DTYPE_I32, 0, 0, COUNT,
};

/*
 * Rank 1 fails on the root's chunk without reading it: it never comes
 * back, and the root's part ends ABORTED with the others'.
 */
static void test_root_differs(void **state)
{
	struct call odd = bcast;

	(void)state;
	odd.root = 2;
	expect_mismatch(&bcast, &odd, ring_failed, NNP_MISMATCH_ROOT);
}

/* fw_chips_run_one_thread() of the N chips, their turns in @order. */
static void run_in_order(const uint32_t *order)
{
	struct fw_chip c[MAXR];
	uint32_t i;

	for (i = 0; i < N; i++)
		c[i] = chips[order[i]];
	fw_chips_run_one_thread(c, N);
	for (i = 0; i < N; i++)
		chips[order[i]] = c[i];
}

/*
 * Every rank posts a broadcast, rank 1 from @odd_root, the others from
 * root 0; the chips take turns in @order: expect_ends().
 */
static void expect_roots(uint32_t odd_root, const uint32_t *order,
			 const uint16_t want[])
{
	struct call odd = bcast;
	uint32_t i;

	odd.root = odd_root;
	ring_up(ALL);
	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], coll_cmd(i, i == 1 ? &odd : &bcast, 5));
	run_in_order(order);
	expect_ends(&bcast, &odd, want, NNP_MISMATCH_ROOT);
	ring_down();
}

/*
 * On a ring of 2 each rank thinks it is the root: both only send, and
 * neither reads the other's chunk. The one that starts second finds the
 * first one's chunk queued and fails MISMATCH naming its call at once;
 * the first one, waiting for its chunk to come back, ends ABORTED by
 * the abort. Before, both waited for the communicator's timeout.
 */
static void test_two_roots_on_two(void **state)
{
	static const uint32_t forwards[] = { 0, 1 }, backwards[] = { 1, 0 };
	static const uint16_t second_fails[] = {
		NNP_STATUS_ABORTED, NNP_STATUS_MISMATCH,
	};
	static const uint16_t first_fails[] = {
		NNP_STATUS_MISMATCH, NNP_STATUS_ABORTED,
	};

	(void)state;
	N = 2;
	expect_roots(1, forwards, second_fails);
	expect_roots(1, backwards, first_fails);
	N = 4;
}

/*
 * On a ring of 3, rank 1 thinks it is the root (it only sends, to rank 2)
 * and starts first; rank 0, the root, then lends it a chunk it will never
 * read. That chunk fails rank 1 as it arrives: MISMATCH naming rank 0's
 * call. Rank 2 finds rank 1's chunk queued as it starts: MISMATCH naming
 * rank 1's. Rank 0 ends ABORTED.
 */
static void test_unread_chunk_fails_on_arrival(void **state)
{
	static const uint32_t order[] = { 1, 0, 2 };
	static const uint16_t want[] = {
		NNP_STATUS_ABORTED, NNP_STATUS_MISMATCH, NNP_STATUS_MISMATCH,
	};

	(void)state;
	N = 3;
	expect_roots(1, order, want);
	N = 4;
}

/*
 * On a ring of 2, a broadcast from root 0 and one from root 1 after it,
 * as two commands or (@grouped) the members of a GROUP, the chips taking
 * turns in @order: all succeed, each broadcast's destination on both
 * chips holding its root's source.
 */
static void two_broadcasts(bool grouped, const uint32_t *order)
{
	const uint64_t len = COUNT * 4;
	struct call next = bcast;
	uint32_t i, k, first[2];

	next.root = 1;
	ring_up(ALL);
	for (i = 0; i < N; i++) {
		struct nnp_hw_queue_cmd c[] = {
			{ .opcode = NNP_CMD_GROUP, .len = 2, .cid = 4 },
			coll_cmd(i, &bcast, 5), coll_cmd(i, &next, 6),
		};

		/* Only the root names a source. */
		c[2].src_off += c[2].src_key ? len : 0;
		c[2].dst_off += len;
		pattern(i, SRC, 2 * len, i + 1);
		first[i] = (chips[i].h->q_tail[0] + grouped) % H_QDEPTH;
		post_watching(i, c + !grouped, 2 + grouped, grouped ? 0 : 1);
	}
	run_in_order(order);
	for (i = 0; i < N; i++) {
		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		for (k = 0; k < 2; k++)
			assert_int_equal(cqe_status(i, (first[i] + k) % H_QDEPTH),
					 NNP_STATUS_SUCCESS);
		assert_memory_equal(chips[i].h->dev_mem + DST,
				    chips[0].h->dev_mem + SRC, len);
		assert_memory_equal(chips[i].h->dev_mem + DST + len,
				    chips[1].h->dev_mem + SRC + len, len);
		assert_int_equal(fw_harness_comm_status(chips[i].h, CTX, COMM),
				 0);
	}
	ring_down();
}

/*
 * A peer one collective ahead is no mismatch. As two commands in chip
 * order, rank 1 receives the first broadcast and starts the second while
 * rank 0's first waits for its chunk to come back: rank 1's chunk of the
 * second arrives at rank 0 with another root than the broadcast it has in
 * flight, but with the next label; rank 0 takes it in its turn. In a
 * GROUP, rank 1 first, its second broadcast lends before rank 0 starts:
 * rank 0's first broadcast starts with that chunk queued.
 */
static void test_peer_ahead_is_no_mismatch(void **state)
{
	static const uint32_t forwards[] = { 0, 1 }, backwards[] = { 1, 0 };

	(void)state;
	N = 2;
	two_broadcasts(false, forwards);
	two_broadcasts(true, backwards);
	N = 4;
}

/* An alltoall of @count int32s from and to each rank. */
static struct nnp_hw_queue_cmd alltoall(uint32_t i, uint64_t count)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLTOALL, .cid = 5, .len = count,
		.src_key = keys[i], .src_off = SRC,
		.dst_key = keys[i], .dst_off = DST,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, 0, COMM, 0),
	};
}

/* Exchanges are checked alike: rank 1's flow in from rank 0 differs. */
static void test_exchange_count_differs(void **state)
{
	const struct call base = {
		NNP_CMD_ALLTOALL, NNP_DTYPE_I32, 0, 0, COUNT,
	};
	struct call odd = base;
	uint32_t i;

	(void)state;
	odd.count = COUNT / 2;
	ring_up(ALL);
	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], alltoall(i, i == 1 ? odd.count : COUNT));
	fw_chips_run_one_thread(chips, N);
	expect_ends(&base, &odd, ring_failed, NNP_MISMATCH_COUNT);
	ring_down();
}

/*
 * Rank 1's alltoall segment for rank 3 crosses chip 2, which forwards it
 * as a copy: the copy carries rank 1's call, so rank 3, the first to take
 * a chunk of rank 1's, ends MISMATCH naming it, not INVALID_FIELD for its
 * length. Ranks 1 and 3 start; chip 2, with no command yet, relays; rank
 * 3 takes the copy. Ranks 0 and 2 start after rank 3's abort failed their
 * communicator: all three ABORTED.
 */
static void test_relayed_chunk_differs(void **state)
{
	const struct call odd = {
		NNP_CMD_ALLTOALL, NNP_DTYPE_I32, 0, 0, COUNT / 2,
	};
	uint32_t i;

	(void)state;
	ring_up(ALL);
	fw_chip_post(&chips[1], alltoall(1, odd.count));
	fw_chip_post(&chips[3], alltoall(3, COUNT));
	nnp_fw_run_queues(chips[1].h->fw);
	nnp_fw_run_queues(chips[3].h->fw);
	chips[2].h->real_clock = true;	/* as a chip with a command has */
	nnp_fw_run_queues(chips[2].h->fw);
	nnp_fw_run_queues(chips[3].h->fw);
	fw_chip_post(&chips[0], alltoall(0, COUNT));
	fw_chip_post(&chips[2], alltoall(2, COUNT));
	fw_chips_run_one_thread(chips, N);
	for (i = 0; i < N; i++) {
		uint16_t want = i == 3 ? NNP_STATUS_MISMATCH : NNP_STATUS_ABORTED;

		assert_int_equal(chips[i].status, want);
		assert_int_equal(cqe_detail(i), i != 3 ? 0 :
				 detail_of(1, &odd, NNP_MISMATCH_COUNT));
		assert_int_equal(fw_harness_comm_status(chips[i].h, CTX, COMM),
				 want);
	}
	ring_down();
}

/*
 * In a GROUP of two allreduces whose second differs on rank 1, the
 * group's completion is the member's: MISMATCH, naming rank 0's call.
 */
static void test_group_member_differs(void **state)
{
	struct call odd = alike;
	uint32_t i;

	(void)state;
	odd.op = NNP_OP_MIN;
	ring_up(ALL);
	for (i = 0; i < N; i++) {
		struct nnp_hw_queue_cmd c[] = {
			{ .opcode = NNP_CMD_GROUP, .len = 2, .cid = 5 },
			coll_cmd(i, &alike, 6),
			coll_cmd(i, i == 1 ? &odd : &alike, 7),
		};

		c[2].src_off += COUNT * 4;
		c[2].dst_off += COUNT * 4;
		post_watching(i, c, 3, 0);
	}
	fw_chips_run_one_thread(chips, N);
	expect_ends(&alike, &odd, ring_failed, NNP_MISMATCH_OP);
	ring_down();
}

/*
 * Rank @i's GROUP of @k allreduces of @c, flagged NNP_CMD_FLAG_FUSE if
 * @fuse (v1.25), each its own part of the buffers: posted.
 */
static void post_group(uint32_t i, uint32_t k, const struct call *c, bool fuse)
{
	struct nnp_hw_queue_cmd cmds[5] = {
		{ .opcode = NNP_CMD_GROUP, .len = k, .cid = 5 },
	};
	uint32_t j;

	for (j = 0; j < k; j++) {
		cmds[1 + j] = coll_cmd(i, c, (uint16_t)(6 + j));
		cmds[1 + j].flags = fuse ? NNP_CMD_FLAG_FUSE : 0;
		cmds[1 + j].src_off += j * COUNT * 4;
		cmds[1 + j].dst_off += j * COUNT * 4;
	}
	post_watching(i, cmds, 1 + k, 0);
}

/*
 * Two allreduces alike on every rank, flagged to run as one (v1.25) but
 * on rank 1: it ends MISMATCH at its second, naming rank 0's call and a
 * group that held other collectives (the others fused theirs).
 */
static void test_fused_against_apart(void **state)
{
	uint32_t i;

	(void)state;
	ring_up(ALL);
	for (i = 0; i < N; i++)
		post_group(i, 2, &alike, i != 1);
	fw_chips_run_one_thread(chips, N);
	expect_ends(&alike, &alike, ring_failed, NNP_MISMATCH_GROUP);
	ring_down();
}

/*
 * Groups that each run as one allreduce (v1.25) but hold other members:
 * rank 1 two allreduces of COUNT, the others four of COUNT / 2, the same
 * bytes in all. Rank 1's fused allreduce sends under its second label,
 * one the others' checks cover: rank 2 ends MISMATCH naming rank 1's
 * call, its count and group; the others ABORTED. Rank 0's chunks, under
 * its fourth label, are none of rank 1's.
 */
static void test_fused_groups_differ(void **state)
{
	static const uint16_t want[] = {
		NNP_STATUS_ABORTED, NNP_STATUS_ABORTED, NNP_STATUS_MISMATCH,
		NNP_STATUS_ABORTED,
	};
	struct call half = alike;
	uint32_t i;

	(void)state;
	half.count = COUNT / 2;
	ring_up(ALL);
	for (i = 0; i < N; i++)
		post_group(i, i == 1 ? 2 : 4, i == 1 ? &alike : &half, true);
	fw_chips_run_one_thread(chips, N);
	expect_ends(&half, &alike, want,
		    NNP_MISMATCH_COUNT | NNP_MISMATCH_GROUP);
	ring_down();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alike_calls_succeed),
		cmocka_unit_test(test_type_differs),
		cmocka_unit_test(test_check_switched_off_and_on),
		cmocka_unit_test(test_op_differs),
		cmocka_unit_test(test_count_differs),
		cmocka_unit_test(test_collective_differs),
		cmocka_unit_test(test_root_differs),
		cmocka_unit_test(test_two_roots_on_two),
		cmocka_unit_test(test_unread_chunk_fails_on_arrival),
		cmocka_unit_test(test_peer_ahead_is_no_mismatch),
		cmocka_unit_test(test_exchange_count_differs),
		cmocka_unit_test(test_relayed_chunk_differs),
		cmocka_unit_test(test_group_member_differs),
		cmocka_unit_test(test_fused_against_apart),
		cmocka_unit_test(test_fused_groups_differ),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
