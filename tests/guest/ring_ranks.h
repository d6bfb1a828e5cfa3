/* SPDX-License-Identifier: MIT */
/*
 * What the ring fault tests (comm_fault_test, ring_reset_test) share: one
 * f32 sum's inputs staged on every rank and its result checked exactly,
 * and a thread blocked in nnp_stream_synchronize() that notes when it
 * returned.
 */
#ifndef NNP_RING_RANKS_H
#define NNP_RING_RANKS_H

#include <pthread.h>
#include <string.h>
#include <time.h>

#include <nnp/nnp.h>

#include "coll_data.h"

static inline double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Rank @r's @count inputs of a sum, into @buf through @host. */
static inline nnp_result_t ring_stage_input(nnp_stream_t *s, nnp_mem_t *buf,
					    nnp_mem_t *host, int r, size_t count)
{
	nnp_result_t res;
	float *h;
	size_t i;

	res = nnp_mem_map(host, (void **)&h);
	if (res != NNP_SUCCESS)
		return res;
	for (i = 0; i < count; i++)
		h[i] = (float)input(r, i, NNP_SUM);
	res = nnp_memcpy_async(s, buf, 0, host, 0, count * 4);
	return res != NNP_SUCCESS ? res : nnp_stream_synchronize(s);
}

/*
 * Wait for @s, then count the elements of @buf (through @host) that differ
 * from the exact sum over @n ranks; -1 if a call failed.
 */
static inline long ring_sum_errors(nnp_stream_t *s, nnp_mem_t *buf,
				   nnp_mem_t *host, int n, size_t count)
{
	long bad = 0;
	float *h;
	size_t i;

	if (nnp_stream_synchronize(s) != NNP_SUCCESS ||
	    nnp_memcpy_async(s, host, 0, buf, 0, count * 4) != NNP_SUCCESS ||
	    nnp_stream_synchronize(s) != NNP_SUCCESS ||
	    nnp_mem_map(host, (void **)&h) != NNP_SUCCESS)
		return -1;
	for (i = 0; i < count; i++)
		bad += memcmp(&h[i], &(float){ (float)reduced(NNP_SUM, n, i) }, 4) != 0;
	return bad;
}

/* A thread blocked in nnp_stream_synchronize(s): its result, and when. */
struct blocked {
	nnp_stream_t *s;
	nnp_result_t res;
	double at;		/* 0 until it returned */
	pthread_t t;
};

static inline void *blocked_main(void *arg)
{
	struct blocked *b = arg;

	b->res = nnp_stream_synchronize(b->s);
	b->at = now_s();
	return NULL;
}

/* Start @b blocking on @s; 0 or pthread_create()'s error. */
static inline int blocked_start(struct blocked *b, nnp_stream_t *s)
{
	b->s = s;
	b->at = 0;
	return pthread_create(&b->t, NULL, blocked_main, b);
}

#endif /* NNP_RING_RANKS_H */
