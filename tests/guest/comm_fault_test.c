// SPDX-License-Identifier: MIT
/*
 * Communicator faults on a ring of 3 (tests/vm/comm_fault.sh).
 *
 * A late peer is not a dead peer:
 * one rank reaching an allreduce 5 s after the others, longer than the
 * device's old fixed 2 s, completes it exactly on every rank under the
 * default NNP_COLL_TIMEOUT_S. A short NNP_COLL_TIMEOUT_S still fires, with
 * PEER_TIMEOUT (0x14) on the ranks left waiting. The ioctl's new words are
 * checked raw: pad must be zero, DRM_NNP_COMM_TIMEOUT_NEVER is taken;
 * and a transit's (driver 1.12): each wrong word EINVAL, a good one made,
 * routed and shown as "-/2", with no rank to take COMM_TOPOLOGY.
 *
 * nnp_stream_synchronize() waits as long as the communicator's timeout,
 * past its old fixed 60 s.
 *
 * nnp_comm_abort() from another thread unblocks ranks blocked in an
 * allreduce a peer never joins, nnp_comm_get_async_error() tells a
 * watchdog of it, and a new communicator over the same chips is exact.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>
#include <nnp/nnp.h>
#include <nnp_accel.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "ring_ranks.h"

#define COUNT	(256u << 10)	/* 1 MiB of f32 */
#define LATE_S	5

FIXTURE(ring) {
	struct ring_ranks rr;
};

/* Every rank's allreduce ends well and its buffer holds the exact sum. */
static void expect_exact(struct __test_metadata *_metadata,
			 struct _test_data_ring *self)
{
	int r;

	for (r = 0; r < self->rr.n; r++)
		EXPECT_EQ(0, ring_rank_errors(&self->rr, r)) TH_LOG("rank %d", r);
}

FIXTURE_SETUP(ring)
{
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_open(&self->rr, GUEST_CHIPS, COUNT));
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_stage(&self->rr));
}

FIXTURE_TEARDOWN(ring)
{
	ring_ranks_close(&self->rr);
}

TEST_F_TIMEOUT(ring, rank_5s_late_completes_exactly, 120)
{
	int n = self->rr.n, r;
	double t0;

	unsetenv("NNP_COLL_TIMEOUT_S");
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->rr.dev, n, self->rr.comm));
	for (r = 1; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, ring_allreduce(&self->rr, r));
	t0 = now_s();
	sleep(LATE_S);		/* rank 0 writes its checkpoint */
	ASSERT_EQ(NNP_SUCCESS, ring_allreduce(&self->rr, 0));
	expect_exact(_metadata, self);
	TH_LOG("rank 0 %d s late: %d ranks exact after %.2f s", LATE_S, n, now_s() - t0);
}

/* NNP_COLL_TIMEOUT_S=1: the ranks left waiting fail after 1 s, not 2 s. */
TEST_F_TIMEOUT(ring, short_timeout_fires_peer_timeout, 120)
{
	int n = self->rr.n, r, timeouts = 0;
	double t0, took = 0;

	setenv("NNP_COLL_TIMEOUT_S", "1", 1);
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->rr.dev, n, self->rr.comm));
	unsetenv("NNP_COLL_TIMEOUT_S");
	t0 = now_s();
	for (r = 1; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, ring_allreduce(&self->rr, r));
	for (r = 1; r < n; r++) {
		struct nnp_stream_error e = { .size = sizeof(e) };

		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_synchronize(self->rr.s[r]));
		took = now_s() - t0;
		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->rr.s[r], &e));
		TH_LOG("rank %d: %s (status 0x%x) after %.2f s", r, e.what, e.status, took);
		/* PEER_TIMEOUT, or ABORTED passed on by the rank that timed out */
		EXPECT_TRUE(e.status == 0x14 || e.status == 0x15);
		timeouts += e.status == 0x14;
	}
	EXPECT_GE(timeouts, 1);
	EXPECT_GE(took, 1.0);
	EXPECT_LT(took, 10.0);
}

