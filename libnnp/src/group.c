// SPDX-License-Identifier: MIT
/*
 * Group calls, as NCCL's ncclGroupStart/ncclGroupEnd: between
 * nnp_group_start() and nnp_group_end() a thread's collectives, sends and
 * receives are held, not submitted. At the end, each stream gets its
 * held collectives in the order issued, in one submission (small ones
 * that touch no memory in common run at once as GROUPs, hardware
 * interface 1.14: group_batch.c), then its sends and receives as one
 * GROUP command (hardware interface 1.13), which the device runs all at
 * once: a ring of messages posted in any order cannot wait on itself.
 *
 * A group belongs to the thread that started it. An operation refused
 * inside it fails the whole group: nnp_group_end() then submits nothing,
 * as NCCL does, so no rank runs half of a step. Open groups are kept on a
 * list, so that destroying a communicator or stream they hold operations
 * of drops them (and fails the group) rather than leaving them dangling.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nnp_accel.h>
#include "nnp_hw.h"

#include "group.h"
#include "group_batch.h"
#include "log.h"

struct held_op {
	nnp_stream_t *stream;
	nnp_comm_t *comm;
	struct nnp_trace_op trace;	/* if traced */
	bool traced;
	struct nnp_hw_queue_cmd cmd;
	bool p2p;
};

struct group {
	int depth;			/* nnp_group_start() calls not ended */
	nnp_result_t error;		/* the first refusal, or NNP_SUCCESS */
	char why[256];			/* its last error */
	struct held_op *ops;
	size_t n, cap;
	struct group *next;		/* on open_groups */
};

static _Thread_local struct group *mine;
static pthread_mutex_t groups_lock = PTHREAD_MUTEX_INITIALIZER;
static struct group *open_groups;

static void fail_group(struct group *g, nnp_result_t res, const char *why)
{
	if (g->error != NNP_SUCCESS)
		return;
	g->error = res;
	snprintf(g->why, sizeof(g->why), "%s", why);
}

nnp_result_t nnp_group_refuse(nnp_result_t res)
{
	if (res != NNP_SUCCESS && mine) {
		pthread_mutex_lock(&groups_lock);
		fail_group(mine, res, nnp_get_last_error());
		pthread_mutex_unlock(&groups_lock);
	}
	return res;
}

bool nnp_group_open(void)
{
	return mine;
}

nnp_result_t nnp_group_start(void)
{
	struct group *g = mine;

	if (g) {
		g->depth++;
		return NNP_SUCCESS;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "nnp_group_start: no memory");
	g->depth = 1;
	pthread_mutex_lock(&groups_lock);
	g->next = open_groups;
	open_groups = g;
	pthread_mutex_unlock(&groups_lock);
	mine = g;
	return NNP_SUCCESS;
}

/* Take @g off the open list: nnp_group_forget() no longer sees it. */
static void group_unlist(struct group *g)
{
	struct group **p;

	pthread_mutex_lock(&groups_lock);
	for (p = &open_groups; *p; p = &(*p)->next)
		if (*p == g) {
			*p = g->next;
			break;
		}
	pthread_mutex_unlock(&groups_lock);
}

/* Sends and receives @g holds for @s. */
static uint32_t held_p2p(const struct group *g, const nnp_stream_t *s)
{
	uint32_t n = 0;
	size_t i;

	for (i = 0; i < g->n; i++)
		n += g->ops[i].stream == s && g->ops[i].p2p;
	return n;
}

/* Hold one more operation in @g; the last error says why not. */
static nnp_result_t hold(struct group *g, nnp_stream_t *s, nnp_comm_t *comm,
			 const struct nnp_trace_op *op,
			 const struct nnp_hw_queue_cmd *cmd, bool p2p)
{
	const char *name = op ? op->name : "a copy";
	nnp_result_t res = NNP_SUCCESS;

	if (p2p && nnp_device_hw_minor(s->dev) < 13)
		res = nnp_fail(NNP_ERROR_NOT_SUPPORTED,
			       "%s inside a group: the device runs no GROUP command (hardware interface 1.13)",
			       name);
	pthread_mutex_lock(&groups_lock);
	/* A GROUP of m members needs m + 1 completions of half the ring. */
	if (res == NNP_SUCCESS && p2p && held_p2p(g, s) + 1 >= s->depth / 2)
		res = nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
			       "%s inside a group: a group holds at most %u sends and receives on one stream",
			       name, s->depth / 2 - 1);
	if (res == NNP_SUCCESS && g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct held_op *ops = realloc(g->ops, cap * sizeof(*ops));

		if (ops) {
			g->ops = ops;
			g->cap = cap;
		} else {
			res = nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
				       "%s inside a group: no memory to hold it", name);
		}
	}
	if (res == NNP_SUCCESS)
		g->ops[g->n++] = (struct held_op){
			.stream = s, .comm = comm,
			.trace = op ? *op : (struct nnp_trace_op){ 0 },
			.traced = op != NULL, .cmd = *cmd, .p2p = p2p,
		};
	else
		fail_group(g, res, nnp_get_last_error());
	pthread_mutex_unlock(&groups_lock);
	return res;
}

nnp_result_t nnp_op_submit(nnp_stream_t *s, nnp_comm_t *comm,
			   const struct nnp_trace_op *op,
			   struct nnp_hw_queue_cmd *cmd, bool p2p)
{
	if (mine)
		return hold(mine, s, comm, op, cmd, p2p);
	if (nnp_trace_enabled && op)
		return nnp_trace_submit(s, comm, op, cmd);
	return nnp_stream_submit(s, cmd);
}

