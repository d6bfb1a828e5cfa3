// SPDX-License-Identifier: MIT
/*
 * Communicator options (nnp_comm_init_rank_config, libnnp 0.9) on the
 * VM's first two devices, each rank on a thread of its own: a config of
 * a size libnnp does not know, a timeout out of range and names with a
 * terminal escape, a space or 32 characters are refused, naming the
 * member, before any rendezvous; a named communicator with a 1500 ms
 * timeout works, says its name in the errors of its calls, and a receive
 * no one sends to fails PEER_TIMEOUT after 1.5 s, not the default 30
 * minutes; NULL for the config is nnp_comm_init_rank(), and so is a
 * config of the size before blocking or before group_fusion (what
 * follows unread).
 *
 * Non-blocking creation (blocking = 0): two communicators made at once
 * from one thread, each NNP_IN_PROGRESS until both ranks are in, every
 * call on one refused NNP_IN_PROGRESS until then, then exact; a
 * rendezvous that never completes reported as its failure by
 * nnp_comm_get_async_error(), with its last error; nnp_comm_abort() and
 * nnp_comm_destroy() end a creation under way within 1 s.
 *
 * group_fusion: 1 in the config runs a group's 32 small allreduces as one
 * (hardware interface 1.25: at most a quarter of the packets), made
 * blocking or not, and in a communicator split from it; 0 keeps them
 * apart though NNP_GROUP_FUSION=1 is set; 2 is refused.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>

#include "device_counters.h"
#include "guest_env.h"
#include "kselftest_harness.h"

#define COUNT	1000

struct rank_args {
	nnp_device_t *dev;
	const nnp_unique_id_t *id;
	const nnp_comm_config_t *config;
	int rank;
	nnp_comm_t *comm;
	nnp_result_t res;
	char error[512];
};

static void *join(void *arg)
{
	struct rank_args *a = arg;

	a->res = nnp_comm_init_rank_config(&a->comm, 2, a->id, a->rank, a->dev,
					   a->config);
	snprintf(a->error, sizeof(a->error), "%s", nnp_get_last_error());
	return NULL;
}

FIXTURE(cfg) {
	nnp_device_t *dev[2];
	nnp_stream_t *s[2];
	nnp_mem_t *buf[2];
	nnp_comm_t *comm[2];
};

FIXTURE_SETUP(cfg)
{
	int r;

	ASSERT_GE(GUEST_CHIPS, 2);
	for (r = 0; r < 2; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_device_open(r, &self->dev[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[r], &self->s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_DEVICE,
						     COUNT * 4, 0, &self->buf[r]));
	}
}

FIXTURE_TEARDOWN(cfg)
{
	int r;

	for (r = 0; r < 2; r++) {
		nnp_comm_destroy(self->comm[r]);
		nnp_mem_free(self->buf[r]);
		nnp_stream_destroy(self->s[r]);
		nnp_device_close(self->dev[r]);
	}
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* @comm's state, polled until it is no longer NNP_IN_PROGRESS or @s pass. */
static nnp_result_t settled(nnp_comm_t *comm, double s)
{
	double until = now_s() + s;
	nnp_result_t state = NNP_IN_PROGRESS;

	while (state == NNP_IN_PROGRESS && now_s() < until) {
		if (nnp_comm_get_async_error(comm, &state) != NNP_SUCCESS)
			return NNP_ERROR_IO;
		usleep(10 * 1000);
	}
	return state;
}

/*
 * Both ranks with @config on threads (one made non-blocking waited for);
 * 0 if both made theirs.
 */
static int make_pair(struct __test_metadata *_metadata, FIXTURE_DATA(cfg) *self,
		     const nnp_comm_config_t *config)
{
	struct rank_args a[2];
	nnp_unique_id_t id;
	pthread_t th[2];
	int r, bad = 0;

	EXPECT_EQ(NNP_SUCCESS, nnp_get_unique_id(&id));
	for (r = 0; r < 2; r++) {
		a[r] = (struct rank_args){
			.dev = self->dev[r], .id = &id, .config = config, .rank = r,
		};
		EXPECT_EQ(0, pthread_create(&th[r], NULL, join, &a[r]));
	}
	for (r = 0; r < 2; r++) {
		pthread_join(th[r], NULL);
		if (a[r].res == NNP_IN_PROGRESS && a[r].comm)
			a[r].res = settled(a[r].comm, 10);
		EXPECT_EQ(NNP_SUCCESS, a[r].res) TH_LOG("rank %d: %s", r, a[r].error);
		bad |= a[r].res != NNP_SUCCESS;
		self->comm[r] = a[r].comm;
	}
	return bad;
}

