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
#include <stdio.h>
#include <stdlib.h>

#include "bootstrap.h"
#include "comm_exchange.h"
#include "log.h"
#include "split.h"
#include "transit_plan.h"

/*
 * Plan @g's ring: of links, else (given @pall) over transits, whose
 * routes then go in *@routes and whose parent ranks in @g->transit.
 */
static nnp_result_t split_ring(struct nnp_split_group *g, const char *what,
			       const struct nnp_rank_info *pall, uint32_t nparent,
			       struct nnp_ring *ring, uint8_t **routes)
{
	struct nnp_transit_plan t;
	nnp_result_t res = nnp_split_plan(g, what, ring);
	uint32_t k;

	if (res != NNP_ERROR_NO_PATH || !pall)
		return res;
	res = nnp_transit_plan(pall, nparent, g->parent, g->n, &t);
	*routes = malloc(g->n);
	g->transit = malloc((t.nchips > g->n ? t.nchips - g->n : 1) * sizeof(uint32_t));
	if (res == NNP_SUCCESS && (!*routes || !g->transit))
		res = nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for routes of %u ranks", g->n);
	if (res == NNP_SUCCESS)
		res = nnp_transit_routes(pall, &t, g->n, g->rank, *routes);
	if (res == NNP_SUCCESS) {
		for (k = g->n; k < t.nchips; k++)
			g->transit[g->ntransit++] = t.chips[k];
		*ring = t.ring;
		t.ring = (struct nnp_ring){ 0 };
		nnp_log(NNP_LOG_INFO, "%s: no ring of links, a ring over %u transit chip%s",
			what, g->ntransit, g->ntransit == 1 ? "" : "s");
	} else {
		nnp_fail_within(res, "%s: no ring of links, nor one over transits", what);
	}
	nnp_transit_free(&t);
	return res;
}

nnp_result_t nnp_split_make(nnp_comm_t *parent, struct nnp_split_group *g,
			    const char *what, const struct nnp_comm_opts *o,
			    const struct nnp_rank_info *pall, uint32_t nparent,
			    nnp_comm_t **child)
{
	struct nnp_ring ring = { 0 };
	uint8_t *routes = NULL;
	struct nnp_topo topo;
	enum nnp_algo algo;
	nnp_result_t res = split_ring(g, what, pall, nparent, &ring, &routes);

	if (res == NNP_SUCCESS)
		res = nnp_comm_plan_algo(g->info, g->n, &ring, &topo, &algo);
	if (res == NNP_SUCCESS) {
		res = nnp_comm_make(parent->dev, g->n, g->rank, g->info, &ring,
				    &topo, algo, routes, g->epoch, o, child);
		nnp_topo_free(&topo);
	}
	nnp_ring_free(&ring);
	free(routes);
	if (res == NNP_SUCCESS)
		nnp_log(NNP_LOG_INFO, "parent rank %d of %d: rank %u of %u (%s), epoch %#llx",
			parent->rank, parent->nranks, g->rank, g->n, what,
			(unsigned long long)g->epoch);
	return res;
}

/* Make this rank's communicator of the groups @all (by parent rank) plan. */
static nnp_result_t split_make(nnp_comm_t *parent, const struct nnp_split_entry *all,
			       const struct nnp_rank_info *pall,
			       struct nnp_split_group *g, nnp_comm_t **child)
{
	nnp_result_t res = nnp_split_group(all, (uint32_t)parent->nranks,
					   (uint32_t)parent->rank, g);
	struct nnp_comm_opts o;
	char what[40];

	if (res != NNP_SUCCESS || !g->n)
		return res;
	/* The parent's timeout and grouping; not its name. */
	nnp_comm_opts_of(parent, &o);
	o.name[0] = '\0';
	snprintf(what, sizeof(what), "nnp_comm_split: color %d", g->color);
	return nnp_split_make(parent, g, what, &o, pall,
			      (uint32_t)parent->nranks, child);
}

