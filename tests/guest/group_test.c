// SPDX-License-Identifier: MIT
/*
 * Group calls (nnp_group_start/nnp_group_end, hardware interface 1.13)
 * across every nnp device of the VM, one process driving all
 * (nnp_comm_init_all), on whatever fabric the VM has: each rank receives
 * from every other rank before it sends to any, in one group, and every
 * message arrives byte for byte with no host DMA (one after another
 * outside a group, the first receives would wait for sends queued behind
 * other receives); 32 small allreduces and the other collectives in one
 * group, exact and in the order issued (the device runs small ones at
 * once, hardware interface 1.14, but not two on one buffer); 32
 * allreduces of 8 bytes in a group in at most 4 times one's modeled time,
 * and of 64 bytes on communicators made with NNP_GROUP_FUSION=1 run as
 * one (1.25),
 * exact, with at most a quarter of the packets they send each on its
 * own (NNP_GROUP_FUSION=yes refused); collectives and messages in one
 * group; nested groups launch at the outermost end; and the refusals: a
 * group ended twice, an operation refused inside a group (nothing of the
 * group runs, the communicator stays usable), a communicator destroyed
 * while a group holds its operations, and more sends and receives on one
 * stream than a group takes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnp/nnp.h>

#include "all_devices.h"
#include "device_counters.h"
#include "guest_env.h"
#include "kselftest_harness.h"

#define GUARD		0xa5
#define COUNT		20001		/* int32 elements a message */
#define PART		(COUNT * 4)
#define TIMEOUT_S	600

FIXTURE(grp) {
	struct all_devices d;
	size_t cap;
};

FIXTURE_SETUP(grp)
{
	const char *why;

	self->cap = (size_t)GUEST_CHIPS * PART;
	why = all_devices_open(&self->d, self->cap);
	ASSERT_EQ(NULL, why) TH_LOG("%s", why);
}

FIXTURE_TEARDOWN(grp)
{
	all_devices_close(&self->d);
}

/* What rank @from sends rank @to, element @i. */
static int32_t msg(int from, int to, size_t i)
{
	return from * 1000003 + to * 10007 + (int32_t)i;
}

/* Fill rank @r's a with its messages (part p for rank p) and b with GUARD. */
static void stage(struct __test_metadata *_metadata, FIXTURE_DATA(grp) *self,
		  int r)
{
	int32_t *h;
	size_t i;
	int p;

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(self->d.host[r], (void **)&h));
	for (p = 0; p < self->d.n; p++)
		for (i = 0; i < COUNT; i++)
			h[p * COUNT + i] = msg(r, p, i);
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.a[r], 0,
						self->d.host[r], 0, self->cap));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->d.s[r], self->d.b[r], 0, GUARD,
						self->cap));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
}

/* Rank @r's b, read back into its host buffer. */
static int32_t *read_b(struct __test_metadata *_metadata, FIXTURE_DATA(grp) *self,
		       int r)
{
	int32_t *h = NULL;

	EXPECT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r], 0,
						self->d.b[r], 0, self->cap));
	EXPECT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
	nnp_mem_map(self->d.host[r], (void **)&h);
	return h;
}

/*
 * Every rank receives from each other rank, the farthest first, then
 * sends to each, all in one group: routed pairs at every distance.
 */
