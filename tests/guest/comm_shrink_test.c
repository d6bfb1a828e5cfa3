// SPDX-License-Identifier: MIT
/*
 * nnp_comm_shrink() on QEMU's full fabric of 4 chips (tests/vm/comm_shrink.sh):
 * every chip has a link to every other, so any three of them are a ring.
 * One process drives all four ranks of a parent made by
 * nnp_comm_init_all(), each rank's calls on a thread of its own.
 *
 * A chip taken down in the middle of a job (reset under its peers, which
 * wait in an allreduce it never joins): the survivors' allreduce fails,
 * they shrink the parent without it and their next allreduce is exact.
 * Shrinks of a healthy parent live beside it and beside each other, and
 * the same set shrunk again gets a communicator of its own. Bad arguments
 * fail on the rank that gave them and leave the parent usable; survivors
 * that exclude different sets fail at the new communicator's timeout,
 * not later and not hung.
 *
 * A loop's ASSERT or EXPECT sits in braces: the harness's macro is two
 * statements, and without them the second would run after the loop.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "tagged_sums.h"

#define N	4
#define COUNT	(65536 + 7)
#define DOWN	3		/* the chip taken down */
#define TIMEOUT_MS	2000	/* the mismatched shrink's wait */
/* Inputs that differ by communicator, so that mixed traffic shows. */
#define TAG_PARENT	1
#define TAG_A		2
#define TAG_B		3

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

FIXTURE(full) {
	nnp_device_t *dev[N];
	/* A stream, a device buffer and a communicator per use: parent, a, b. */
	nnp_stream_t *s[3][N];
	nnp_mem_t *buf[3][N], *host[N];
	nnp_comm_t *comm[3][N];
	nnp_result_t res[N];
	char error[N][256];
};

FIXTURE_SETUP(full)
{
	int r, k;

	ASSERT_EQ(N, GUEST_CHIPS);
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(r, &self->dev[r]));
		for (k = 0; k < 3; k++) {
			ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[r], &self->s[k][r]));
			ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_DEVICE,
							     COUNT * 4, 0, &self->buf[k][r]));
		}
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_HOST,
						     COUNT * 4, 0, &self->host[r]));
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->dev, N, self->comm[0]));
}

FIXTURE_TEARDOWN(full)
{
	int r, k;

	for (r = 0; r < N; r++) {
		for (k = 0; k < 3; k++)
			nnp_stream_synchronize(self->s[k][r]);
		for (k = 2; k >= 0; k--) {
			nnp_comm_destroy(self->comm[k][r]);
			nnp_stream_destroy(self->s[k][r]);
			nnp_mem_free(self->buf[k][r]);
		}
		nnp_mem_free(self->host[r]);
		nnp_device_close(self->dev[r]);
	}
}

/* What each rank's thread does: shrink, or allreduce and wait. */
struct job {
	FIXTURE_DATA(full) *self;
	int r;
	const int *exclude;
	int nexclude;
	const nnp_comm_config_t *config;
	int into;		/* shrink into comm[into]; or allreduce on comm[0] */
};

static void keep_error(FIXTURE_DATA(full) *self, int r)
{
	/* The last error is the thread's own: keep it past the thread. */
	snprintf(self->error[r], sizeof(self->error[r]), "%s", nnp_get_last_error());
}

static void *shrink_main(void *arg)
{
	struct job *j = arg;

	j->self->res[j->r] = nnp_comm_shrink(j->self->comm[0][j->r], j->exclude,
					     j->nexclude, j->config,
					     &j->self->comm[j->into][j->r]);
	keep_error(j->self, j->r);
	return NULL;
}

static void *allreduce_main(void *arg)
{
	struct job *j = arg;
	nnp_mem_t *b = j->self->buf[0][j->r];
	nnp_result_t res;

	res = nnp_allreduce(b, 0, b, 0, COUNT, NNP_INT32, NNP_SUM,
			    j->self->comm[0][j->r], j->self->s[0][j->r]);
	j->self->res[j->r] = res == NNP_SUCCESS ?
			     nnp_stream_synchronize(j->self->s[0][j->r]) : res;
	keep_error(j->self, j->r);
	return NULL;
}

