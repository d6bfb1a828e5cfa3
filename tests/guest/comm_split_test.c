// SPDX-License-Identifier: MIT
/*
 * nnp_comm_split() on QEMU's torus:2x2 (tests/vm/comm_split.sh): chips 0
 * and 1 make row 0, 2 and 3 row 1; 0 and 2 column 0, 1 and 3 column 1;
 * the diagonals 0-3 and 1-2 have no link. One process drives all four
 * ranks of a parent made by nnp_comm_init_all(), each split on a thread
 * of its own.
 *
 * Rows and columns each allreduce their members' int32 inputs exactly;
 * keys order the new ranks (a broadcast from new rank 0 carries parent
 * rank 3's bytes when keys run backwards); NNP_SPLIT_NOCOLOR and a NULL
 * newcomm get none while the others go on; a diagonal, whose chips share
 * no link, crosses a chip of another color as a transit and allreduces
 * and messages exactly, as do both diagonals at once, and its next
 * allreduce fails (not hangs) once the transit's parent is destroyed;
 * a child outlives its destroyed parent and its aborted sibling; and
 * a member that cannot make its part fails its group and no other; and
 * allreduces of the parent, its column and its row in flight at once on
 * every chip each come out exact.
 *
 * A loop's ASSERT or EXPECT sits in braces: the harness's macro is two
 * statements, and without them the second would run after the loop.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <nnp/nnp.h>

#include "guest_env.h"
#include "kselftest_harness.h"
#include "tagged_sums.h"

#define N	4
#define COUNT	(65536 + 7)
/* Inputs that differ by communicator, so that mixed traffic shows. */
#define TAG_PARENT	1
#define TAG_CHILD	2
#define TAG_SIBLING	3
#define TAG_ROW		4	/* and 5 */

FIXTURE(torus) {
	nnp_device_t *dev[N];
	nnp_stream_t *s[N], *t[N], *u[N];
	nnp_comm_t *parent[N], *child[N], *row[N];
	nnp_mem_t *p[N], *c[N], *d[N], *host[N];
	nnp_result_t res[N];
	char error[N][256];
};

