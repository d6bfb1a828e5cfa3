// SPDX-License-Identifier: MIT
/*
 * Firmware simulator: a GROUP's allreduces of one communicator, all
 * flagged NNP_CMD_FLAG_FUSE and of one type, op and count of at most
 * 64 KiB, run as one allreduce (fw_fuse.c, v1.25), on a ring of 4
 * in-process chips.
 *
 * In detail (docs/testing.md has the summary): eight int32 sums of 16
 * elements, in place and out of place in turns, are exact on every
 * chip, each member completing with its own id after the GROUP, and each
 * chip sends 2(n - 1) packets, one allreduce's (eight apart: 48); five
 * float averages of 3 elements, a count no multiple of the ranks, are
 * exact; twenty members of 64 KiB run as two allreduces, 1 MiB of 16 and
 * the 4 left (30 packets a chip, not 120); a member of 64 KiB and 4
 * bytes, or members of two counts, are not fused (their packets those of
 * each on its own), nor are eight not flagged (48 packets); the flag on
 * a BROADCAST, or another flag on an ALLREDUCE, is refused INVALID_FIELD
 * with nothing sent; and the eight sums with every chip on a thread of
 * its own, 20 times over.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"

#define MEMBERS_MAX	24
#define GUARD		0xee

/* One member of a group: @count elements of @dtype, @op; in place or not. */
struct member {
	uint64_t count;
	bool in_place;
};

static uint8_t dtype = NNP_DTYPE_I32, redop = NNP_OP_SUM;
static uint8_t flags = NNP_CMD_FLAG_FUSE;
static bool threaded;

/* Where member @j's input and output lie: each member its own part. */
static uint64_t part_off(const struct member *m, uint32_t j)
{
	uint64_t off = 0, k;

	for (k = 0; k < j; k++)
		off += m[k].count * 4;
	return off;
}

static uint64_t in_off(const struct member *m, uint32_t j)
{
	return (m[j].in_place ? DST : SRC) + part_off(m, j);
}

/* Element @k of member @j's input on chip @i, and what all ranks make of it. */
static int32_t input_i32(uint32_t i, uint32_t j, uint64_t k)
{
	return (int32_t)(i * 1000003u + j * 1009u + (uint32_t)k);
}

static int32_t sum_i32(uint32_t j, uint64_t k)
{
	int32_t s = 0;
	uint32_t i;

	for (i = 0; i < N; i++)
		s += input_i32(i, j, k);
	return s;
}

/* Floats whose average over the ranks is exact: N (i + 1) plus @j and @k. */
static float input_f32(uint32_t i, uint32_t j, uint64_t k)
{
	return (float)(N * (i + 1) + j * 16 + k);
}

static float avg_f32(uint32_t j, uint64_t k)
{
	return (float)(N * (N + 1) / 2 + j * 16 + k);
}

static uint64_t tx_packets(uint32_t i)
{
	return port_info(i, 0).tx_packets + port_info(i, 1).tx_packets;
}

/*
 * Every chip posts GROUP of the @n members @m (cids 10 + j) and runs;
 * each chip's result is checked, and each its packets sent returned in
 * @sent (the same on every chip, checked).
 */
static uint64_t run_group(const struct member *m, uint32_t n)
{
	struct nnp_hw_queue_cmd c[MEMBERS_MAX + 1];
	uint64_t end = part_off(m, n), k, sent = 0;
	uint32_t first[MAXR], i, j;

	for (i = 0; i < N; i++) {
		uint8_t *mem = chips[i].h->dev_mem;

		memset(mem + DST, GUARD, end + 64);
		for (j = 0; j < n; j++) {
			for (k = 0; k < m[j].count; k++) {
				uint8_t *at = mem + in_off(m, j) + 4 * k;

				if (dtype == NNP_DTYPE_F32)
					*(float *)at = input_f32(i, j, k);
				else
					*(int32_t *)at = input_i32(i, j, k);
			}
		}
		c[0] = (struct nnp_hw_queue_cmd){
			.opcode = NNP_CMD_GROUP, .len = n, .cid = 9,
		};
		for (j = 0; j < n; j++)
			c[1 + j] = (struct nnp_hw_queue_cmd){
				.opcode = NNP_CMD_ALLREDUCE, .len = m[j].count,
				.cid = (uint16_t)(10 + j),
				.src_key = keys[i], .src_off = in_off(m, j),
				.dst_key = keys[i], .dst_off = DST + part_off(m, j),
				.value = NNP_COLL_VALUE(dtype, redop, COMM, 0),
				.flags = flags,
			};
		first[i] = chips[i].h->q_tail[0];
		post_last_watched(i, c, n + 1, threaded);
	}
	run_chips(threaded);
	for (i = 0; i < N; i++) {
		const uint8_t *out = chips[i].h->dev_mem + DST;

		assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
		assert_int_equal(cqe(i, first[i])->cid, 9);
		for (j = 0; j < n; j++) {
			const struct nnp_hw_cqe *e = cqe(i, (first[i] + 1 + j) % H_QDEPTH);
			const uint8_t *at = out + part_off(m, j);

			assert_int_equal(e->cid, 10 + j);
			assert_int_equal(e->status, NNP_STATUS_SUCCESS);
			for (k = 0; k < m[j].count; k++) {
				if (dtype == NNP_DTYPE_F32)
					assert_true(((const float *)at)[k] == avg_f32(j, k));
				else
					assert_int_equal(((const int32_t *)at)[k], sum_i32(j, k));
			}
		}
		assert_int_equal(out[end], GUARD);
		if (i)
			assert_int_equal(tx_packets(i), sent);
		sent = tx_packets(i);
	}
	return sent;
}