/*
 * Did every other member of @g, and every transit of its ring, make its
 * part, as @status (by parent rank) says?
 */
static nnp_result_t group_made(const struct nnp_split_group *g, const uint32_t *status)
{
	uint32_t k, p;

	for (k = 0; k < g->n; k++)
		if (k != g->rank && status[g->parent[k]] != NNP_SUCCESS)
			return nnp_fail(NNP_ERROR_COMM_FAILED,
					"nnp_comm_split: color %d: rank %u (parent rank %u) could not make its communicator: %s",
					g->color, k, g->parent[k],
					nnp_strerror((nnp_result_t)status[g->parent[k]]));
	for (k = 0; k < g->ntransit; k++) {
		p = g->transit[k];
		if (status[p] != NNP_SUCCESS)
			return nnp_fail(NNP_ERROR_COMM_FAILED,
					"nnp_comm_split: color %d: parent rank %u, a transit of its ring, could not make its part: %s",
					g->color, p, nnp_strerror((nnp_result_t)status[p]));
	}
	return NNP_SUCCESS;
}

/* The chips of the @n parent ranks of split table @all, by parent rank. */
static struct nnp_rank_info *split_chips(const struct nnp_split_entry *all, uint32_t n)
{
	struct nnp_rank_info *pall = calloc(n, sizeof(*pall));
	uint32_t r;

	for (r = 0; pall && r < n; r++)
		pall[r] = all[r].info;
	return pall;
}

nnp_result_t nnp_comm_split(nnp_comm_t *parent, int color, int key,
			    nnp_comm_t **newcomm)
{
	struct nnp_split_entry mine = { .color = NNP_SPLIT_NOCOLOR, .key = key };
	struct nnp_split_group g = { 0 };
	struct nnp_exchange x = { 0 };
	struct nnp_rank_info *pall = NULL;
	nnp_comm_t *child = NULL;
	nnp_result_t res, sent;
	uint32_t status;

	if (!parent)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_comm_split: parent is NULL");
	res = nnp_comm_ready(parent, "nnp_comm_split");
	if (res != NNP_SUCCESS)
		return res;
	nnp_log_set_rank(parent->rank);
	/* Without @newcomm it still takes part, with no color: no rank waits for it. */
	if (newcomm && color >= 0) {
		mine.color = color;
		mine.status = nnp_comm_rank_info(parent->dev, &mine.info);
	}
	do
		mine.epoch = nnp_random64();
	while (!mine.epoch);
	res = nnp_exchange_open(&x, parent, sizeof(mine), "nnp_comm_split");
	if (res == NNP_SUCCESS)
		res = nnp_exchange(&x, &mine, sizeof(mine));
	if (res == NNP_SUCCESS) {
		const struct nnp_split_entry *all = (const void *)x.table;

		pall = split_chips(all, (uint32_t)parent->nranks);
		res = mine.status ? (nnp_result_t)mine.status :
		      !pall ? nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "nnp_comm_split: no host memory") :
		      split_make(parent, all, pall, &g, &child);
		if (res == NNP_SUCCESS)
			res = nnp_split_transits(parent, all, pall);
		status = res;
		sent = nnp_exchange(&x, &status, sizeof(status));
		if (sent != NNP_SUCCESS)
			res = sent;
		else if (res == NNP_SUCCESS && g.n)
			res = group_made(&g, (const uint32_t *)x.table);
	}
	if (res != NNP_SUCCESS) {
		nnp_comm_destroy(child);
		child = NULL;
	}
	nnp_exchange_close(&x);
	nnp_split_group_free(&g);
	free(pall);
	if (newcomm)
		*newcomm = child;
	else if (res == NNP_SUCCESS)
		res = nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
			       "nnp_comm_split: newcomm is NULL (the rank took part with no color)");
	nnp_log_set_rank(-1);
	return res;
}