/*
 * nnp_stream_synchronize() has no timeout of its own (it had 60 s): with
 * NNP_COLL_TIMEOUT_S=65 the ranks rank 0 never joins wait the
 * communicator's 65 s and fail with its PEER_TIMEOUT, not a library
 * timeout at 60 s.
 */
TEST_F_TIMEOUT(ring, synchronize_follows_coll_timeout_past_60s, 200)
{
	struct blocked b[RING_MAX_RANKS] = { 0 };
	int n = self->rr.n, r;
	double t0;

	setenv("NNP_COLL_TIMEOUT_S", "65", 1);
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->rr.dev, n, self->rr.comm));
	unsetenv("NNP_COLL_TIMEOUT_S");
	t0 = now_s();
	for (r = 1; r < n; r++) {
		ASSERT_EQ(NNP_SUCCESS, ring_allreduce(&self->rr, r));
		ASSERT_EQ(0, blocked_start(&b[r], self->rr.s[r]));
	}
	for (r = 1; r < n; r++) {
		struct nnp_stream_error e = { .size = sizeof(e) };

		pthread_join(b[r].t, NULL);
		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, b[r].res)
			TH_LOG("rank %d: %s", r, nnp_strerror(b[r].res));
		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->rr.s[r], &e));
		TH_LOG("rank %d: %s (status 0x%x) after %.2f s", r, e.what, e.status,
		       b[r].at - t0);
		EXPECT_TRUE(e.status == 0x14 || e.status == 0x15);
		EXPECT_GE(b[r].at - t0, 65.0);
		EXPECT_LT(b[r].at - t0, 80.0);
	}
}

/*
 * Ranks 1..n-1 block in an allreduce rank 0 never joins, under the
 * default 30-minute timeout. A watchdog sees no error yet, aborts rank 1's
 * communicator from its own thread: every blocked rank returns within 2 s
 * with ABORTED, and the async error of every other rank says so, rank 0's
 * too, though it had nothing in flight.
 */
TEST_F_TIMEOUT(ring, abort_unblocks_blocked_ranks, 120)
{
	struct blocked b[RING_MAX_RANKS] = { 0 };
	nnp_result_t async;
	int n = self->rr.n, r;
	double t0;

	unsetenv("NNP_COLL_TIMEOUT_S");
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->rr.dev, n, self->rr.comm));
	for (r = 1; r < n; r++) {
		ASSERT_EQ(NNP_SUCCESS, ring_allreduce(&self->rr, r));
		ASSERT_EQ(0, blocked_start(&b[r], self->rr.s[r]));
	}
	sleep(1);
	for (r = 0; r < n; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_comm_get_async_error(self->rr.comm[r], &async));
		EXPECT_EQ(NNP_SUCCESS, async) TH_LOG("rank %d before the abort", r);
	}
	t0 = now_s();
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_abort(self->rr.comm[1]));
	self->rr.comm[1] = NULL;
	for (r = 1; r < n; r++) {
		struct nnp_stream_error e = { .size = sizeof(e) };

		pthread_join(b[r].t, NULL);
		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, b[r].res) TH_LOG("rank %d", r);
		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->rr.s[r], &e));
		TH_LOG("rank %d: %s (status 0x%x) %.3f s after the abort", r, e.what,
		       e.status, b[r].at - t0);
		EXPECT_EQ(0x15, e.status);	/* ABORTED */
		EXPECT_LT(b[r].at - t0, 2.0);
	}
	for (r = 0; r < n; r++) {
		if (r == 1)
			continue;
		ASSERT_EQ(NNP_SUCCESS, nnp_comm_get_async_error(self->rr.comm[r], &async));
		EXPECT_EQ(NNP_ERROR_COMM_FAILED, async) TH_LOG("rank %d", r);
	}
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_comm_get_async_error(NULL, &async));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_comm_abort(NULL));

	/* Streams reset, a new communicator over the same chips: exact. */
	ASSERT_EQ(NNP_SUCCESS, ring_ranks_restart(&self->rr, -1));
	expect_exact(_metadata, self);
}

