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

#include "coll_data.h"
#include "guest_env.h"
#include "kselftest_harness.h"

#define MAXDEV	8
#define COUNT	(2u << 20)	/* 8 MiB of f32: each allreduce takes a while */
#define BOUND_S	10.0		/* from the first rank failing to the last */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static bool links_up(nnp_device_t **dev, int n)
{
	struct nnp_port_info p[NNP_MAX_PORTS];
	unsigned int np, i;
	int r;

	for (r = 0; r < n; r++) {
		if (nnp_device_get_ports(dev[r], p, NNP_MAX_PORTS, &np) != NNP_SUCCESS)
			return false;
		for (i = 0; i < np; i++)
			if ((p[i].state & NNP_LINK_WIRED) && !(p[i].state & NNP_LINK_UP))
				return false;
	}
	return true;
}

FIXTURE(ring) {
	int n;
	nnp_device_t *dev[MAXDEV];
	nnp_stream_t *s[MAXDEV];
	nnp_comm_t *comm[MAXDEV];
	nnp_mem_t *buf[MAXDEV], *host[MAXDEV];
};

FIXTURE_SETUP(ring)
{
	int r;

	self->n = GUEST_CHIPS;
	ASSERT_GE(self->n, 2);
	for (r = 0; r < self->n; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(r, &self->dev[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[r], &self->s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_DEVICE,
						     COUNT * 4, 0, &self->buf[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_HOST,
						     COUNT * 4, 0, &self->host[r]));
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->dev, self->n, self->comm));
}

FIXTURE_TEARDOWN(ring)
{
	int r;

	for (r = 0; r < self->n; r++) {
		nnp_comm_destroy(self->comm[r]);
		nnp_mem_free(self->buf[r]);
		nnp_mem_free(self->host[r]);
		nnp_stream_destroy(self->s[r]);
		nnp_device_close(self->dev[r]);
	}
}

TEST_F_TIMEOUT(ring, link_down_fails_every_rank_then_recovers, 300)
{
	bool failed[MAXDEV] = { false };
	double first = 0, last = 0, start = now_s();
	int n = self->n, left = n, r;

	printf("# LINKTEST running\n");
	fflush(stdout);
	/* Ranks that have not failed yet go on; the others are stopped. */
	while (left && now_s() - start < 120) {
		for (r = 0; r < n; r++)
			if (!failed[r])
				ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[r], 0,
					  self->buf[r], 0, COUNT, NNP_FLOAT32, NNP_SUM,
					  self->comm[r], self->s[r]));
		for (r = 0; r < n; r++) {
			struct nnp_stream_error e;
			nnp_result_t res;

			if (failed[r])
				continue;
			res = nnp_stream_synchronize(self->s[r]);
			if (res == NNP_SUCCESS)
				continue;
			ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, res);
			ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->s[r], &e));
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
	TH_LOG("every rank failed within %.2f s of the first", last - first);
	EXPECT_LT(last - first, BOUND_S);
	printf("# LINKTEST failed\n");
	fflush(stdout);

	start = now_s();
	while (!links_up(self->dev, n) && now_s() - start < 60)
		usleep(100 * 1000);
	ASSERT_TRUE(links_up(self->dev, n));

	/* Streams reset and a new communicator: exact results again. */
	for (r = 0; r < n; r++) {
		float *h;
		size_t i;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_reset(self->s[r]));
		nnp_comm_destroy(self->comm[r]);
		self->comm[r] = NULL;
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(self->host[r], (void **)&h));
		for (i = 0; i < COUNT; i++)
			h[i] = (float)input(r, i, NNP_SUM);
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s[r], self->buf[r], 0,
							self->host[r], 0, COUNT * 4));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->dev, n, self->comm));
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[r], 0, self->buf[r], 0,
						     COUNT, NNP_FLOAT32, NNP_SUM,
						     self->comm[r], self->s[r]));
	for (r = 0; r < n; r++) {
		size_t i, bad = 0;
		float *h;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s[r], self->host[r], 0,
							self->buf[r], 0, COUNT * 4));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
		nnp_mem_map(self->host[r], (void **)&h);
		for (i = 0; i < COUNT; i++)
			bad += h[i] != (float)reduced(NNP_SUM, n, i);
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
	}
}

TEST_HARNESS_MAIN