/*
 * Run @fn for each rank in @ranks (a bit each) at once, rank r with
 * exclude[r] (@nexclude[r] of them); -1 if a thread failed.
 */
static int each_rank(FIXTURE_DATA(full) *self, unsigned int ranks,
		     void *(*fn)(void *), const int *const *exclude,
		     const int *nexclude, const nnp_comm_config_t *config, int into)
{
	struct job j[N];
	pthread_t th[N];
	int r, bad = 0;

	for (r = 0; r < N; r++) {
		if (!(ranks & 1u << r))
			continue;
		j[r] = (struct job){ self, r, exclude ? exclude[r] : NULL,
				     nexclude ? nexclude[r] : 0, config, into };
		self->res[r] = NNP_ERROR_IO;
		self->error[r][0] = '\0';
		if (pthread_create(&th[r], NULL, fn, &j[r]))
			return -1;
	}
	for (r = 0; r < N; r++)
		if (ranks & 1u << r)
			bad |= pthread_join(th[r], NULL);
	return bad ? -1 : 0;
}

/* Every rank in @ranks shrinks into comm[@into] without the @n of @ex. */
static int shrink_all(FIXTURE_DATA(full) *self, unsigned int ranks,
		      const int *ex, int n, const nnp_comm_config_t *config, int into)
{
	const int *exclude[N] = { ex, ex, ex, ex };
	const int nexclude[N] = { n, n, n, n };

	return each_rank(self, ranks, shrink_main, exclude, nexclude, config, into);
}

/* Rank @r's inputs tagged @tag into buf[@k][@r], through its host buffer. */
static nnp_result_t stage(FIXTURE_DATA(full) *self, int k, int r, int tag)
{
	return tagged_stage(self->s[k][r], self->host[r], self->buf[k][r], COUNT, tag, r);
}

/*
 * Elements of buf[@k][@r], once stream k's work is done, that are not the
 * sum of the @tag inputs of the parent ranks in @members (a bit each); -1
 * if a call failed.
 */
static long wrong(FIXTURE_DATA(full) *self, int k, int r, int tag,
		  unsigned int members)
{
	return tagged_wrong(self->s[k][r], self->host[r], self->buf[k][r], COUNT,
			    tag, members);
}

/*
 * The ranks in @members stage their @tag inputs, then allreduce them in
 * place over comm[@k] (all queued before any wait): the elements, over
 * those ranks, that are not the exact sum; -1 if a call failed.
 */
static long allreduce_wrong(FIXTURE_DATA(full) *self, int k, unsigned int members,
			    int tag)
{
	long bad = 0, w;
	int r;

	for (r = 0; r < N; r++)
		if (members & 1u << r &&
		    (stage(self, k, r, tag) != NNP_SUCCESS ||
		     nnp_allreduce(self->buf[k][r], 0, self->buf[k][r], 0, COUNT,
				   NNP_INT32, NNP_SUM, self->comm[k][r],
				   self->s[k][r]) != NNP_SUCCESS))
			return -1;
	for (r = 0; r < N; r++) {
		if (!(members & 1u << r))
			continue;
		w = wrong(self, k, r, tag, members);
		if (w < 0)
			return -1;
		bad += w;
	}
	return bad;
}

#define ALL	0xfu
#define BUT(r)	(ALL & ~(1u << (r)))