TEST_F_TIMEOUT(grp, receives_posted_before_sends, TIMEOUT_S)
{
	uint64_t dma[MAXDEV];
	int n = self->d.n, r, d;

	for (r = 0; r < n; r++) {
		stage(_metadata, self, r);
		dma[r] = host_dma_bytes(self->d.dev[r]);
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
	for (r = 0; r < n; r++)
		for (d = n - 1; d >= 1; d--) {
			int from = (r + n - d) % n;

			ASSERT_EQ(NNP_SUCCESS, nnp_recv(self->d.b[r], from * PART, COUNT,
							NNP_INT32, from, self->d.comm[r],
							self->d.s[r]))
				TH_LOG("rank %d from %d: %s", r, from, nnp_get_last_error());
		}
	for (r = 0; r < n; r++)
		for (d = 1; d < n; d++) {
			int to = (r + d) % n;

			ASSERT_EQ(NNP_SUCCESS, nnp_send(self->d.a[r], to * PART, COUNT,
							NNP_INT32, to, self->d.comm[r],
							self->d.s[r]));
		}
	ASSERT_EQ(NNP_SUCCESS, nnp_group_end()) TH_LOG("%s", nnp_get_last_error());
	for (r = 0; r < n; r++) {
		size_t i, bad = 0;
		int32_t *h;
		int p;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
		EXPECT_EQ(dma[r], host_dma_bytes(self->d.dev[r]));
		h = read_b(_metadata, self, r);
		ASSERT_NE(NULL, h);
		for (p = 0; p < n; p++)
			for (i = 0; i < COUNT; i++)
				bad += h[p * COUNT + i] !=
				       (p != r ? msg(p, r, i) : (int32_t)0xa5a5a5a5);
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
	}
}

/*
 * The modeled ns of @k allreduces of two floats on every rank (in one
 * group if more than one), from the last rank's stamp before them to the
 * last rank's after, as nnptool bench times a collective.
 */
static uint64_t modeled_allreduces(struct __test_metadata *_metadata,
				   FIXTURE_DATA(grp) *self, int k)
{
	size_t at = self->cap - 16;
	uint64_t start = 0, end = 0;
	int n = self->d.n, r, j;

	for (r = 0; r < n; r++)
		EXPECT_EQ(NNP_SUCCESS, nnp_timestamp_async(self->d.s[r], self->d.host[r], at));
	if (k > 1)
		EXPECT_EQ(NNP_SUCCESS, nnp_group_start());
	for (r = 0; r < n; r++)
		for (j = 0; j < k; j++)
			EXPECT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], j * 8, self->d.b[r],
							     j * 8, 2, NNP_FLOAT32, NNP_SUM,
							     self->d.comm[r], self->d.s[r]));
	if (k > 1)
		EXPECT_EQ(NNP_SUCCESS, nnp_group_end()) TH_LOG("%s", nnp_get_last_error());
	for (r = 0; r < n; r++) {
		const uint64_t *t;

		EXPECT_EQ(NNP_SUCCESS, nnp_timestamp_async(self->d.s[r], self->d.host[r],
							   at + 8));
		EXPECT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
		EXPECT_EQ(NNP_SUCCESS, nnp_mem_map(self->d.host[r], (void **)&t));
		start = t[at / 8] > start ? t[at / 8] : start;
		end = t[at / 8 + 1] > end ? t[at / 8 + 1] : end;
	}
	return end - start;
}

/*
 * 32 allreduces of 8 bytes in one group run at once on the devices
 * (hardware interface 1.14): at most 4 times one on the modeled clock.
 */
TEST_F_TIMEOUT(grp, small_allreduces_at_once, TIMEOUT_S)
{
	uint64_t one = modeled_allreduces(_metadata, self, 1);
	uint64_t many = modeled_allreduces(_metadata, self, 32);

	TH_LOG("modeled: one allreduce of 8 bytes %llu ns, 32 in a group %llu ns",
	       (unsigned long long)one, (unsigned long long)many);
	EXPECT_LE(many, 4 * one);
}

/* Each rank's a: (rank + 1) * (i % 97 + 1) at float i; its b zero. */
static void fill_inputs(struct __test_metadata *_metadata,
			FIXTURE_DATA(grp) *self)
{
	int r;

	for (r = 0; r < self->d.n; r++) {
		size_t i;
		float *h;

		ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(self->d.host[r], (void **)&h));
		for (i = 0; i < 4096; i++)
			h[i] = (float)(r + 1) * (float)(i % 97 + 1);
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.a[r], 0,
							self->d.host[r], 0, 4096 * 4));
		ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->d.s[r], self->d.b[r], 0, 0,
							4096 * 4));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
	}
}

/*
 * 32 sums of 16 floats in one group on every rank, on communicators
 * @comm: each exact, and the packets all the devices sent for them. (Of
 * two floats, most of the ranks' segments would be empty on 8 chips,
 * and their ring steps send nothing.)
 */