FIXTURE_SETUP(torus)
{
	int r;

	ASSERT_EQ(N, GUEST_CHIPS);
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(r, &self->dev[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[r], &self->s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[r], &self->t[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[r], &self->u[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_DEVICE,
						     COUNT * 4, 0, &self->p[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_DEVICE,
						     COUNT * 4, 0, &self->c[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_DEVICE,
						     COUNT * 4, 0, &self->d[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_HOST,
						     COUNT * 4, 0, &self->host[r]));
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->dev, N, self->parent));
}

FIXTURE_TEARDOWN(torus)
{
	int r;

	for (r = 0; r < N; r++) {
		nnp_stream_synchronize(self->s[r]);
		nnp_stream_synchronize(self->t[r]);
		nnp_stream_synchronize(self->u[r]);
		nnp_comm_destroy(self->child[r]);
		nnp_comm_destroy(self->row[r]);
		nnp_comm_destroy(self->parent[r]);
		nnp_stream_destroy(self->s[r]);
		nnp_stream_destroy(self->t[r]);
		nnp_stream_destroy(self->u[r]);
		nnp_mem_free(self->p[r]);
		nnp_mem_free(self->c[r]);
		nnp_mem_free(self->d[r]);
		nnp_mem_free(self->host[r]);
		nnp_device_close(self->dev[r]);
	}
}

struct splitter {
	FIXTURE_DATA(torus) *self;
	int r, color, key;
	nnp_comm_t **out;	/* NULL: pass NULL for newcomm */
};

static void *split_main(void *arg)
{
	struct splitter *a = arg;
	FIXTURE_DATA(torus) *self = a->self;

	self->res[a->r] = nnp_comm_split(self->parent[a->r], a->color, a->key,
					 a->out);
	/* The last error is the thread's own: keep it past the thread. */
	snprintf(self->error[a->r], sizeof(self->error[a->r]), "%s",
		 nnp_get_last_error());
	return NULL;
}

/*
 * Every rank splits at once with @color and @key into @out[rank], but
 * rank @no_newcomm (-1: none) with a NULL newcomm; -1 if a thread failed.
 */
static int split_into(FIXTURE_DATA(torus) *self, const int *color, const int *key,
		      nnp_comm_t **out, int no_newcomm)
{
	struct splitter a[N];
	pthread_t th[N];
	int r, bad = 0;

	for (r = 0; r < N; r++) {
		a[r] = (struct splitter){
			self, r, color[r], key[r], r == no_newcomm ? NULL : &out[r],
		};
		self->res[r] = NNP_ERROR_IO;
		self->error[r][0] = '\0';
		if (pthread_create(&th[r], NULL, split_main, &a[r]))
			return -1;
	}
	for (r = 0; r < N; r++)
		bad |= pthread_join(th[r], NULL);
	return bad ? -1 : 0;
}

/* The same into child[]. */
static int split_all(FIXTURE_DATA(torus) *self, const int *color, const int *key,
		     int no_newcomm)
{
	return split_into(self, color, key, self->child, no_newcomm);
}

/* Rank @r's inputs tagged @tag into @mem, through its host buffer. */
static nnp_result_t stage(FIXTURE_DATA(torus) *self, int r, nnp_mem_t *mem, int tag)
{
	return tagged_stage(self->s[r], self->host[r], mem, COUNT, tag, r);
}

/*
 * Elements of rank @r's @mem, after @stream's work, that are not the sum
 * of the @tag inputs of the parent ranks in @members (a bit each); -1 if
 * a call failed.
 */
static long wrong(FIXTURE_DATA(torus) *self, int r, nnp_stream_t *stream,
		  nnp_mem_t *mem, int tag, unsigned int members)
{
	return tagged_wrong(stream, self->host[r], mem, COUNT, tag, members);
}

/* The parent ranks whose @color is @r's, a bit each. */
static unsigned int same_color(const int *color, int r)
{
	unsigned int m = 0;
	int q;

	for (q = 0; q < N; q++)
		if (color[q] == color[r])
			m |= 1u << q;
	return m;
}

/*
 * Ranks @first..@last - 1 allreduce their @tag inputs in place over
 * child[] (all queued before any wait), in groups as @color has them:
 * the elements, over those ranks, that are not their group's exact sum;
 * -1 if a call failed.
 */
static long children_wrong(FIXTURE_DATA(torus) *self, int first, int last,
			   int tag, const int *color)
{
	long bad = 0, w;
	int r;

	for (r = first; r < last; r++)
		if (stage(self, r, self->c[r], tag) != NNP_SUCCESS ||
		    nnp_allreduce(self->c[r], 0, self->c[r], 0, COUNT, NNP_INT32,
				  NNP_SUM, self->child[r], self->t[r]) != NNP_SUCCESS)
			return -1;
	for (r = first; r < last; r++) {
		w = wrong(self, r, self->t[r], self->c[r], tag, same_color(color, r));
		if (w < 0)
			return -1;
		bad += w;
	}
	return bad;
}

TEST_F_TIMEOUT(torus, rows_and_columns_allreduce_exactly, 180)
{
	static const int rows[N] = { 0, 0, 1, 1 }, cols[N] = { 0, 1, 0, 1 };
	static const int key[N] = { 0, 1, 2, 3 };
	const int *split[2] = { rows, cols };
	int k, r;

	for (k = 0; k < 2; k++) {
		ASSERT_EQ(0, split_all(self, split[k], key, -1));
		for (r = 0; r < N; r++) {
			ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("%s rank %d: %s",
				k ? "columns" : "rows", r, self->error[r]);
			EXPECT_EQ(2, nnp_comm_count(self->child[r]));
			EXPECT_EQ(k ? r / 2 : r % 2, nnp_comm_rank(self->child[r]));
		}
		EXPECT_EQ(0, children_wrong(self, 0, N, TAG_CHILD, split[k]))
			TH_LOG("%s", k ? "columns" : "rows");
		for (r = 0; r < N; r++) {
			nnp_comm_destroy(self->child[r]);
			self->child[r] = NULL;
		}
	}
}

/*
 * Keys 3, 2, 1, 0: parent rank 3 is new rank 0, and a broadcast from it
 * gives every rank parent rank 3's inputs; the allreduce over the four
 * is exact on the ring the planner found for that order.
 */
TEST_F_TIMEOUT(torus, keys_order_the_new_ranks, 120)
{
	static const int color[N] = { 7, 7, 7, 7 }, key[N] = { 3, 2, 1, 0 };
	int r;

	ASSERT_EQ(0, split_all(self, color, key, -1));
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
		EXPECT_EQ(N - 1 - r, nnp_comm_rank(self->child[r]));
		EXPECT_EQ(N, nnp_comm_count(self->child[r]));
	}
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, stage(self, r, self->c[r], TAG_CHILD));
		ASSERT_EQ(NNP_SUCCESS, nnp_broadcast(self->c[r], 0, self->c[r], 0, COUNT,
						     NNP_INT32, 0, self->child[r],
						     self->t[r]));
	}
	for (r = 0; r < N; r++) {
		EXPECT_EQ(0, wrong(self, r, self->t[r], self->c[r], TAG_CHILD, 1u << 3))
			TH_LOG("rank %d", r);
	}
	EXPECT_EQ(0, children_wrong(self, 0, N, TAG_SIBLING, color));
}

