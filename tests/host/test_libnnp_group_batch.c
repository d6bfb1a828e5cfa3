// SPDX-License-Identifier: MIT
/*
 * Which of a group's collectives libnnp runs at once as one GROUP
 * (group_batch.c, hardware interface 1.14).
 *
 * In detail (docs/testing.md has the summary): small ring collectives on
 * memory of their own join one batch, and flush as a GROUP then its
 * members in the order issued, a lone one as itself; one that writes what
 * a member reads or writes, or reads what a member writes, is refused,
 * while two that only read one buffer join, and a member in the gap
 * between two members' bytes joins where one of a second key that a
 * member writes is refused (the batch's boxes spare only the look at
 * each member); exchanges, copies and
 * collectives over 64 KiB are refused; the batch takes 1 MiB of what its
 * members may send (8 members of 64 KiB), 384 packets (27 allreduces of
 * 8 ranks) and its cap of members, and none on a device without it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "group_batch.h"

#define MAXB	64

static const struct nnp_hw_queue_cmd *members[MAXB];
static struct coll_span spans[2 * MAXB];
static struct coll_batch b;

static void batch(uint32_t cap)
{
	nnp_coll_batch_init(&b, cap, members, spans, spans + MAXB);
}

/* An allreduce (or @opcode) of @count floats from key 1 @src to key 2 @dst. */
static struct nnp_hw_queue_cmd coll(uint8_t opcode, uint64_t count, uint64_t src,
				    uint64_t dst)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = opcode, .len = count, .src_key = 1, .src_off = src,
		.dst_key = 2, .dst_off = dst,
		.value = NNP_COLL_VALUE(NNP_DTYPE_F32, NNP_OP_SUM, 7, 0),
	};
}

static void test_disjoint_small_collectives_join(void **state)
{
	struct nnp_hw_queue_cmd c[3] = {
		coll(NNP_CMD_ALLREDUCE, 2, 0, 0),
		coll(NNP_CMD_BROADCAST, 2, 8, 8),
		coll(NNP_CMD_ALLGATHER, 2, 16, 16),
	}, out[8];

	(void)state;
	batch(MAXB);
	assert_true(nnp_coll_batch_add(&b, &c[0], 4));
	assert_true(nnp_coll_batch_add(&b, &c[1], 4));
	assert_true(nnp_coll_batch_add(&b, &c[2], 4));
	assert_int_equal(nnp_coll_batch_flush(&b, out, 1), 5);
	assert_int_equal(out[1].opcode, NNP_CMD_GROUP);
	assert_int_equal(out[1].len, 3);
	assert_memory_equal(&out[2], c, sizeof(c));
	assert_int_equal(b.n, 0);
	/* A lone member goes as itself, no GROUP. */
	assert_true(nnp_coll_batch_add(&b, &c[1], 4));
	assert_int_equal(nnp_coll_batch_flush(&b, out, 0), 1);
	assert_memory_equal(&out[0], &c[1], sizeof(c[1]));
	assert_int_equal(nnp_coll_batch_flush(&b, out, 0), 0);
}

static void test_shared_memory_orders(void **state)
{
	/* Allgather of 2 floats on 4 ranks writes 32 bytes from 0. */
	struct nnp_hw_queue_cmd first = coll(NNP_CMD_ALLGATHER, 2, 0, 0);
	struct nnp_hw_queue_cmd twice = coll(NNP_CMD_ALLREDUCE, 2, 100, 24);
	struct nnp_hw_queue_cmd after = coll(NNP_CMD_ALLREDUCE, 2, 100, 32);
	struct nnp_hw_queue_cmd reads = coll(NNP_CMD_ALLREDUCE, 2, 0, 200);
	struct nnp_hw_queue_cmd in_place = coll(NNP_CMD_ALLREDUCE, 2, 40, 40);

	(void)state;
	batch(MAXB);
	assert_true(nnp_coll_batch_add(&b, &first, 4));
	/* Writes bytes 24-31 of what the allgather writes. */
	assert_false(nnp_coll_batch_add(&b, &twice, 4));
	/* Starts where it ends; reads key 1 at 100, as the next does. */
	assert_true(nnp_coll_batch_add(&b, &after, 4));
	assert_true(nnp_coll_batch_add(&b, &reads, 4));
	/* Reads key 2 at 32, which "after" writes. */
	reads.src_key = 2;
	reads.src_off = 32;
	reads.dst_off = 300;
	assert_false(nnp_coll_batch_add(&b, &reads, 4));
	/* Writes key 1 at 100, which "after" reads. */
	in_place.src_key = in_place.dst_key = 1;
	in_place.src_off = in_place.dst_off = 100;
	assert_false(nnp_coll_batch_add(&b, &in_place, 4));
	assert_int_equal(b.n, 3);
}

/*
 * What the batch's members span as a whole (its boxes) only spares the
 * look at each member: a member in a gap between two joins, one that
 * overlaps a member of the second key in a batch of two refuses, and a
 * new batch after a flush knows nothing of the last.
 */
