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
 * config of the size before blocking (what follows it unread).
 *
 * Non-blocking creation (blocking = 0): two communicators made at once
 * from one thread, each NNP_IN_PROGRESS until both ranks are in, every
 * call on one refused NNP_IN_PROGRESS until then, then exact; a
 * rendezvous that never completes reported as its failure by
 * nnp_comm_get_async_error(), with its last error; nnp_comm_abort() and
 * nnp_comm_destroy() end a creation under way within 1 s.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>

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

/* Both ranks with @config on threads; 0 if both made theirs. */
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
		EXPECT_EQ(NNP_SUCCESS, a[r].res) TH_LOG("rank %d: %s", r, a[r].error);
		bad |= a[r].res != NNP_SUCCESS;
		self->comm[r] = a[r].comm;
	}
	return bad;
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

TEST_F_TIMEOUT(cfg, old_size_config_is_blocking, 60)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;

	/* A program built before blocking: whatever lies past its size is not read. */
	c.size = offsetof(nnp_comm_config_t, blocking);
	c.blocking = 0;
	ASSERT_EQ(0, make_pair(_metadata, self, &c));
}

TEST_F_TIMEOUT(cfg, nonblocking_made_while_the_caller_goes_on, 60)
{
	nnp_comm_config_t c = NNP_COMM_CONFIG_INIT;
	nnp_result_t state;
	nnp_unique_id_t id;
	nnp_mem_t *host;
	uint32_t *h;
	double t0;
	int r, i;

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
	for (r = 0; r < 2; r++) {
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[r], NNP_MEM_HOST, COUNT * 4,
						     0, &host));
		ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s[r], host, 0, self->buf[r],
							0, COUNT * 4));
		ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s[r]));
		ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(host, (void **)&h));
		for (i = 0; i < COUNT && h[i] == 0x02020202u; i++)
			;
		EXPECT_EQ(COUNT, i) TH_LOG("rank %d: element %d is %#x", r, i, h[i]);
		nnp_mem_free(host);
	}
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

TEST_HARNESS_MAIN