static uint64_t sums_in_a_group(struct __test_metadata *_metadata,
				FIXTURE_DATA(grp) *self, nnp_comm_t **comm)
{
	float tri = (float)self->d.n * (float)(self->d.n + 1) / 2;
	uint64_t before = 0, after = 0;
	int n = self->d.n, r, k;

	fill_inputs(_metadata, self);
	for (r = 0; r < n; r++)
		before += icl_sent(self->d.dev[r], true);
	EXPECT_EQ(NNP_SUCCESS, nnp_group_start());
	for (r = 0; r < n; r++) {
		for (k = 0; k < 32; k++)
			EXPECT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], k * 64, self->d.b[r],
							     k * 64, 16, NNP_FLOAT32, NNP_SUM,
							     comm[r], self->d.s[r]));
	}
	EXPECT_EQ(NNP_SUCCESS, nnp_group_end()) TH_LOG("%s", nnp_get_last_error());
	for (r = 0; r < n; r++) {
		const float *got;
		size_t i, bad = 0;

		EXPECT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
		after += icl_sent(self->d.dev[r], true);
		EXPECT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r], 0,
							self->d.b[r], 0, 512 * 4));
		EXPECT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		nnp_mem_map(self->d.host[r], (void **)&got);
		for (i = 0; i < 512; i++)
			bad += got[i] != tri * (float)(i % 97 + 1);
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
	}
	return after - before;
}

/*
 * 32 allreduces of 64 bytes in a group, on communicators made with
 * NNP_GROUP_FUSION=1, run as one allreduce (hardware interface 1.25; on
 * 8 chips two, as libnnp's groups hold at most 384 packets):
 * exact, and at most a quarter of the packets the same group sends on
 * communicators made without it, each allreduce on its own.
 */
TEST_F_TIMEOUT(grp, small_allreduces_run_as_one, TIMEOUT_S)
{
	nnp_comm_t *fusing[MAXDEV];
	uint64_t apart, fused;
	int r;

	apart = sums_in_a_group(_metadata, self, self->d.comm);
	setenv("NNP_GROUP_FUSION", "yes", 1);
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_comm_init_all(self->d.dev, self->d.n, fusing));
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), "NNP_GROUP_FUSION=yes: 1, or 0"));
	setenv("NNP_GROUP_FUSION", "1", 1);
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->d.dev, self->d.n, fusing))
		TH_LOG("%s", nnp_get_last_error());
	unsetenv("NNP_GROUP_FUSION");
	fused = sums_in_a_group(_metadata, self, fusing);
	for (r = 0; r < self->d.n; r++)
		nnp_comm_destroy(fusing[r]);
	TH_LOG("packets sent by 32 allreduces in a group: %llu each on its own, %llu fused",
	       (unsigned long long)apart, (unsigned long long)fused);
	EXPECT_LE(4 * fused, apart);
}

/*
 * 32 allreduces of two floats, an allreduce twice in place on one buffer,
 * a broadcast, an allgather and a reduce-scatter, in one group: each
 * exact, the two in place in the order issued (n times the sum).
 */
TEST_F_TIMEOUT(grp, collectives_in_one_group, TIMEOUT_S)
{
	const size_t small = 32 * 2, in_place = small, bcast = in_place + 4,
		     gathered = bcast + 8, scattered = gathered + 3 * MAXDEV;
	int n = self->d.n, r, k;

	fill_inputs(_metadata, self);
	ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
	for (r = 0; r < n; r++) {
		nnp_comm_t *c = self->d.comm[r];
		nnp_stream_t *s = self->d.s[r];

		for (k = 0; k < 32; k++)
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], k * 8, self->d.b[r],
							     k * 8, 2, NNP_FLOAT32,
							     NNP_SUM, c, s));
		for (k = 0; k < 2; k++)
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], in_place * 4,
							     self->d.a[r], in_place * 4, 4,
							     NNP_FLOAT32, NNP_SUM, c, s));
		ASSERT_EQ(NNP_SUCCESS, nnp_broadcast(self->d.a[r], 0, self->d.b[r],
						     bcast * 4, 8, NNP_FLOAT32,
						     n - 1, c, s));
		ASSERT_EQ(NNP_SUCCESS, nnp_allgather(self->d.a[r], 0, self->d.b[r],
						     gathered * 4, 3, NNP_FLOAT32, c, s));
		ASSERT_EQ(NNP_SUCCESS, nnp_reduce_scatter(self->d.a[r], 0, self->d.b[r],
							  scattered * 4, 5, NNP_FLOAT32,
							  NNP_MAX, c, s));
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_group_end()) TH_LOG("%s", nnp_get_last_error());
	for (r = 0; r < n; r++) {
		/* What a rank's a held at element i: (rank + 1) * (i % 97 + 1). */
		float tri = (float)n * (float)(n + 1) / 2, *got;
		size_t i, bad = 0;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r], 0,
							self->d.b[r], 0, 4096 * 4));
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.host[r],
							4096 * 4, self->d.a[r], 0, 4096 * 4));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		nnp_mem_map(self->d.host[r], (void **)&got);
		for (i = 0; i < small; i++)
			bad += got[i] != tri * (float)(i % 97 + 1);
		for (i = in_place; i < in_place + 4; i++)
			bad += got[4096 + i] != (float)n * tri * (float)(i % 97 + 1);
		for (i = 0; i < 8; i++)
			bad += got[bcast + i] != (float)n * (float)(i % 97 + 1);
		for (i = 0; i < 3 * (size_t)n; i++)
			bad += got[gathered + i] != (float)(i / 3 + 1) * (float)(i % 3 + 1);
		for (i = 0; i < 5; i++)
			bad += got[scattered + i] !=
			       (float)n * (float)((r * 5 + i) % 97 + 1);
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
	}
}