static void drop_pair(FIXTURE_DATA(cfg) *self)
{
	int r;

	for (r = 0; r < 2; r++) {
		nnp_comm_destroy(self->comm[r]);
		self->comm[r] = NULL;
	}
}

/* Each of rank @r's first @n int32 is @want. */
static void expect_all(struct __test_metadata *_metadata, FIXTURE_DATA(cfg) *self,
		       int r, int n, uint32_t want)
{
	nnp_mem_t *host;
	uint32_t *h;
	int i;

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_HOST, COUNT * 4, 0,
					     &host));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s[r], host, 0, self->buf[r], 0,
						COUNT * 4));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(host, (void **)&h));
	for (i = 0; i < n && h[i] == want; i++)
		;
	EXPECT_EQ(n, i) TH_LOG("rank %d: element %d is %#x", r, i, h[i]);
	nnp_mem_free(host);
}

/* A refusal of @config: INVALID_ARGUMENT, the last error holding @text. */
static void refused(struct __test_metadata *_metadata, FIXTURE_DATA(cfg) *self,
		    const nnp_comm_config_t *config, const char *text)
{
	nnp_comm_t *comm = NULL;
	nnp_unique_id_t id;

	ASSERT_EQ(NNP_SUCCESS, nnp_get_unique_id(&id));
	/* Refused before the rendezvous: a lone rank 0 of 2 does not wait. */
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_comm_init_rank_config(&comm, 2, &id, 0, self->dev[0], config));
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), text))
		TH_LOG("last error: %s", nnp_get_last_error());
}

TEST_F_TIMEOUT(cfg, bad_configs_refused, 60)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;

	c.size = sizeof(c) + 8;
	refused(_metadata, self, &c, "config size");
	c.size = sizeof(size_t);
	refused(_metadata, self, &c, "config size");
	c.size = sizeof(c);
	c.timeout_ms = -2;
	refused(_metadata, self, &c, "config timeout_ms -2");
	c.timeout_ms = 4294967295ll;
	refused(_metadata, self, &c, "config timeout_ms 4294967295");
	c.timeout_ms = -1;
	c.name = "tp\x1b[31m";
	refused(_metadata, self, &c, "config name");
	c.name = "tp stage";
	refused(_metadata, self, &c, "config name");
	c.name = "abcdefghijklmnopqrstuvwxyz012345";	/* 32 */
	refused(_metadata, self, &c, "config name");
	c.name = "";
	refused(_metadata, self, &c, "config name");
	c.name = NULL;
	c.blocking = 2;
	refused(_metadata, self, &c, "config blocking 2");
	c.blocking = 1;
	c.group_fusion = 2;
	refused(_metadata, self, &c, "config group_fusion 2: -1 (the default), 0 or 1");
	c.group_fusion = -2;
	refused(_metadata, self, &c, "config group_fusion -2");
}

TEST_F_TIMEOUT(cfg, old_size_config_is_blocking, 60)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;

	/* A program built before blocking: whatever lies past its size is not read. */
	c.size = offsetof(nnp_comm_config_t, blocking);
	c.blocking = 0;
	ASSERT_EQ(0, make_pair(_metadata, self, &c));
	drop_pair(self);
	/* One built before group_fusion: its 5 there is not read. */
	c.size = offsetof(nnp_comm_config_t, group_fusion);
	c.blocking = 1;
	c.group_fusion = 5;
	ASSERT_EQ(0, make_pair(_metadata, self, &c));
}

TEST_F_TIMEOUT(cfg, nonblocking_made_while_the_caller_goes_on, 60)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;
	nnp_result_t state;
	nnp_unique_id_t id;
	double t0;
	int r;

	c.blocking = 0;
	ASSERT_EQ(NNP_SUCCESS, nnp_get_unique_id(&id));
	t0 = now_s();
	ASSERT_EQ(NNP_IN_PROGRESS, nnp_comm_init_rank_config(&self->comm[0], 2, &id, 0,
							     self->dev[0], &c));
	EXPECT_LT(now_s() - t0, 0.5);
	ASSERT_NE(NULL, self->comm[0]);
	EXPECT_EQ(0, nnp_comm_rank(self->comm[0]));
	EXPECT_EQ(2, nnp_comm_count(self->comm[0]));
	/* Rank 1 is not in yet: still being made, and refused. */
	usleep(300 * 1000);
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_get_async_error(self->comm[0], &state));
	EXPECT_EQ(NNP_IN_PROGRESS, state);
	EXPECT_EQ(NNP_IN_PROGRESS, nnp_allreduce(self->buf[0], 0, self->buf[0], 0, COUNT,
						 NNP_INT32, NNP_SUM, self->comm[0],
						 self->s[0]));
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), "still being made"))
		TH_LOG("last error: %s", nnp_get_last_error());
	EXPECT_EQ(NNP_IN_PROGRESS, nnp_send(self->buf[0], 0, COUNT, NNP_INT32, 1,
					    self->comm[0], self->s[0]));
	/* Rank 1 from the same thread: both are made. */
	ASSERT_EQ(NNP_IN_PROGRESS, nnp_comm_init_rank_config(&self->comm[1], 2, &id, 1,
							     self->dev[1], &c));
	for (r = 0; r < 2; r++)
		ASSERT_EQ(NNP_SUCCESS, settled(self->comm[r], 10)) TH_LOG("rank %d", r);
	/* And exact: 0x01010101 from each rank. */
	for (r = 0; r < 2; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s[r], self->buf[r], 0, 1,
							COUNT * 4));
		ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[r], 0, self->buf[r], 0, COUNT,
						     NNP_INT32, NNP_SUM, self->comm[r],
						     self->s[r]));
	}
	for (r = 0; r < 2; r++)
		expect_all(_metadata, self, r, COUNT, 0x02020202u);
}

