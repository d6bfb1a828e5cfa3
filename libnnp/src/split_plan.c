// SPDX-License-Identifier: MIT
/*
 * The groups of nnp_comm_split(), found by every rank from the same table
 * of colors, keys and port tables (split.h), and their rings.
 */
#include <stdlib.h>

#include "comm.h"
#include "log.h"
#include "split.h"

struct member {
	int32_t key;
	uint32_t parent;
};

/* By key, then by parent rank: NCCL's order for ties. */
static int by_key(const void *a, const void *b)
{
	const struct member *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->parent < y->parent ? -1 : x->parent > y->parent;
}

void nnp_split_group_free(struct nnp_split_group *g)
{
	free(g->parent);
	free(g->info);
	free(g->transit);
	g->parent = NULL;
	g->info = NULL;
	g->transit = NULL;
}

nnp_result_t nnp_split_group(const struct nnp_split_entry *all, uint32_t nparent,
			     uint32_t me, struct nnp_split_group *g)
{
	struct member *m;
	uint32_t r, k = 0;

	*g = (struct nnp_split_group){ .color = all[me].color };
	if (g->color < 0)
		return NNP_SUCCESS;
	for (r = 0; r < nparent; r++)
		g->n += all[r].color == g->color;
	m = calloc(g->n, sizeof(*m));
	g->parent = calloc(g->n, sizeof(*g->parent));
	g->info = calloc(g->n, sizeof(*g->info));
	if (!m || !g->parent || !g->info) {
		free(m);
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
				"no host memory for a communicator of %u ranks", g->n);
	}
	for (r = 0; r < nparent; r++)
		if (all[r].color == g->color)
			m[k++] = (struct member){ .key = all[r].key, .parent = r };
	qsort(m, g->n, sizeof(*m), by_key);
	for (k = 0; k < g->n; k++) {
		g->parent[k] = m[k].parent;
		g->info[k] = all[m[k].parent].info;
		if (m[k].parent == me)
			g->rank = k;
	}
	free(m);
	g->epoch = all[g->parent[0]].epoch;
	for (k = 0; k < g->n; k++)
		if (g->parent[k] != me && all[g->parent[k]].status != NNP_SUCCESS)
			return nnp_fail(NNP_ERROR_COMM_FAILED,
					"nnp_comm_split: color %d: rank %u (parent rank %u) could not read its chip's ports: %s",
					g->color, k, g->parent[k],
					nnp_strerror((nnp_result_t)all[g->parent[k]].status));
	return NNP_SUCCESS;
}

nnp_result_t nnp_split_plan(const struct nnp_split_group *g, const char *what,
			    struct nnp_ring *ring)
{
	nnp_result_t res = nnp_comm_plan(g->info, g->n, g->epoch, ring);
	uint32_t a, b;

	if (res != NNP_ERROR_NO_PATH)
		return res == NNP_SUCCESS ? res :
		       nnp_fail_within(res, "%s", what);
	/* No ring, so rank order is none either: its first gap is a missing link. */
	for (a = 0; a < g->n && nnp_rank_port_to(g->info, a, (a + 1) % g->n) >= 0; a++)
		;
	b = (a + 1) % g->n;
	return nnp_fail_within(res, "%s: no up link from rank %u (parent rank %u, chip %u) to rank %u (parent rank %u, chip %u)",
			       what, a, g->parent[a], g->info[a].chip, b,
			       g->parent[b], g->info[b].chip);
}
