// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: ranks that call one collective differently fail
 * fast (v1.16), on a ring of 4 in-process chips.
 *
 * In detail (docs/testing.md has the summary): rank 1 calls an allreduce
 * that differs from the other ranks' in its type, its op or its count, a
 * broadcast from another root, or a broadcast where they call an
 * allreduce. Run on one thread, in chip order: rank 1 takes rank 0's
 * first chunk and ends MISMATCH, its completion naming rank 0's call and
 * the fields that differ; rank 2 takes rank 1's first chunk and ends
 * MISMATCH naming rank 1's; ranks 0 and 3 end ABORTED; no rank's
 * destination is reduced into, and the communicator is failed (the next
 * allreduce ends ABORTED). Alike calls all succeed. An alltoall whose
 * count differs on rank 1, and a GROUP whose second allreduce differs on
 * rank 1, end the same way, the group's completion naming the member's
 * peer.
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

/* Every rank posts its call (rank 1 @odd, the others @base): expect_ends(). */
static void expect_mismatch(const struct call *base, const struct call *odd,
			    const uint16_t want[], uint32_t fields)
{
	uint32_t i;

	ring_up(ALL);
	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], coll_cmd(i, i == 1 ? odd : base, 5));
	fw_chips_run_one_thread(chips, N);
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
	for (i = 0; i < N; i++)
		fw_chip_post(&chips[i], coll_cmd(i, &alike, 5));
	fw_chips_run_one_thread(chips, N);
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

static void test_root_differs(void **state)
{
	const struct call base = {
		NNP_CMD_BROADCAST, NNP_DTYPE_I32, 0, 0, COUNT,
	};
	struct call odd = base;
	/* The root's part, sending, ends before rank 1's abort comes. */
	const uint16_t want[] = {
		NNP_STATUS_SUCCESS, NNP_STATUS_MISMATCH, NNP_STATUS_ABORTED,
		NNP_STATUS_ABORTED,
	};

	(void)state;
	odd.root = 2;
	expect_mismatch(&base, &odd, want, NNP_MISMATCH_ROOT);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alike_calls_succeed),
		cmocka_unit_test(test_type_differs),
		cmocka_unit_test(test_op_differs),
		cmocka_unit_test(test_count_differs),
		cmocka_unit_test(test_collective_differs),
		cmocka_unit_test(test_root_differs),
		cmocka_unit_test(test_exchange_count_differs),
		cmocka_unit_test(test_group_member_differs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