TEST_F_TIMEOUT(cfg, nonblocking_failure_is_reported, 60)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;
	nnp_unique_id_t id;

	c.blocking = 0;
	/* The rendezvous gives up after 1 s: rank 1 never comes. */
	setenv("NNP_COMM_TIMEOUT_S", "1", 1);
	ASSERT_EQ(NNP_SUCCESS, nnp_get_unique_id(&id));
	ASSERT_EQ(NNP_IN_PROGRESS, nnp_comm_init_rank_config(&self->comm[0], 2, &id, 0,
							     self->dev[0], &c));
	EXPECT_EQ(NNP_ERROR_TIMEOUT, settled(self->comm[0], 15));
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), "rank 1 never joined the rendezvous"))
		TH_LOG("last error: %s", nnp_get_last_error());
	EXPECT_EQ(NNP_ERROR_TIMEOUT, nnp_allreduce(self->buf[0], 0, self->buf[0], 0, COUNT,
						   NNP_INT32, NNP_SUM, self->comm[0],
						   self->s[0]));
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), "the communicator was not made: rank 1 never joined"))
		TH_LOG("last error: %s", nnp_get_last_error());
}

TEST_F_TIMEOUT(cfg, abort_and_destroy_end_a_creation_under_way, 60)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;
	nnp_unique_id_t id;
	nnp_comm_t *comm;
	double t0;
	int k;

	c.blocking = 0;
	/* Rank 1 never comes, and the rendezvous would wait its 60 s. */
	for (k = 0; k < 2; k++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_get_unique_id(&id));
		ASSERT_EQ(NNP_IN_PROGRESS, nnp_comm_init_rank_config(&comm, 2, &id, 0,
								     self->dev[0], &c));
		usleep(200 * 1000);
		t0 = now_s();
		if (k)
			nnp_comm_destroy(comm);
		else
			EXPECT_EQ(NNP_SUCCESS, nnp_comm_abort(comm));
		EXPECT_LT(now_s() - t0, 1.0) TH_LOG("%s", k ? "destroy" : "abort");
	}
}

TEST_F_TIMEOUT(cfg, named_with_its_own_timeout, 120)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;
	struct nnp_stream_error err = { .size = sizeof(err) };
	struct timespec t0, t1;
	double waited;

	c.name = "tp.stage-1_b";
	c.timeout_ms = 1500;
	ASSERT_EQ(0, make_pair(_metadata, self, &c));
	EXPECT_EQ(1, nnp_comm_rank(self->comm[1]));
	/* It works: an allreduce of both. */
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s[0], self->buf[0], 0, 0, COUNT * 4));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s[1], self->buf[1], 0, 0, COUNT * 4));
	ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[0], 0, self->buf[0], 0, COUNT,
					     NNP_INT32, NNP_SUM, self->comm[0], self->s[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[1], 0, self->buf[1], 0, COUNT,
					     NNP_INT32, NNP_SUM, self->comm[1], self->s[1]));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[1]));
	/* Its errors name it. */
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_send(self->buf[0], 0, COUNT, NNP_INT32, 2, self->comm[0], self->s[0]));
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), "comm tp.stage-1_b: nnp_send"))
		TH_LOG("last error: %s", nnp_get_last_error());
	/* A receive nobody sends to gives up after its 1.5 s. */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(NNP_SUCCESS, nnp_recv(self->buf[0], 0, COUNT, NNP_INT32, 1,
					self->comm[0], self->s[0]));
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_synchronize(self->s[0]));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waited = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	EXPECT_GE(waited, 1.4) TH_LOG("gave up after %.2f s", waited);
	ASSERT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_error(self->s[0], &err));
	EXPECT_EQ(0x14, err.status) TH_LOG("status %#x: %s", err.status, err.what);
}