TEST_F_TIMEOUT(full, chip_down_mid_job_survivors_shrink_exactly, 180)
{
	static const int down[] = { DOWN };
	double t0;
	int r;

	/* The job runs on all four chips... */
	ASSERT_EQ(0, allreduce_wrong(self, 0, ALL, TAG_PARENT));
	/* ...until chip 3 goes down while the others wait in an allreduce. */
	for (r = 0; r < DOWN; r++)
		ASSERT_EQ(NNP_SUCCESS, stage(self, 0, r, TAG_PARENT));
	{
		struct job j[DOWN];
		pthread_t th[DOWN];

		for (r = 0; r < DOWN; r++) {
			j[r] = (struct job){ .self = self, .r = r };
			ASSERT_EQ(0, pthread_create(&th[r], NULL, allreduce_main, &j[r]));
		}
		usleep(300 * 1000);
		t0 = now_s();
		ASSERT_EQ(NNP_SUCCESS, nnp_device_reset(self->dev[DOWN]));
		for (r = 0; r < DOWN; r++)
			ASSERT_EQ(0, pthread_join(th[r], NULL));
	}
	/* The survivors learn of it from the links, not at a timeout. */
	EXPECT_LT(now_s() - t0, 10.0);
	for (r = 0; r < DOWN; r++) {
		struct nnp_stream_error e = { .size = sizeof(e) };

		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, self->res[r]) TH_LOG("rank %d", r);
		ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->s[0][r], &e));
		EXPECT_TRUE(e.status == 0x13 || e.status == 0x15)
			TH_LOG("rank %d: status %#x (%s)", r, e.status, e.what);
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_reset(self->s[0][r]));
	}
	/* The survivors shrink the parent without chip 3 and go on. */
	ASSERT_EQ(0, shrink_all(self, BUT(DOWN), down, 1, NULL, 1));
	for (r = 0; r < DOWN; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
		EXPECT_EQ(r, nnp_comm_rank(self->comm[1][r]));
		EXPECT_EQ(3, nnp_comm_count(self->comm[1][r]));
	}
	EXPECT_EQ(0, allreduce_wrong(self, 1, BUT(DOWN), TAG_A));
	EXPECT_EQ(0, allreduce_wrong(self, 1, BUT(DOWN), TAG_B));
}

TEST_F_TIMEOUT(full, shrinks_live_beside_the_parent_and_each_other, 180)
{
	static const int one[] = { 1 }, three[] = { 3 };
	int r;

	/* Without rank 1 into comm[1], without rank 3 into comm[2]. */
	ASSERT_EQ(0, shrink_all(self, BUT(1), one, 1, NULL, 1));
	ASSERT_EQ(0, shrink_all(self, BUT(3), three, 1, NULL, 2));
	for (r = 0; r < N; r++) {
		if (r != 1) {
			ASSERT_NE(NULL, self->comm[1][r]) TH_LOG("rank %d", r);
			EXPECT_EQ(r - (r > 1), nnp_comm_rank(self->comm[1][r]));
		}
		if (r != 3) {
			ASSERT_NE(NULL, self->comm[2][r]) TH_LOG("rank %d", r);
			EXPECT_EQ(r, nnp_comm_rank(self->comm[2][r]));
		}
	}
	/* All three at once on every chip: each its own members' sum. */
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, stage(self, 0, r, TAG_PARENT));
		if (r != 1)
			ASSERT_EQ(NNP_SUCCESS, stage(self, 1, r, TAG_A));
		if (r != 3)
			ASSERT_EQ(NNP_SUCCESS, stage(self, 2, r, TAG_B));
	}
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[0][r], 0, self->buf[0][r], 0,
						     COUNT, NNP_INT32, NNP_SUM,
						     self->comm[0][r], self->s[0][r]));
		if (r != 1)
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[1][r], 0, self->buf[1][r], 0,
							     COUNT, NNP_INT32, NNP_SUM,
							     self->comm[1][r], self->s[1][r]));
		if (r != 3)
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[2][r], 0, self->buf[2][r], 0,
							     COUNT, NNP_INT32, NNP_SUM,
							     self->comm[2][r], self->s[2][r]));
	}
	for (r = 0; r < N; r++) {
		EXPECT_EQ(0, wrong(self, 0, r, TAG_PARENT, ALL)) TH_LOG("parent, rank %d", r);
		if (r != 1)
			EXPECT_EQ(0, wrong(self, 1, r, TAG_A, BUT(1))) TH_LOG("a, rank %d", r);
		if (r != 3)
			EXPECT_EQ(0, wrong(self, 2, r, TAG_B, BUT(3))) TH_LOG("b, rank %d", r);
	}
	/* The same set again, beside the first: a communicator of its own. */
	for (r = 0; r < N; r++) {
		nnp_comm_destroy(self->comm[2][r]);
		self->comm[2][r] = NULL;
	}
	ASSERT_EQ(0, shrink_all(self, BUT(1), one, 1, NULL, 2));
	for (r = 0; r < N; r++) {
		if (r == 1)
			continue;
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
		ASSERT_EQ(NNP_SUCCESS, stage(self, 1, r, TAG_A));
		ASSERT_EQ(NNP_SUCCESS, stage(self, 2, r, TAG_B));
	}
	for (r = 0; r < N; r++) {
		if (r == 1)
			continue;
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[1][r], 0, self->buf[1][r], 0,
						     COUNT, NNP_INT32, NNP_SUM,
						     self->comm[1][r], self->s[1][r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[2][r], 0, self->buf[2][r], 0,
						     COUNT, NNP_INT32, NNP_SUM,
						     self->comm[2][r], self->s[2][r]));
	}
	for (r = 0; r < N; r++) {
		if (r == 1)
			continue;
		EXPECT_EQ(0, wrong(self, 1, r, TAG_A, BUT(1))) TH_LOG("first, rank %d", r);
		EXPECT_EQ(0, wrong(self, 2, r, TAG_B, BUT(1))) TH_LOG("again, rank %d", r);
	}
}