/*
 * NNP_SPLIT_NOCOLOR (and any negative color) gets NULL and success; a
 * NULL newcomm takes part with no color and gets INVALID_ARGUMENT; the
 * two others make row 0 and allreduce exactly.
 */
TEST_F_TIMEOUT(torus, nocolor_and_null_newcomm_get_none, 120)
{
	static const int color[N] = { 4, 4, NNP_SPLIT_NOCOLOR, 4 };
	static const int key[N] = { 0, 0, 0, 0 };
	int r;

	ASSERT_EQ(0, split_all(self, color, key, 3));
	EXPECT_EQ(NNP_SUCCESS, self->res[0]) TH_LOG("%s", self->error[0]);
	EXPECT_EQ(NNP_SUCCESS, self->res[1]) TH_LOG("%s", self->error[1]);
	EXPECT_EQ(NNP_SUCCESS, self->res[2]) TH_LOG("%s", self->error[2]);
	EXPECT_EQ(NULL, self->child[2]);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, self->res[3]);
	EXPECT_STREQ("nnp_comm_split: newcomm is NULL (the rank took part with no color)",
		     self->error[3]);
	for (r = 0; r < 2; r++) {
		ASSERT_NE(NULL, self->child[r]);
		EXPECT_EQ(2, nnp_comm_count(self->child[r]));
		EXPECT_EQ(r, nnp_comm_rank(self->child[r]));
	}
	EXPECT_EQ(0, children_wrong(self, 0, 2, TAG_CHILD, (const int[N]){ 4, 4 }));
}

/*
 * Colors 0, 1, 2, 0: the diagonal 0-3 has no link, so its ring crosses
 * chip 1 or 2 as a transit, held by that rank's parent (whose own color
 * makes a communicator of one). The diagonal allreduces exactly, its two
 * ranks' messages go both ways byte for byte, and the parent still
 * allreduces exactly.
 */
TEST_F_TIMEOUT(torus, a_diagonal_crosses_a_transit, 120)
{
	static const int color[N] = { 0, 1, 2, 0 }, key[N] = { 0, 0, 0, 0 };
	int r, peer;

	ASSERT_EQ(0, split_all(self, color, key, -1));
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
		EXPECT_EQ(r % 3 ? 1 : 2, nnp_comm_count(self->child[r]));
	}
	EXPECT_EQ(0, children_wrong(self, 0, N, TAG_CHILD, color));
	for (r = 0; r < N; r += 3) {
		peer = r ? 0 : 1;
		ASSERT_EQ(NNP_SUCCESS, stage(self, r, self->d[r], TAG_SIBLING));
		ASSERT_EQ(NNP_SUCCESS, nnp_send(self->d[r], 0, COUNT, NNP_INT32, peer,
						self->child[r], self->s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_recv(self->c[r], 0, COUNT, NNP_INT32, peer,
						self->child[r], self->t[r]));
	}
	for (r = 0; r < N; r += 3) {
		EXPECT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
		EXPECT_EQ(0, wrong(self, r, self->t[r], self->c[r], TAG_SIBLING, 1u << (3 - r)))
			TH_LOG("rank %d", r);
	}
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, stage(self, r, self->p[r], TAG_PARENT));
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->p[r], 0, self->p[r], 0, COUNT,
						     NNP_INT32, NNP_SUM, self->parent[r],
						     self->s[r]));
	}
	for (r = 0; r < N; r++) {
		EXPECT_EQ(0, wrong(self, r, self->s[r], self->p[r], TAG_PARENT, 0xf))
			TH_LOG("rank %d", r);
	}
}