TEST_F_TIMEOUT(cfg, null_config_is_the_default, 60)
{
	ASSERT_EQ(0, make_pair(_metadata, self, NULL));
	EXPECT_EQ(2, nnp_comm_count(self->comm[0]));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_send(self->buf[0], 0, COUNT, NNP_INT32, 2, self->comm[0], self->s[0]));
	EXPECT_EQ(0, strncmp(nnp_get_last_error(), "nnp_send of", 11))
		TH_LOG("last error: %s", nnp_get_last_error());
}

/*
 * Packets both devices send for 32 sums of 16 int32 in one group on
 * self->comm, each sum exact.
 */
static uint64_t group_packets(struct __test_metadata *_metadata,
			      FIXTURE_DATA(cfg) *self)
{
	uint64_t before = 0, after = 0;
	int r, k;

	for (r = 0; r < 2; r++) {
		before += icl_sent(self->dev[r], true);
		EXPECT_EQ(NNP_SUCCESS, nnp_memset_async(self->s[r], self->buf[r], 0, 1,
							COUNT * 4));
	}
	EXPECT_EQ(NNP_SUCCESS, nnp_group_start());
	for (r = 0; r < 2; r++)
		for (k = 0; k < 32; k++)
			EXPECT_EQ(NNP_SUCCESS, nnp_allreduce(self->buf[r], k * 64, self->buf[r],
							     k * 64, 16, NNP_INT32, NNP_SUM,
							     self->comm[r], self->s[r]));
	EXPECT_EQ(NNP_SUCCESS, nnp_group_end()) TH_LOG("%s", nnp_get_last_error());
	for (r = 0; r < 2; r++) {
		EXPECT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]))
			TH_LOG("rank %d: %s", r, nnp_get_last_error());
		after += icl_sent(self->dev[r], true);
		expect_all(_metadata, self, r, 32 * 16, 0x02020202u);
	}
	return after - before;
}

struct split_args {
	nnp_comm_t *parent, *child;
	nnp_result_t res;
};

static void *split_main(void *arg)
{
	struct split_args *a = arg;

	a->res = nnp_comm_split(a->parent, 0, 0, &a->child);
	return NULL;
}

/* self->comm split into one color on both ranks' threads, in its place. */
static void split_pair(struct __test_metadata *_metadata, FIXTURE_DATA(cfg) *self)
{
	struct split_args a[2];
	pthread_t th[2];
	int r;

	for (r = 0; r < 2; r++) {
		a[r] = (struct split_args){ .parent = self->comm[r] };
		ASSERT_EQ(0, pthread_create(&th[r], NULL, split_main, &a[r]));
	}
	for (r = 0; r < 2; r++)
		pthread_join(th[r], NULL);
	for (r = 0; r < 2; r++) {
		EXPECT_EQ(NNP_SUCCESS, a[r].res) TH_LOG("rank %d", r);
		nnp_comm_destroy(self->comm[r]);
		self->comm[r] = a[r].child;
	}
}

TEST_F_TIMEOUT(cfg, group_fusion_from_the_config, 120)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;
	uint64_t apart, fused, split, nonblocking;
	int bad;

	/* 0 keeps them apart whatever NNP_GROUP_FUSION says. */
	setenv("NNP_GROUP_FUSION", "1", 1);
	c.group_fusion = 0;
	bad = make_pair(_metadata, self, &c);
	unsetenv("NNP_GROUP_FUSION");
	ASSERT_EQ(0, bad);
	apart = group_packets(_metadata, self);
	drop_pair(self);

	c.group_fusion = 1;
	ASSERT_EQ(0, make_pair(_metadata, self, &c));
	fused = group_packets(_metadata, self);
	split_pair(_metadata, self);
	ASSERT_NE(NULL, self->comm[0]);
	ASSERT_NE(NULL, self->comm[1]);
	split = group_packets(_metadata, self);
	drop_pair(self);

	c.blocking = 0;
	ASSERT_EQ(0, make_pair(_metadata, self, &c));
	nonblocking = group_packets(_metadata, self);

	TH_LOG("packets of 32 allreduces in a group: %llu apart, %llu fused, %llu on its split, %llu made non-blocking",
	       (unsigned long long)apart, (unsigned long long)fused,
	       (unsigned long long)split, (unsigned long long)nonblocking);
	EXPECT_LE(4 * fused, apart);
	EXPECT_LE(4 * split, apart);
	EXPECT_LE(4 * nonblocking, apart);
}

TEST_HARNESS_MAIN