static void test_boxes_only_spare_the_scan(void **state)
{
	struct nnp_hw_queue_cmd low = coll(NNP_CMD_ALLREDUCE, 2, 0, 0);
	struct nnp_hw_queue_cmd high = coll(NNP_CMD_ALLREDUCE, 2, 16, 16);
	struct nnp_hw_queue_cmd gap = coll(NNP_CMD_ALLREDUCE, 2, 8, 8);
	/* Of key 3: [0] writes it at 64-71, [1] at 68-75, [2] reads 60-67. */
	struct nnp_hw_queue_cmd k3[3] = {
		coll(NNP_CMD_ALLREDUCE, 2, 64, 64), coll(NNP_CMD_ALLREDUCE, 2, 200, 68),
		coll(NNP_CMD_ALLREDUCE, 2, 60, 300),
	}, out[8];

	(void)state;
	k3[0].dst_key = k3[1].dst_key = k3[2].src_key = 3;
	batch(MAXB);
	assert_true(nnp_coll_batch_add(&b, &low, 4));
	assert_true(nnp_coll_batch_add(&b, &high, 4));
	/* Inside both boxes, on no member's bytes. */
	assert_true(nnp_coll_batch_add(&b, &gap, 4));
	/* A second key written: the write box is mixed. */
	assert_true(nnp_coll_batch_add(&b, &k3[0], 4));
	/* Both touch what k3[0] writes. */
	assert_false(nnp_coll_batch_add(&b, &k3[1], 4));
	assert_false(nnp_coll_batch_add(&b, &k3[2], 4));
	assert_int_equal(b.n, 4);
	assert_int_equal(nnp_coll_batch_flush(&b, out, 0), 5);
	/* A new batch: k3[1] alone, then a read of key 3 clear of it. */
	assert_true(nnp_coll_batch_add(&b, &k3[1], 4));
	k3[2].src_off = 0;
	assert_true(nnp_coll_batch_add(&b, &k3[2], 4));
	assert_false(nnp_coll_batch_add(&b, &k3[0], 4));
}

static void test_only_small_ring_collectives(void **state)
{
	struct nnp_hw_queue_cmd big = coll(NNP_CMD_ALLREDUCE, (64u << 10) / 4 + 1, 0, 0);
	struct nnp_hw_queue_cmd most = coll(NNP_CMD_ALLREDUCE, (64u << 10) / 4, 0, 0);
	/* Reduce-scatter of 16 KiB a rank on 4 ranks reads 64 KiB: fine. */
	struct nnp_hw_queue_cmd rs = coll(NNP_CMD_REDUCE_SCATTER, 4096, 1 << 20, 1 << 20);
	struct nnp_hw_queue_cmd rs_big = coll(NNP_CMD_REDUCE_SCATTER, 4097, 2 << 20, 2 << 20);
	uint8_t no[] = { NNP_CMD_ALLTOALL, NNP_CMD_GATHER, NNP_CMD_SCATTER,
			 NNP_CMD_COPY, NNP_CMD_SEND, NNP_CMD_GROUP };
	size_t i;

	(void)state;
	batch(MAXB);
	for (i = 0; i < sizeof(no); i++) {
		struct nnp_hw_queue_cmd c = coll(no[i], 2, 4 << 20, 4 << 20);

		assert_false(nnp_coll_batch_add(&b, &c, 4));
	}
	assert_false(nnp_coll_batch_add(&b, &big, 4));
	assert_true(nnp_coll_batch_add(&b, &most, 4));
	assert_true(nnp_coll_batch_add(&b, &rs, 4));
	assert_false(nnp_coll_batch_add(&b, &rs_big, 4));
	/* Nothing on a device that runs no collectives in a GROUP. */
	batch(0);
	assert_false(nnp_coll_batch_add(&b, &most, 4));
}

static void test_what_may_be_in_flight(void **state)
{
	struct nnp_hw_queue_cmd c[32];
	uint32_t i;

	(void)state;
	for (i = 0; i < 32; i++)
		c[i] = coll(NNP_CMD_ALLREDUCE, (64u << 10) / 4, (uint64_t)i << 20,
			    (uint64_t)i << 20);
	/* 1 MiB: 8 members that may each send twice 64 KiB. */
	batch(MAXB);
	for (i = 0; i < 8; i++)
		assert_true(nnp_coll_batch_add(&b, &c[i], 4));
	assert_false(nnp_coll_batch_add(&b, &c[8], 4));
	/* 384 packets: 27 allreduces of 8 ranks, 14 steps each. */
	batch(MAXB);
	for (i = 0; i < 32; i++)
		c[i].len = 2;
	for (i = 0; i < 27; i++)
		assert_true(nnp_coll_batch_add(&b, &c[i], 8));
	assert_false(nnp_coll_batch_add(&b, &c[27], 8));
	/* The GROUP's length the queue takes. */
	batch(5);
	for (i = 0; i < 5; i++)
		assert_true(nnp_coll_batch_add(&b, &c[i], 2));
	assert_false(nnp_coll_batch_add(&b, &c[5], 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_disjoint_small_collectives_join),
		cmocka_unit_test(test_shared_memory_orders),
		cmocka_unit_test(test_boxes_only_spare_the_scan),
		cmocka_unit_test(test_only_small_ring_collectives),
		cmocka_unit_test(test_what_may_be_in_flight),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
