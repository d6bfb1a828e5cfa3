// SPDX-License-Identifier: MIT
/*
 * nnp_comm_shrink(), NCCL's ncclCommShrink: after a chip or a rank is
 * lost, the survivors make a communicator of themselves and go on. The
 * parent's ring may run through the lost chip, so nothing is said over
 * it: every survivor plans the same members, ring and epoch from the
 * table the parent was planned on (shrink_plan.c), makes its part, and
 * the new ring's first allgather shows that every survivor is there and
 * that the ring carries.
 */
#include <stdlib.h>
#include <string.h>

#include "comm_exchange.h"
#include "log.h"
#include "split.h"

/*
 * Each survivor tells the others its parent rank; new rank k must be
 * parent rank g->parent[k] everywhere, or a rank planned otherwise.
 */
static nnp_result_t check_members(nnp_comm_t *child, const struct nnp_split_group *g)
{
	struct nnp_exchange x;
	uint32_t mine = g->parent[g->rank], k;
	const uint32_t *told;
	nnp_result_t res;

	res = nnp_exchange_open(&x, child, sizeof(mine), "nnp_comm_shrink");
	if (res == NNP_SUCCESS)
		res = nnp_exchange(&x, &mine, sizeof(mine));
	told = (const uint32_t *)x.table;
	for (k = 0; res == NNP_SUCCESS && k < g->n; k++)
		if (told[k] != g->parent[k])
			res = nnp_fail(NNP_ERROR_COMM_FAILED,
				       "nnp_comm_shrink: rank %u is parent rank %u here, but says it is parent rank %u",
				       k, g->parent[k], told[k]);
	nnp_exchange_close(&x);
	return res;
}

/*
 * Keep @epoch among @parent's shrinks, so that the next shrink of the
 * same set draws another; only a shrink that succeeded counts, as it did
 * on every survivor.
 */
static nnp_result_t note_epoch(nnp_comm_t *parent, uint64_t epoch)
{
	uint64_t *e = realloc(parent->shrunk,
			      (parent->nshrunk + 1) * sizeof(*e));

	if (!e)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for a shrink");
	parent->shrunk = e;
	e[parent->nshrunk++] = epoch;
	return NNP_SUCCESS;
}

nnp_result_t nnp_comm_shrink(nnp_comm_t *parent, const int *exclude, int nexclude,
			     const nnp_comm_config_t *config, nnp_comm_t **newcomm)
{
	struct nnp_split_group g = { 0 };
	struct nnp_comm_opts def, o;
	nnp_comm_t *child = NULL;
	nnp_result_t res;

	if (!parent || !newcomm)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_comm_shrink: no parent or no newcomm");
	*newcomm = NULL;
	res = nnp_comm_ready(parent, "nnp_comm_shrink");
	if (res != NNP_SUCCESS)
		return res;
	if (!nnp_comm_config_blocking(config))
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_comm_shrink: config blocking 0: a shrink is blocking");
	nnp_comm_opts_of(parent, &def);
	res = nnp_comm_config_take(config, "nnp_comm_shrink", &def, &o);
	if (res != NNP_SUCCESS)
		return res;
	nnp_log_set_rank(parent->rank);
	res = nnp_shrink_group(parent->all, (uint32_t)parent->nranks,
			       (uint32_t)parent->rank, exclude, nexclude,
			       parent->epoch, parent->shrunk, parent->nshrunk, &g);
	if (res == NNP_SUCCESS)
		res = nnp_split_make(parent, &g, "nnp_comm_shrink", &o, NULL, 0,
				     &child);
	if (res == NNP_SUCCESS)
		res = check_members(child, &g);
	if (res == NNP_SUCCESS)
		res = note_epoch(parent, g.epoch);
	if (res != NNP_SUCCESS) {
		nnp_comm_destroy(child);
		child = NULL;
	}
	nnp_split_group_free(&g);
	*newcomm = child;
	nnp_log_set_rank(-1);
	return res;
}
