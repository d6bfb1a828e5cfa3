/* SPDX-License-Identifier: MIT */
/*
 * What the ring fault tests (comm_fault_test, link_down_test,
 * ring_reset_test) share: the ranks of a ring, one chip each, with a
 * buffer of f32 inputs; one sum's inputs staged on every rank and its
 * result checked exactly; the ring rebuilt after a failure; and a thread
 * blocked in nnp_stream_synchronize() that notes when it returned.
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

/* True if every wired port of the @n devices at @dev is up. */
static inline bool ring_links_up(nnp_device_t **dev, int n)
{
	struct nnp_port_info p[NNP_MAX_PORTS] = { { .size = sizeof(p[0]) } };
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

#define RING_MAX_RANKS	8

/* The ranks of one ring: a chip each, its stream, buffers and communicator. */
struct ring_ranks {
	int n;
	size_t count;		/* f32 elements of buf and host */
	nnp_device_t *dev[RING_MAX_RANKS];
	nnp_stream_t *s[RING_MAX_RANKS];
	nnp_comm_t *comm[RING_MAX_RANKS];
	nnp_mem_t *buf[RING_MAX_RANKS], *host[RING_MAX_RANKS];
};

/* Open chip @r as rank @r: its device, a stream and both buffers. */
static inline nnp_result_t ring_rank_open(struct ring_ranks *rr, int r)
{
	nnp_result_t res;

	res = nnp_device_open(r, &rr->dev[r]);
	if (res == NNP_SUCCESS)
		res = nnp_stream_create(rr->dev[r], &rr->s[r]);
	if (res == NNP_SUCCESS)
		res = nnp_mem_alloc(rr->dev[r], NNP_MEM_DEVICE, rr->count * 4, 0,
				    &rr->buf[r]);
	if (res == NNP_SUCCESS)
		res = nnp_mem_alloc(rr->dev[r], NNP_MEM_HOST, rr->count * 4, 0,
				    &rr->host[r]);
	return res;
}

/* Close rank @r, its communicator too (handles of a reset chip are dead). */
static inline void ring_rank_close(struct ring_ranks *rr, int r)
{
	nnp_comm_destroy(rr->comm[r]);
	nnp_mem_free(rr->buf[r]);
	nnp_mem_free(rr->host[r]);
	nnp_stream_destroy(rr->s[r]);
	nnp_device_close(rr->dev[r]);
	rr->comm[r] = NULL;
}

/* Open ranks 0..@n-1 with @count f32 elements each. */
static inline nnp_result_t ring_ranks_open(struct ring_ranks *rr, int n,
					   size_t count)
{
	nnp_result_t res = NNP_SUCCESS;
	int r;

	if (n < 2 || n > RING_MAX_RANKS)
		return NNP_ERROR_INVALID_ARGUMENT;
	memset(rr, 0, sizeof(*rr));
	rr->n = n;
	rr->count = count;
	for (r = 0; r < n && res == NNP_SUCCESS; r++)
		res = ring_rank_open(rr, r);
	return res;
}

static inline void ring_ranks_close(struct ring_ranks *rr)
{
	int r;

	for (r = 0; r < rr->n; r++)
		ring_rank_close(rr, r);
}

/* Every rank's inputs into its buffer. */
static inline nnp_result_t ring_ranks_stage(struct ring_ranks *rr)
{
	nnp_result_t res = NNP_SUCCESS;
	int r;

	for (r = 0; r < rr->n && res == NNP_SUCCESS; r++)
		res = ring_stage_input(rr->s[r], rr->buf[r], rr->host[r], r,
				       rr->count);
	return res;
}

/* Rank @r's in-place f32 sum over the ring, queued on its stream. */
static inline nnp_result_t ring_allreduce(struct ring_ranks *rr, int r)
{
	return nnp_allreduce(rr->buf[r], 0, rr->buf[r], 0, rr->count,
			     NNP_FLOAT32, NNP_SUM, rr->comm[r], rr->s[r]);
}

/* Wait for rank @r's allreduce; its elements that are not the exact sum. */
static inline long ring_rank_errors(struct ring_ranks *rr, int r)
{
	return ring_sum_errors(rr->s[r], rr->buf[r], rr->host[r], rr->n,
			       rr->count);
}

/*
 * After a failure: chip @lost (or none, -1) was reset, so its dead handles
 * are opened again; every other rank resets its stream. Then a new
 * communicator over all ranks, fresh inputs, and the allreduce queued on
 * every rank; ring_rank_errors() tells whether each came out exact.
 */
static inline nnp_result_t ring_ranks_restart(struct ring_ranks *rr, int lost)
{
	nnp_result_t res;
	int r;

	if (lost >= 0) {
		ring_rank_close(rr, lost);
		res = ring_rank_open(rr, lost);
		if (res != NNP_SUCCESS)
			return res;
	}
	for (r = 0; r < rr->n; r++) {
		if (r != lost) {
			res = nnp_stream_reset(rr->s[r]);
			if (res != NNP_SUCCESS)
				return res;
		}
		nnp_comm_destroy(rr->comm[r]);
		rr->comm[r] = NULL;
	}
	res = ring_ranks_stage(rr);
	if (res == NNP_SUCCESS)
		res = nnp_comm_init_all(rr->dev, rr->n, rr->comm);
	for (r = 0; r < rr->n && res == NNP_SUCCESS; r++)
		res = ring_allreduce(rr, r);
	return res;
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
