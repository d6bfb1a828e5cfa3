// SPDX-License-Identifier: MIT
/*
 * Issue 44's G1 in the firmware alone: a GROUP of MEMBERS 8-byte
 * allreduces against one, on a ring of 4 in-process chips run on one
 * thread (the host tests' harness, whose queue of 64 takes a GROUP of at
 * most 31). No guest, doorbell, interrupt or scheduler in the time: what
 * is left is the firmware's own work per member, which make bench's G1
 * (32 grouped in a VM) cannot go below. BLOCKS blocks of REPS each: one,
 * the group with each member on its own, and the group flagged to run as
 * one allreduce (NNP_CMD_FLAG_FUSE, hardware interface 1.25), in turns,
 * every completion checked.
 * Prints: "group-fw one_us=T group_us=T ratio=M fused_us=T fused_ratio=M
 * members=K blocks=B reps=R": the median time of one allreduce and of
 * each group (all 4 chips' parts), and the median of the ratios of each
 * group block to the single block before it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fw_ring.h"
#include "fw_timing.h"

#define BLOCKS	150
#define REPS	50
#define MEMBERS	(H_QDEPTH / 2 - 1)

/* Member @k (0: the one alone) of chip @i: two int32 sums of its own. */
static struct nnp_hw_queue_cmd member(uint32_t i, uint32_t k, uint8_t flags)
{
	return (struct nnp_hw_queue_cmd){
		.opcode = NNP_CMD_ALLREDUCE, .cid = (uint16_t)(k + 1), .len = 2,
		.flags = flags,
		.src_key = keys[i], .src_off = SRC + 8 * k,
		.dst_key = keys[i], .dst_off = DST + 8 * k,
		.value = NNP_COLL_VALUE(NNP_DTYPE_I32, NNP_OP_SUM, COMM, 0),
	};
}

/*
 * REPS times on every chip: @n allreduces, grouped if @n > 1, with
 * @flags; checked.
 */
static void run(uint32_t n, uint8_t flags)
{
	struct nnp_hw_queue_cmd c[MEMBERS + 1];
	uint32_t first[MAXR], i, k, r;

	for (r = 0; r < REPS; r++) {
		for (i = 0; i < N; i++) {
			uint32_t m = n > 1;

			c[0] = (struct nnp_hw_queue_cmd){
				.opcode = NNP_CMD_GROUP, .len = n,
			};
			for (k = 0; k < n; k++)
				c[m + k] = member(i, k, flags);
			first[i] = chips[i].h->q_tail[0];
			post_watching(i, c, n + m, n + m - 1);
		}
		fw_chips_run_one_thread(chips, N);
		for (i = 0; i < N; i++)
			for (k = 0; k < n + (n > 1); k++)
				assert_int_equal(cqe_status(i, (first[i] + k) % H_QDEPTH),
						 NNP_STATUS_SUCCESS);
	}
}

static void time_group(void **state)
{
	static double t[3][BLOCKS / 3], ratio[2][BLOCKS / 3];
	static const uint8_t flags[3] = { 0, 0, NNP_CMD_FLAG_FUSE };
	uint32_t b, i, k;

	(void)state;
	ring_up(ALL);
	for (i = 0; i < N; i++)
		for (k = 0; k < MEMBERS; k++)
			memcpy(chips[i].h->dev_mem + SRC + 8 * k,
			       (int32_t[2]){ (int32_t)(i + k), -(int32_t)i }, 8);
	for (b = 1; b < 3; b++) {
		/* Warm: buffers pooled, caches filled; exact. */
		for (i = 0; i < N; i++)
			memset(chips[i].h->dev_mem + DST, 0, 8 * MEMBERS);
		run(MEMBERS, flags[b]);
		for (i = 0; i < N; i++)
			for (k = 0; k < MEMBERS; k++)
				assert_memory_equal(chips[i].h->dev_mem + DST + 8 * k,
						    ((int32_t[2]){ (int32_t)(6 + 4 * k), -6 }), 8);
	}
	for (b = 0; b < BLOCKS / 3 * 3; b++) {
		uint32_t kind = b % 3;
		double t0 = now_s();

		run(kind ? MEMBERS : 1, flags[kind]);
		t[kind][b / 3] = (now_s() - t0) * 1e6 / REPS;
	}
	ring_down();
	for (b = 0; b < BLOCKS / 3; b++) {
		ratio[0][b] = t[1][b] / t[0][b];
		ratio[1][b] = t[2][b] / t[0][b];
	}
	printf("group-fw one_us=%.3f group_us=%.3f ratio=%.3f fused_us=%.3f fused_ratio=%.3f members=%d blocks=%d reps=%d\n",
	       median(t[0], BLOCKS / 3), median(t[1], BLOCKS / 3),
	       median(ratio[0], BLOCKS / 3), median(t[2], BLOCKS / 3),
	       median(ratio[1], BLOCKS / 3), MEMBERS, BLOCKS / 3 * 3, REPS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(time_group),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