/*
 * An allreduce and a ring of messages posted receive first, in one group
 * inside another: nothing goes before the outer end, then all of it.
 */
TEST_F_TIMEOUT(grp, nested_group_of_collective_and_messages, TIMEOUT_S)
{
	int n = self->d.n, r;

	for (r = 0; r < n; r++)
		stage(_metadata, self, r);
	ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
	ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
	for (r = 0; r < n; r++) {
		int prev = (r + n - 1) % n, next = (r + 1) % n;

		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], 0, self->d.b[r], 0,
						     COUNT, NNP_INT32, NNP_SUM,
						     self->d.comm[r], self->d.s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_recv(self->d.b[r], PART, COUNT, NNP_INT32,
						prev, self->d.comm[r], self->d.s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_send(self->d.a[r], next * PART, COUNT,
						NNP_INT32, next, self->d.comm[r],
						self->d.s[r]));
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_group_end());
	/* Still held: b is as staged. */
	for (r = 0; r < n; r++) {
		int32_t *h = read_b(_metadata, self, r);

		ASSERT_NE(NULL, h);
		EXPECT_EQ((int32_t)0xa5a5a5a5, h[0]);
		EXPECT_EQ((int32_t)0xa5a5a5a5, h[COUNT]);
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_group_end()) TH_LOG("%s", nnp_get_last_error());
	for (r = 0; r < n; r++) {
		int prev = (r + n - 1) % n;
		size_t i, bad = 0;
		int32_t *h;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
		h = read_b(_metadata, self, r);
		ASSERT_NE(NULL, h);
		for (i = 0; i < COUNT; i++) {
			int32_t sum = 0;
			int p;

			for (p = 0; p < n; p++)
				sum += msg(p, 0, i);
			bad += h[i] != sum;
			bad += h[COUNT + i] != msg(prev, r, i);
		}
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
	}
}

/* The last error holds @text. */
#define EXPECT_LAST_ERROR(text) \
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), text)) \
		TH_LOG("last error: %s", nnp_get_last_error())

/*
 * Ended twice, or never started: INVALID_ARGUMENT. A send to a rank out
 * of range inside a group fails at once and fails the group: nothing of
 * it runs (the allreduce before it leaves b as it was), and the
 * communicator works after.
 */