/*
 * Colors 0, 1, 1, 0: both diagonals, each ring crossing a chip of the
 * other as a transit; their allreduces, queued together, are each their
 * own members' exact sum.
 */
TEST_F_TIMEOUT(torus, both_diagonals_cross_each_other, 120)
{
	static const int color[N] = { 0, 1, 1, 0 }, key[N] = { 0, 0, 0, 0 };
	int r;

	ASSERT_EQ(0, split_all(self, color, key, -1));
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
		EXPECT_EQ(2, nnp_comm_count(self->child[r]));
	}
	EXPECT_EQ(0, children_wrong(self, 0, N, TAG_CHILD, color));
}

/*
 * The diagonal 0-3 again; then ranks 1 and 2 destroy their parents,
 * which hold its transit: the diagonal's next allreduce fails on both of
 * its ranks (the transit's end aborts them), within the test's time
 * rather than at the parent's 30-minute timeout, and says so to a
 * watchdog.
 */
TEST_F_TIMEOUT(torus, a_transit_ending_fails_its_ring, 120)
{
	static const int color[N] = { 0, 1, 2, 0 }, key[N] = { 0, 0, 0, 0 };
	nnp_result_t async;
	int r;

	ASSERT_EQ(0, split_all(self, color, key, -1));
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
	}
	for (r = 1; r < 3; r++) {
		nnp_comm_destroy(self->parent[r]);
		self->parent[r] = NULL;
	}
	for (r = 0; r < N; r += 3) {
		ASSERT_EQ(NNP_SUCCESS, stage(self, r, self->c[r], TAG_CHILD));
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->c[r], 0, self->c[r], 0, COUNT,
						     NNP_INT32, NNP_SUM, self->child[r],
						     self->t[r]));
	}
	for (r = 0; r < N; r += 3) {
		EXPECT_NE(NNP_SUCCESS, nnp_stream_synchronize(self->t[r])) TH_LOG("rank %d", r);
		ASSERT_EQ(NNP_SUCCESS, nnp_comm_get_async_error(self->child[r], &async));
		EXPECT_EQ(NNP_ERROR_COMM_FAILED, async) TH_LOG("rank %d", r);
	}
}

/*
 * Device 0 is given communicators of one until it refuses more (the
 * device's or the user's limit), so rank 0 cannot make its part of row 0: rank 1 is told so and keeps
 * none, row 1 is made and exact. With one given back, all rows are made.
 */
TEST_F_TIMEOUT(torus, a_member_that_cannot_make_its_part_fails_its_group, 120)
{
	static const int rows[N] = { 0, 0, 1, 1 }, key[N] = { 0, 0, 0, 0 };
	nnp_comm_t *hog[64];
	char want[256];
	int r, k = 0;

	while (k < 64 && nnp_comm_init_all(&self->dev[0], 1, &hog[k]) == NNP_SUCCESS)
		k++;
	ASSERT_LT(k, 64);
	ASSERT_EQ(0, split_all(self, rows, key, -1));
	EXPECT_NE(NNP_SUCCESS, self->res[0]);
	EXPECT_EQ(NULL, self->child[0]);
	EXPECT_EQ(NNP_ERROR_COMM_FAILED, self->res[1]);
	EXPECT_EQ(NULL, self->child[1]);
	snprintf(want, sizeof(want),
		 "nnp_comm_split: color 0: rank 0 (parent rank 0) could not make its communicator: %s",
		 nnp_strerror(self->res[0]));
	EXPECT_STREQ(want, self->error[1]);
	TH_LOG("rank 0 with %d more communicators: %s", k, self->error[0]);
	for (r = 2; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
	}
	EXPECT_EQ(0, children_wrong(self, 2, N, TAG_CHILD, rows));
	for (r = 2; r < N; r++) {
		nnp_comm_destroy(self->child[r]);
		self->child[r] = NULL;
	}
	nnp_comm_destroy(hog[--k]);
	ASSERT_EQ(0, split_all(self, rows, key, -1));
	for (r = 0; r < N; r++) {
		EXPECT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
	}
	while (k > 0)
		nnp_comm_destroy(hog[--k]);
}