TEST(comm_create_timeout_words)
{
	int fd = guest_open_fd(0);
	struct drm_nnp_comm_create c = {
		.nranks = 1, .epoch = 0x7ee1, .timeout_ms = 1000, .pad = 1,
	};
	struct drm_nnp_comm_destroy d = { 0 };

	ASSERT_LE(0, fd);
	EXPECT_EQ(-1, drmIoctl(fd, DRM_IOCTL_NNP_COMM_CREATE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.pad = 0;
	c.timeout_ms = DRM_NNP_COMM_TIMEOUT_NEVER;
	ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_CREATE, &c));
	d.comm = c.comm;
	EXPECT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_DESTROY, &d));
	close(fd);
}

/*
 * COMM_CREATE of a transit (driver 1.12), raw: each wrong word EINVAL,
 * as the header lists them; a good one is made, takes routes and
 * COMM_STATUS, refuses COMM_TOPOLOGY (the device has no rank there:
 * ENOENT), shows in fdinfo as "-/2", and is destroyed.
 */
TEST(comm_create_transit_words)
{
	const struct drm_nnp_comm_create good = {
		.nranks = 2, .send_port = 0, .recv_port = 1,
		.flags = DRM_NNP_COMM_CREATE_TRANSIT, .epoch = 0x7ee2,
	};
	struct drm_nnp_comm_create bad[5], c = good;
	const uint32_t ring[2] = { 0, 1 };
	uint8_t routes[2] = { 0, 1 };
	struct drm_nnp_comm_routes r = { .nranks = 2, .routes = (uintptr_t)routes };
	struct drm_nnp_comm_status st = { 0 };
	struct drm_nnp_comm_topology t = { 0 };
	struct drm_nnp_comm_destroy d = { 0 };
	int fd = guest_open_fd(0), k;
	char path[64], line[256], want[64];
	bool shown = false;
	FILE *f;

	ASSERT_LE(0, fd);
	for (k = 0; k < 5; k++)
		bad[k] = good;
	bad[0].rank = 1;		/* a transit is no rank */
	bad[1].nranks = 1;		/* nobody to pass between */
	bad[2].recv_port = 0;		/* one port twice */
	bad[3].ring = (uintptr_t)ring;	/* no ring order */
	bad[4].flags |= 2;		/* a flag no driver knows */
	for (k = 0; k < 5; k++) {
		EXPECT_EQ(-1, drmIoctl(fd, DRM_IOCTL_NNP_COMM_CREATE, &bad[k])) TH_LOG("case %d", k);
		EXPECT_EQ(EINVAL, errno) TH_LOG("case %d", k);
	}
	ASSERT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_CREATE, &c));
	r.comm = c.comm;
	EXPECT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_ROUTES, &r));
	st.comm = c.comm;
	EXPECT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_STATUS, &st));
	EXPECT_EQ(0, st.status);
	t.comm = c.comm;
	t.dim[0] = (struct drm_nnp_ring_dim){ .n = 2, .pairs = 1, .next_port = { 0 },
					      .prev_port = { 1 } };
	EXPECT_EQ(-1, drmIoctl(fd, DRM_IOCTL_NNP_COMM_TOPOLOGY, &t));
	EXPECT_EQ(ENOENT, errno);
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	snprintf(want, sizeof(want), "nnp-comm-%u:\t-/2\n", c.comm);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		shown |= !strcmp(line, want);
	fclose(f);
	EXPECT_TRUE(shown);
	d.comm = c.comm;
	EXPECT_EQ(0, drmIoctl(fd, DRM_IOCTL_NNP_COMM_DESTROY, &d));
	close(fd);
}

TEST_HARNESS_MAIN