/* Submit @n commands on @s, in pieces the ring takes. */
static nnp_result_t submit_pieces(nnp_stream_t *s, struct nnp_hw_queue_cmd *cmds,
				  uint32_t n)
{
	while (n) {
		uint32_t k = n < s->depth - 1 ? n : s->depth - 1;
		nnp_result_t res = nnp_stream_submit_n(s, cmds, k);

		if (res != NNP_SUCCESS)
			return res;
		cmds += k;
		n -= k;
	}
	return NNP_SUCCESS;
}

/*
 * Launch what @g holds for stream @s: its collectives in the order
 * issued (small ones at once where the device can, in batches), then
 * its sends and receives as one GROUP. @cmds has room for every held
 * operation, a GROUP for every two, and one more; @b's arrays room for
 * every held operation.
 */
static nnp_result_t launch_stream(const struct group *g, nnp_stream_t *s,
				  struct nnp_hw_queue_cmd *cmds, struct coll_batch *b)
{
	uint32_t n = 0, m;
	nnp_result_t res;
	size_t i;

	b->cap = nnp_device_hw_minor(s->dev) >= 14 ? s->depth / 2 - 1 : 0;
	for (i = 0; i < g->n; i++) {
		const struct held_op *h = &g->ops[i];
		int nranks = h->comm ? h->comm->nranks : 0;

		if (h->stream != s || h->p2p)
			continue;
		if (!nnp_trace_enabled || !h->traced) {
			if (nnp_coll_batch_add(b, &h->cmd, nranks))
				continue;
			n = nnp_coll_batch_flush(b, cmds, n);
			if (!nnp_coll_batch_add(b, &h->cmd, nranks))
				cmds[n++] = h->cmd;
			continue;
		}
		/* Traced, each between its stamps, as outside a group. */
		n = nnp_coll_batch_flush(b, cmds, n);
		res = submit_pieces(s, cmds, n);
		cmds[0] = h->cmd;
		if (res == NNP_SUCCESS)
			res = nnp_trace_submit(s, h->comm, &h->trace, &cmds[0]);
		if (res != NNP_SUCCESS)
			return res;
		n = 0;
	}
	n = nnp_coll_batch_flush(b, cmds, n);
	res = submit_pieces(s, cmds, n);
	m = held_p2p(g, s);
	if (res != NNP_SUCCESS || !m)
		return res;
	n = 0;
	cmds[n++] = (struct nnp_hw_queue_cmd){ .opcode = NNP_CMD_GROUP, .len = m };
	for (i = 0; i < g->n; i++)
		if (g->ops[i].stream == s && g->ops[i].p2p)
			cmds[n++] = g->ops[i].cmd;
	res = nnp_stream_submit_n(s, cmds, n);
	if (res != NNP_SUCCESS || !nnp_trace_enabled)
		return res;
	/* The members' lines: no device times, each its own status. */
	for (i = 0, n = 1; i < g->n; i++) {
		const struct held_op *h = &g->ops[i];

		if (h->stream != s || !h->p2p)
			continue;
		if (h->traced)
			nnp_trace_held(s, h->comm, &h->trace, s->submitted - m - 1 + n);
		n++;
	}
	return NNP_SUCCESS;
}

/* Launch every stream's part of @g; the first failure is returned. */
static nnp_result_t launch(const struct group *g)
{
	struct nnp_hw_queue_cmd *cmds = malloc((2 * g->n + 1) * sizeof(*cmds));
	const struct nnp_hw_queue_cmd **members = malloc(g->n * sizeof(*members));
	struct coll_span *spans = malloc(2 * g->n * sizeof(*spans));
	nnp_result_t first = NNP_SUCCESS;
	struct coll_batch b;
	size_t i, j;

	if (!cmds || !members || !spans)
		first = nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
				 "nnp_group_end: no memory to launch %zu operations", g->n);
	nnp_coll_batch_init(&b, 0, members, spans, spans + g->n);
	for (i = 0; i < g->n && cmds && members && spans; i++) {
		nnp_stream_t *s = g->ops[i].stream;
		nnp_result_t res;

		/* Each stream once, where it first appears. */
		for (j = 0; j < i && g->ops[j].stream != s; j++)
			;
		if (j < i)
			continue;
		res = launch_stream(g, s, cmds, &b);
		if (res != NNP_SUCCESS && first == NNP_SUCCESS)
			first = res;
	}
	free(spans);
	free(members);
	free(cmds);
	return first;
}

nnp_result_t nnp_group_end(void)
{
	struct group *g = mine;
	char why[sizeof(g->why)];
	nnp_result_t res;

	if (!g)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_group_end: no group is open on this thread (ended twice, or never started)");
	if (--g->depth)
		return NNP_SUCCESS;
	mine = NULL;
	group_unlist(g);
	res = g->error;
	memcpy(why, g->why, sizeof(why));
	if (res == NNP_SUCCESS)
		res = launch(g);
	else
		res = nnp_fail(res, "nnp_group_end: nothing launched: %s", why);
	free(g->ops);
	free(g);
	return res;
}

void nnp_group_forget(const nnp_comm_t *comm, const nnp_stream_t *s)
{
	struct group *g;

	pthread_mutex_lock(&groups_lock);
	for (g = open_groups; g; g = g->next) {
		size_t i, k = 0;

		for (i = 0; i < g->n; i++) {
			const struct held_op *h = &g->ops[i];

			if ((comm && h->comm == comm) || (s && h->stream == s))
				fail_group(g, NNP_ERROR_INVALID_ARGUMENT,
					   comm ? "a communicator the group held operations of was destroyed" :
					   "a stream the group held operations of was destroyed");
			else
				g->ops[k++] = *h;
		}
		g->n = k;
	}
	pthread_mutex_unlock(&groups_lock);
}
