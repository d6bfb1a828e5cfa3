// SPDX-License-Identifier: MIT
/*
 * nnp_comm_split(), NCCL's ncclCommSplit. The parent's ranks tell each
 * other their color, key, chip and ports, and a random epoch, with an
 * allgather of the parent itself on a stream of the split's own: the
 * parent's rendezvous is over (its connections closed, its secret never
 * kept), and a communicator made by nnp_comm_init_all() never had one,
 * while the parent's ring reaches every rank of either kind, is bounded
 * by its timeout, and carries nothing but what its own epoch names. Every
 * rank then plans the same groups (split_plan.c) and makes its own
 * communicator, under the epoch its new rank 0 drew. A second allgather
 * of each rank's outcome lets a group fail as one when any member could
 * not make its part.
 */
#include <string.h>

#include "bootstrap.h"
#include "comm.h"
#include "log.h"
#include "split.h"

/* The split's own stream and buffers for its allgathers over the parent. */
struct exchange {
	nnp_stream_t *s;
	nnp_mem_t *dev, *host;
	uint8_t *table;		/* host's mapping: every rank's part, by rank */
};

static nnp_result_t exchange_open(nnp_comm_t *parent, struct exchange *x)
{
	size_t size = (size_t)parent->nranks * sizeof(struct nnp_split_entry);
	nnp_result_t res = nnp_stream_create(parent->dev, &x->s);

	if (res == NNP_SUCCESS)
		res = nnp_mem_alloc(parent->dev, NNP_MEM_DEVICE, size, 0, &x->dev);
	if (res == NNP_SUCCESS)
		res = nnp_mem_alloc(parent->dev, NNP_MEM_HOST, size, 0, &x->host);
	if (res == NNP_SUCCESS)
		res = nnp_mem_map(x->host, (void **)&x->table);
	return res;
}

static void exchange_close(struct exchange *x)
{
	/* The stream first: it waits for what it still runs on the buffers. */
	nnp_stream_destroy(x->s);
	nnp_mem_free(x->dev);
	nnp_mem_free(x->host);
}

/*
 * Every parent rank's @size bytes (a multiple of 4) into x->table, by
 * parent rank, this rank's being @mine: staged into device memory, an
 * in-place allgather over @parent, and back.
 */
static nnp_result_t exchange(struct exchange *x, nnp_comm_t *parent,
			     const void *mine, size_t size)
{
	size_t off = (size_t)parent->rank * size;
	nnp_result_t res;

	memcpy(x->table + off, mine, size);
	res = nnp_memcpy_async(x->s, x->dev, off, x->host, off, size);
	if (res == NNP_SUCCESS)
		res = nnp_allgather(x->dev, off, x->dev, 0, size / 4, NNP_INT32,
				    parent, x->s);
	if (res == NNP_SUCCESS)
		res = nnp_memcpy_async(x->s, x->host, 0, x->dev, 0,
				       (size_t)parent->nranks * size);
	if (res == NNP_SUCCESS)
		res = nnp_stream_synchronize(x->s);
	if (res == NNP_ERROR_COMMAND_FAILED)
		res = NNP_ERROR_COMM_FAILED;
	return res == NNP_SUCCESS ? res :
	       nnp_fail_within(res, "nnp_comm_split: parent rank %d: the exchange over the parent failed",
			       parent->rank);
}

/* Make this rank's communicator of the groups @all (by parent rank) plan. */
static nnp_result_t split_make(nnp_comm_t *parent, const struct nnp_split_entry *all,
			       struct nnp_split_group *g, nnp_comm_t **child)
{
	nnp_result_t res = nnp_split_group(all, (uint32_t)parent->nranks,
					   (uint32_t)parent->rank, g);
	struct nnp_topo topo;
	struct nnp_ring ring;
	enum nnp_algo algo;

	if (res != NNP_SUCCESS || !g->n)
		return res;
	res = nnp_split_plan(g, &ring);
	if (res != NNP_SUCCESS)
		return res;
	res = nnp_comm_plan_algo(g->info, g->n, &ring, &topo, &algo);
	if (res == NNP_SUCCESS) {
		res = nnp_comm_make(parent->dev, g->n, g->rank, g->info, &ring,
				    &topo, algo, g->epoch, parent->timeout_ms, child);
		nnp_topo_free(&topo);
	}
	nnp_ring_free(&ring);
	if (res == NNP_SUCCESS)
		nnp_log(NNP_LOG_INFO, "parent rank %d of %d: rank %u of %u of color %d, epoch %#llx",
			parent->rank, parent->nranks, g->rank, g->n, g->color,
			(unsigned long long)g->epoch);
	return res;
}

/* Did every other member of @g make its part, as @status (by parent rank) says? */
static nnp_result_t group_made(const struct nnp_split_group *g, const uint32_t *status)
{
	uint32_t k;

	for (k = 0; k < g->n; k++)
		if (k != g->rank && status[g->parent[k]] != NNP_SUCCESS)
			return nnp_fail(NNP_ERROR_COMM_FAILED,
					"nnp_comm_split: color %d: rank %u (parent rank %u) could not make its communicator: %s",
					g->color, k, g->parent[k],
					nnp_strerror((nnp_result_t)status[g->parent[k]]));
	return NNP_SUCCESS;
}

nnp_result_t nnp_comm_split(nnp_comm_t *parent, int color, int key,
			    nnp_comm_t **newcomm)
{
	struct nnp_split_entry mine = { .color = NNP_SPLIT_NOCOLOR, .key = key };
	struct nnp_split_group g = { 0 };
	struct exchange x = { 0 };
	nnp_comm_t *child = NULL;
	nnp_result_t res, sent;
	uint32_t status;

	if (!parent)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_comm_split: parent is NULL");
	nnp_log_set_rank(parent->rank);
	/* Without @newcomm it still takes part, with no color: no rank waits for it. */
	if (newcomm && color >= 0) {
		mine.color = color;
		mine.status = nnp_comm_rank_info(parent->dev, &mine.info);
	}
	do
		mine.epoch = nnp_random64();
	while (!mine.epoch);
	res = exchange_open(parent, &x);
	if (res == NNP_SUCCESS)
		res = exchange(&x, parent, &mine, sizeof(mine));
	if (res == NNP_SUCCESS) {
		res = mine.status ? (nnp_result_t)mine.status :
		      split_make(parent, (const struct nnp_split_entry *)x.table, &g, &child);
		status = res;
		sent = exchange(&x, parent, &status, sizeof(status));
		if (sent != NNP_SUCCESS)
			res = sent;
		else if (res == NNP_SUCCESS && g.n)
			res = group_made(&g, (const uint32_t *)x.table);
	}
	if (res != NNP_SUCCESS) {
		nnp_comm_destroy(child);
		child = NULL;
	}
	exchange_close(&x);
	nnp_split_group_free(&g);
	if (newcomm)
		*newcomm = child;
	else if (res == NNP_SUCCESS)
		res = nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
			       "nnp_comm_split: newcomm is NULL (the rank took part with no color)");
	nnp_log_set_rank(-1);
	return res;
}
