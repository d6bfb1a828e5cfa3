// SPDX-License-Identifier: MIT
/*
 * A link taken down in the middle of collectives (by tests/vm/link_down.sh
 * from the QEMU monitor, on seeing "LINKTEST running"): every rank's
 * collective fails with the link's status, all within a bounded time and
 * with no hang; once the link is back ("LINKTEST failed" makes the host
 * bring it up), reset streams and a new communicator work again, exactly.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "ring_ranks.h"

#define COUNT	(2u << 20)	/* 8 MiB of f32: each allreduce takes a while */
#define BOUND_S	10.0		/* from the first rank failing to the last */

FIXTURE(ring) {
	struct ring_ranks rr;
};

FIXTURE_SETUP(ring)
{
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_open(&self->rr, GUEST_CHIPS, COUNT));
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->rr.dev, self->rr.n,
						 self->rr.comm));
}

FIXTURE_TEARDOWN(ring)
{
	ring_ranks_close(&self->rr);
}

TEST_F_TIMEOUT(ring, link_down_fails_every_rank_then_recovers, 300)
{
	bool failed[RING_MAX_RANKS] = { false };
	double first = 0, last = 0, start = now_s();
	int n = self->rr.n, left = n, exact = 0, r;
	bool kept;

	printf("# LINKTEST running\n");
	fflush(stdout);
	/* Ranks that have not failed yet go on; the others are stopped. */
	while (left && now_s() - start < 120) {
		for (r = 0; r < n; r++)
			if (!failed[r])
				ASSERT_EQ(NNP_SUCCESS, ring_allreduce(&self->rr, r));
		for (r = 0; r < n; r++) {
			struct nnp_stream_error e = { .size = sizeof(e) };
			nnp_result_t res;

			if (failed[r])
				continue;
			res = nnp_stream_synchronize(self->rr.s[r]);
			if (res == NNP_SUCCESS)
				continue;
			ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, res);
			ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->rr.s[r], &e));
			TH_LOG("rank %d: %s (status 0x%x)", r, e.what, e.status);
			/* LINK_DOWN, PEER_TIMEOUT or ABORTED (docs/hw-interface.md) */
			EXPECT_TRUE(e.status == 0x13 || e.status == 0x14 || e.status == 0x15);
			EXPECT_EQ(0, strncmp(e.what, e.status == 0x13 ? "an inter-chip link" :
					     e.status == 0x14 ? "a peer chip" : "another rank",
					     10));
			failed[r] = true;
			left--;
			last = now_s();
			if (!first)
				first = last;
		}
	}
	ASSERT_EQ(0, left) TH_LOG("the link never went down");
	/* link_down.sh's "within the bound" is this line's "inside". */
	kept = last - first < BOUND_S;
	printf("# LINKTEST every rank failed within %.2f s of the first: %s the %.0f s bound\n",
	       last - first, kept ? "inside" : "OUTSIDE", BOUND_S);
	EXPECT_TRUE(kept);
	printf("# LINKTEST failed\n");
	fflush(stdout);

	start = now_s();
	while (!ring_links_up(self->rr.dev, n) && now_s() - start < 60)
		usleep(100 * 1000);
	ASSERT_TRUE(ring_links_up(self->rr.dev, n));

	/* Streams reset and a new communicator: exact results again. */
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_restart(&self->rr, -1));
	for (r = 0; r < n; r++) {
		int errors = ring_rank_errors(&self->rr, r);

		EXPECT_EQ(0, errors) TH_LOG("rank %d", r);
		exact += !errors;
	}
	/* For the host to check this part by itself (tests/vm/link_down.sh). */
	printf("# LINKTEST after the link came back: %d of %d ranks exact\n", exact, n);
}

TEST_HARNESS_MAIN