/*
 * Rows: row 0's communicator is aborted and the parent destroyed; row 1's
 * still allreduces exactly, and so does row 0 made again from a second
 * parent.
 */
TEST_F_TIMEOUT(torus, child_outlives_parent_and_sibling, 120)
{
	static const int rows[N] = { 0, 0, 1, 1 }, key[N] = { 0, 0, 0, 0 };
	int r;

	ASSERT_EQ(0, split_all(self, rows, key, -1));
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
	}
	for (r = 0; r < 2; r++) {
		EXPECT_EQ(NNP_SUCCESS, nnp_comm_abort(self->child[r]));
		self->child[r] = NULL;
	}
	for (r = 0; r < N; r++) {
		nnp_comm_destroy(self->parent[r]);
		self->parent[r] = NULL;
	}
	EXPECT_EQ(0, children_wrong(self, 2, N, TAG_CHILD, rows));
	for (r = 2; r < N; r++) {
		nnp_comm_destroy(self->child[r]);
		self->child[r] = NULL;
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->dev, N, self->parent));
	ASSERT_EQ(0, split_all(self, (const int[N]){ 0, 0, -1, -1 }, key, -1));
	for (r = 0; r < 2; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
	}
	EXPECT_EQ(0, children_wrong(self, 0, 2, TAG_SIBLING, rows));
}

/*
 * Columns in child[] and rows in row[], all alive: on every chip the
 * parent's allreduce (stream s, tag 1), its column's (stream t, tags 2
 * and 3 by column) and its row's (stream u, tags 4 and 5 by row) are
 * queued together, three rounds, before any wait: each result is its own
 * members' exact sum.
 */
TEST_F_TIMEOUT(torus, parent_and_children_at_once_never_mix, 180)
{
	static const int cols[N] = { 0, 1, 0, 1 }, rows[N] = { 0, 0, 1, 1 };
	static const int key[N] = { 0, 0, 0, 0 };
	int r, round;

	ASSERT_EQ(0, split_all(self, cols, key, -1));
	ASSERT_EQ(0, split_into(self, rows, key, self->row, -1));
	for (r = 0; r < N; r++) {
		ASSERT_EQ(NNP_SUCCESS, self->res[r]) TH_LOG("rank %d: %s", r, self->error[r]);
	}
	for (round = 0; round < 3; round++) {
		for (r = 0; r < N; r++) {
			ASSERT_EQ(NNP_SUCCESS, stage(self, r, self->p[r], TAG_PARENT));
			ASSERT_EQ(NNP_SUCCESS, stage(self, r, self->c[r], TAG_CHILD + cols[r]));
			ASSERT_EQ(NNP_SUCCESS, stage(self, r, self->d[r], TAG_ROW + rows[r]));
		}
		for (r = 0; r < N; r++) {
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->p[r], 0, self->p[r], 0,
							     COUNT, NNP_INT32, NNP_SUM,
							     self->parent[r], self->s[r]));
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->c[r], 0, self->c[r], 0,
							     COUNT, NNP_INT32, NNP_SUM,
							     self->child[r], self->t[r]));
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->d[r], 0, self->d[r], 0,
							     COUNT, NNP_INT32, NNP_SUM,
							     self->row[r], self->u[r]));
		}
		for (r = 0; r < N; r++) {
			EXPECT_EQ(0, wrong(self, r, self->s[r], self->p[r], TAG_PARENT, 0xf))
				TH_LOG("round %d: rank %d, parent", round, r);
			EXPECT_EQ(0, wrong(self, r, self->t[r], self->c[r],
					   TAG_CHILD + cols[r], same_color(cols, r)))
				TH_LOG("round %d: rank %d, column %d", round, r, cols[r]);
			EXPECT_EQ(0, wrong(self, r, self->u[r], self->d[r],
					   TAG_ROW + rows[r], same_color(rows, r)))
				TH_LOG("round %d: rank %d, row %d", round, r, rows[r]);
		}
	}
}

TEST_HARNESS_MAIN
