// SPDX-License-Identifier: MIT
/*
 * What the check of the ranks' calls (hardware 1.16) costs the firmware
 * alone: 8-byte allreduces on a ring of 4 in-process chips run on one
 * thread (the host tests' harness), in BLOCKS blocks of REPS each, the
 * check on and off in turns (nnp_fw_set_call_check()), every result
 * checked. No guest, doorbell, interrupt or scheduler in the time, so
 * the check's share here bounds its share of an allreduce in a VM,
 * which spends more on everything else; make bench's VM rows of the
 * same (call_check.sh) vary more between runs than the 2% asked of it.
 * Prints: "call-check-fw on_us=T off_us=T ratio=M blocks=B reps=R": the
 * median time of one allreduce (all 4 chips' parts) each way, and the
 * median of the ratios of each block on to the block off before it, so
 * that the host's drift and a stray slow block weigh little.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fw_ring.h"
#include "fw_timing.h"

#define BLOCKS	200
#define REPS	100

/* REPS allreduces of two int32 sums on every chip, each one checked. */
static void allreduces(void)
{
	uint32_t i, k;

	for (k = 0; k < REPS; k++) {
		for (i = 0; i < N; i++)
			fw_chip_post(&chips[i], (struct nnp_hw_queue_cmd){
				.opcode = NNP_CMD_ALLREDUCE, .cid = 5, .len = 2,
				.src_key = keys[i], .src_off = SRC,
				.dst_key = keys[i], .dst_off = DST,
				.value = NNP_COLL_VALUE(NNP_DTYPE_I32,
							NNP_OP_SUM, COMM, 0),
			});
		fw_chips_run_one_thread(chips, N);
		for (i = 0; i < N; i++)
			assert_int_equal(chips[i].status, NNP_STATUS_SUCCESS);
	}
}

static void time_check(void **state)
{
	static double t[2][BLOCKS / 2], ratio[BLOCKS / 2];
	uint32_t b, i;

	(void)state;
	ring_up(ALL);
	allreduces();	/* warm: buffers pooled, caches filled */
	for (b = 0; b < BLOCKS; b++) {
		bool on = b % 2;
		double t0;

		for (i = 0; i < N; i++)
			nnp_fw_set_call_check(chips[i].h->fw, on);
		t0 = now_s();
		allreduces();
		t[on][b / 2] = (now_s() - t0) * 1e6 / REPS;
	}
	ring_down();
	for (b = 0; b < BLOCKS / 2; b++)
		ratio[b] = t[1][b] / t[0][b];
	printf("call-check-fw on_us=%.4f off_us=%.4f ratio=%.4f blocks=%d reps=%d\n",
	       median(t[1], BLOCKS / 2), median(t[0], BLOCKS / 2),
	       median(ratio, BLOCKS / 2), BLOCKS, REPS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(time_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