TEST_F_TIMEOUT(grp, refused_operation_fails_the_group, TIMEOUT_S)
{
	int n = self->d.n, r;

	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_group_end());
	EXPECT_LAST_ERROR("no group is open");
	ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
	ASSERT_EQ(NNP_SUCCESS, nnp_group_end());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_group_end());

	for (r = 0; r < n; r++)
		stage(_metadata, self, r);
	ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], 0, self->d.b[r], 0,
						     COUNT, NNP_INT32, NNP_SUM,
						     self->d.comm[r], self->d.s[r]));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_send(self->d.a[0], 0, COUNT, NNP_INT32, n, self->d.comm[0],
			   self->d.s[0]));
	EXPECT_LAST_ERROR("with peer");
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_group_end());
	EXPECT_LAST_ERROR("nothing launched");
	EXPECT_LAST_ERROR("with peer");
	for (r = 0; r < n; r++) {
		int32_t *h = read_b(_metadata, self, r);

		ASSERT_NE(NULL, h);
		EXPECT_EQ((int32_t)0xa5a5a5a5, h[0]);
	}
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], 0, self->d.b[r], 0,
						     COUNT, NNP_INT32, NNP_SUM,
						     self->d.comm[r], self->d.s[r]));
	for (r = 0; r < n; r++) {
		int32_t *h, sum = 0;
		int p;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]));
		h = read_b(_metadata, self, r);
		ASSERT_NE(NULL, h);
		for (p = 0; p < n; p++)
			sum += msg(p, 0, 7);
		EXPECT_EQ(sum, h[7]);
	}
}

/*
 * A communicator destroyed or aborted while a group holds its operations:
 * the group drops them and fails; 127 sends on one stream are the most a group
 * takes, the 128th fails it.
 */
TEST_F_TIMEOUT(grp, destroyed_and_oversized_groups_fail, TIMEOUT_S)
{
	nnp_comm_t *other[MAXDEV];
	int n = self->d.n, r, k;
	int32_t *h;

	/* Destroyed, then aborted: the group holds nothing of a freed one. */
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(self->d.dev, n, other));
		ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
		for (r = 0; r < n; r++)
			ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->d.a[r], 0, self->d.b[r], 0,
							     16, NNP_INT32, NNP_SUM,
							     other[r], self->d.s[r]));
		for (r = 0; r < n; r++) {
			if (k) {
				EXPECT_EQ(NNP_SUCCESS, nnp_comm_abort(other[r]));
			} else {
				nnp_comm_destroy(other[r]);
			}
		}
		EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_group_end());
		EXPECT_LAST_ERROR("was destroyed");
	}

	ASSERT_EQ(NNP_SUCCESS, nnp_group_start());
	for (k = 0; k < 127; k++)
		ASSERT_EQ(NNP_SUCCESS, nnp_send(self->d.a[0], 0, 1, NNP_INT32, 1,
						self->d.comm[0], self->d.s[0]))
			TH_LOG("send %d: %s", k, nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_send(self->d.a[0], 0, 1, NNP_INT32, 1, self->d.comm[0], self->d.s[0]));
	EXPECT_LAST_ERROR("at most 127");
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_group_end());
	/* Nothing was sent: the pair's next message is still the first. */
	stage(_metadata, self, 0);
	stage(_metadata, self, 1);
	ASSERT_EQ(NNP_SUCCESS, nnp_send(self->d.a[0], PART, COUNT, NNP_INT32, 1,
					self->d.comm[0], self->d.s[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_recv(self->d.b[1], 0, COUNT, NNP_INT32, 0,
					self->d.comm[1], self->d.s[1]));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[1]))
		TH_LOG("%s", nnp_get_last_error());
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[0]));
	h = read_b(_metadata, self, 1);
	ASSERT_NE(NULL, h);
	EXPECT_EQ(msg(0, 1, 0), h[0]);
	EXPECT_EQ(msg(0, 1, COUNT - 1), h[COUNT - 1]);
}

/* Elements rank @from sends rank @to in the alltoallv tests; 1 to 0 none. */
static size_t vcount(int from, int to)
{
	return from == 1 && to == 0 ? 0 : 300 * from + 77 * to + (from == to) * 5 + 1;
}

/*
 * Rank @r's counts and displacements: what it sends, packed in peer order,
 * and what it receives, packed likewise; @skew adds 1 to what rank 1
 * expects from rank 0.
 */
static void vlayout(int n, int r, int skew, size_t *sc, size_t *sd, size_t *rc,
		    size_t *rd)
{
	size_t s = 0, t = 0;
	int p;

	for (p = 0; p < n; p++) {
		sc[p] = vcount(r, p);
		sd[p] = s;
		s += sc[p];
		rc[p] = vcount(p, r) + (skew && r == 1 && p == 0);
		rd[p] = t;
		t += rc[p];
	}
}