/* @n members of @count elements, in place every other one. */
static uint64_t run_alike(uint32_t n, uint64_t count)
{
	struct member m[MEMBERS_MAX];
	uint32_t j;

	for (j = 0; j < n; j++)
		m[j] = (struct member){ .count = count, .in_place = j % 2 };
	return run_group(m, n);
}

/* Eight small sums: exact, one allreduce's packets (a chunk a ring step). */
static void test_small_sums_run_as_one(void **state)
{
	(void)state;
	ring_up(ALL);
	assert_int_equal(run_alike(8, 16), 2 * (N - 1));
	ring_down();
}

/* Averages of a count no multiple of the ranks: 15 elements, segments unequal. */
static void test_float_averages(void **state)
{
	(void)state;
	dtype = NNP_DTYPE_F32;
	redop = NNP_OP_AVG;
	ring_up(ALL);
	assert_int_equal(run_alike(5, 3), 2 * (N - 1));
	ring_down();
	dtype = NNP_DTYPE_I32;
	redop = NNP_OP_SUM;
}

/*
 * Twenty members of 64 KiB: one allreduce of 16 (1 MiB, a ring step of
 * 256 KiB in four chunks of 64 KiB: 24 packets) and one of the 4 left
 * (256 KiB: 6). Each on its own would send 6.
 */
static void test_members_past_a_mebibyte_run_in_two(void **state)
{
	(void)state;
	ring_up(ALL);
	assert_int_equal(run_alike(20, 16384), 4 * 2 * (N - 1) + 2 * (N - 1));
	ring_down();
}

/* Not fused: a member past 64 KiB, or members of two counts. */
static void test_unlike_members_run_apart(void **state)
{
	const struct member two_counts[] = {
		{ .count = 16 }, { .count = 16 }, { .count = 8, .in_place = true },
	};

	(void)state;
	ring_up(ALL);
	assert_int_equal(run_alike(3, 16385), 3 * 2 * (N - 1));
	assert_int_equal(run_group(two_counts, 3) - 3 * 2 * (N - 1),
			 3 * 2 * (N - 1));
	ring_down();
}

/* Not flagged NNP_CMD_FLAG_FUSE: each on its own, as before 1.25. */
static void test_unflagged_run_apart(void **state)
{
	(void)state;
	flags = 0;
	ring_up(ALL);
	assert_int_equal(run_alike(8, 16), 8 * 2 * (N - 1));
	ring_down();
	flags = NNP_CMD_FLAG_FUSE;
}

/* Chip 0's command @c alone: refused INVALID_FIELD, nothing sent. */
static void refused(struct nnp_hw_queue_cmd c)
{
	ring_up(ALL);
	post_watching(0, &c, 1, 0);
	fw_chips_run_one_thread(chips, 1);
	assert_int_equal(chips[0].status, NNP_STATUS_INVALID_FIELD);
	assert_int_equal(tx_packets(0), 0);
	ring_down();
}

/* The flag is an ALLREDUCE's alone, and no other flag is defined. */
static void test_flags_refused(void **state)
{
	struct nnp_hw_queue_cmd c = {
		.opcode = NNP_CMD_BROADCAST, .len = 16, .flags = NNP_CMD_FLAG_FUSE,
		.dst_key = keys[0], .dst_off = DST,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, 0, COMM, 1),
	};

	(void)state;
	refused(c);
	c.opcode = NNP_CMD_ALLREDUCE;
	c.src_key = keys[0];
	c.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0);
	c.flags = NNP_CMD_FLAG_FUSE << 1;
	refused(c);
}

/* Each chip on a thread of its own: fused, exact, 20 times over. */
static void test_fused_on_threads(void **state)
{
	uint64_t before = 0;
	int round;

	(void)state;
	threaded = true;
	ring_up(ALL);
	for (round = 0; round < 20; round++) {
		uint64_t sent = run_alike(8, 16);

		assert_int_equal(sent - before, 2 * (N - 1));
		before = sent;
	}
	ring_down();
	threaded = false;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_sums_run_as_one),
		cmocka_unit_test(test_float_averages),
		cmocka_unit_test(test_members_past_a_mebibyte_run_in_two),
		cmocka_unit_test(test_unlike_members_run_apart),
		cmocka_unit_test(test_unflagged_run_apart),
		cmocka_unit_test(test_flags_refused),
		cmocka_unit_test(test_fused_on_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