TEST_F_TIMEOUT(full, bad_arguments_fail_on_their_rank_and_leave_the_parent, 120)
{
	nnp_comm_config_t big = NNP_COMM_CONFIG_INIT;
	const int self_listed[] = { 2, 0 }, twice[] = { 1, 1 };
	nnp_comm_t *out = (nnp_comm_t *)&out;

	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_comm_shrink(NULL, NULL, 0, NULL, &out));
	EXPECT_STREQ("nnp_comm_shrink: no parent or no newcomm", nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_comm_shrink(self->comm[0][0], NULL, 0, NULL, NULL));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_comm_shrink(self->comm[0][0], self_listed, 2, NULL, &out));
	EXPECT_STREQ("nnp_comm_shrink: exclude[1] is the calling rank 0: an excluded rank does not call it",
		     nnp_get_last_error());
	EXPECT_EQ(NULL, out);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_comm_shrink(self->comm[0][0], twice, 2, NULL, &out));
	EXPECT_STREQ("nnp_comm_shrink: exclude[1] is rank 1: listed twice",
		     nnp_get_last_error());
	big.size += 8;
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_comm_shrink(self->comm[0][0], NULL, 0, &big, &out));
	EXPECT_EQ(0, strncmp(nnp_get_last_error(), "nnp_comm_shrink: config size ", 29))
		TH_LOG("%s", nnp_get_last_error());
	EXPECT_EQ(NULL, out);
	/* The parent is as it was. */
	EXPECT_EQ(0, allreduce_wrong(self, 0, ALL, TAG_PARENT));
}

TEST_F_TIMEOUT(full, survivors_that_disagree_fail_at_the_timeout, 120)
{
	static const int three[] = { 3 }, one[] = { 1 };
	const int *exclude[N] = { three, three, one, NULL };
	const int nexclude[N] = { 1, 1, 1, 0 };
	nnp_comm_config_t cfg = NNP_COMM_CONFIG_INIT;
	double t0, took;
	int r;

	cfg.timeout_ms = TIMEOUT_MS;
	t0 = now_s();
	ASSERT_EQ(0, each_rank(self, BUT(3), shrink_main, exclude, nexclude, &cfg, 1));
	took = now_s() - t0;
	for (r = 0; r < 3; r++) {
		EXPECT_EQ(NNP_ERROR_COMM_FAILED, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
		EXPECT_EQ(NULL, self->comm[1][r]);
		EXPECT_NE(NULL, strstr(self->error[r], "nnp_comm_shrink: rank "))
			TH_LOG("rank %d: %s", r, self->error[r]);
	}
	EXPECT_GE(took, TIMEOUT_MS / 1000.0);
	EXPECT_LT(took, TIMEOUT_MS / 1000.0 + 15);
	/* The parent is as it was. */
	EXPECT_EQ(0, allreduce_wrong(self, 0, ALL, TAG_PARENT));
}

TEST_HARNESS_MAIN