/*
 * Uneven counts, a pair with none: every rank gets each peer's part, its
 * own by a copy, byte for byte, and nothing outside them.
 */
TEST_F_TIMEOUT(grp, alltoallv_uneven_counts, TIMEOUT_S)
{
	size_t sc[MAXDEV][MAXDEV], sd[MAXDEV][MAXDEV], rc[MAXDEV][MAXDEV],
	       rd[MAXDEV][MAXDEV];
	int n = self->d.n, r, p;

	for (r = 0; r < n; r++) {
		int32_t *h;
		size_t i;

		vlayout(n, r, 0, sc[r], sd[r], rc[r], rd[r]);
		stage(_metadata, self, r);
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(self->d.host[r], (void **)&h));
		for (p = 0; p < n; p++)
			for (i = 0; i < sc[r][p]; i++)
				h[sd[r][p] + i] = msg(r, p, i);
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->d.s[r], self->d.a[r], 0,
							self->d.host[r], 0, self->cap));
	}
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_alltoallv(self->d.a[r], 0, sc[r], sd[r],
						     self->d.b[r], 0, rc[r], rd[r],
						     NNP_INT32, self->d.comm[r],
						     self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
	for (r = 0; r < n; r++) {
		size_t i, bad = 0, end = 0;
		int32_t *h;

		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->d.s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
		h = read_b(_metadata, self, r);
		ASSERT_NE(NULL, h);
		for (p = 0; p < n; p++) {
			for (i = 0; i < rc[r][p]; i++)
				bad += h[rd[r][p] + i] != msg(p, r, i);
			end = rd[r][p] + rc[r][p];
		}
		EXPECT_EQ(0, bad) TH_LOG("rank %d", r);
		EXPECT_EQ((int32_t)0xa5a5a5a5, h[end]);
	}
}

/*
 * Rank 1 expects one element more from rank 0 than rank 0 sends: its
 * stream fails MISMATCH, naming the sender and the bytes that came
 * (hardware 1.27), and no rank waits for ever; bad arguments are refused
 * at the call, naming what is wrong.
 */
TEST_F_TIMEOUT(grp, alltoallv_counts_disagree, TIMEOUT_S)
{
	size_t sc[MAXDEV][MAXDEV], sd[MAXDEV][MAXDEV], rc[MAXDEV][MAXDEV],
	       rd[MAXDEV][MAXDEV];
	struct nnp_stream_error err = { .size = sizeof(err) };
	int n = self->d.n, r;

	for (r = 0; r < n; r++) {
		vlayout(n, r, 1, sc[r], sd[r], rc[r], rd[r]);
		stage(_metadata, self, r);
	}
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_alltoallv(self->d.a[0], 0, NULL, sd[0], self->d.b[0], 0, rc[0],
				rd[0], NNP_INT32, self->d.comm[0], self->d.s[0]));
	rc[0][0]++;
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_alltoallv(self->d.a[0], 0, sc[0], sd[0], self->d.b[0], 0, rc[0],
				rd[0], NNP_INT32, self->d.comm[0], self->d.s[0]));
	EXPECT_LAST_ERROR("sends itself");
	rc[0][0]--;
	for (r = 0; r < n; r++)
		ASSERT_EQ(NNP_SUCCESS, nnp_alltoallv(self->d.a[r], 0, sc[r], sd[r],
						     self->d.b[r], 0, rc[r], rd[r],
						     NNP_INT32, self->d.comm[r],
						     self->d.s[r]));
	EXPECT_EQ(NNP_ERROR_MISMATCH, nnp_stream_synchronize(self->d.s[1]));
	EXPECT_LAST_ERROR("the ranks disagree on a message's length: rank 0 sent this rank 312 bytes, where its group takes another length");
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->d.s[1], &err));
	EXPECT_EQ(0x16, err.status) TH_LOG("rank 1: %s", err.what);
	for (r = 0; r < n; r++) {
		nnp_result_t res = nnp_stream_synchronize(self->d.s[r]);

		if (res == NNP_SUCCESS || r == 1)
			continue;
		EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, res);
		EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->d.s[r], &err));
		EXPECT_EQ(0x15, err.status) TH_LOG("rank %d: %s", r, err.what);
	}
}

TEST_HARNESS_MAIN
