// SPDX-License-Identifier: MIT
/*
 * Routes for messages between ranks whose chips share no link: breadth
 * first from each destination over the links both ends report up
 * (nnp_rank_link()), then from the source the neighbour one link closer.
 * See route_plan.h.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "route_plan.h"

/* The fabric as a graph of ranks: the rank at each port, -1 if none. */
struct graph {
	uint32_t n;
	int32_t (*peer)[NNP_MAX_PORTS];
	uint32_t *dist;		/* to the destination of the last search */
	uint32_t *queue;
};

struct chip_rank {
	uint32_t chip, rank;
};

static int by_chip(const void *a, const void *b)
{
	const struct chip_rank *x = a, *y = b;

	return x->chip < y->chip ? -1 : x->chip > y->chip;
}

/* The rank at each port of each rank's chip, from @info. */
static int graph_build(struct graph *g, const struct nnp_rank_info *info,
		       uint32_t n)
{
	struct chip_rank *map = calloc(n, sizeof(*map));
	uint32_t a, p, q;

	g->n = n;
	g->peer = calloc(n, sizeof(*g->peer));
	g->dist = calloc(n, sizeof(*g->dist));
	g->queue = calloc(n, sizeof(*g->queue));
	if (!map || !g->peer || !g->dist || !g->queue) {
		free(map);
		return -1;
	}
	for (a = 0; a < n; a++)
		map[a] = (struct chip_rank){ info[a].chip, a };
	qsort(map, n, sizeof(*map), by_chip);
	for (a = 0; a < n; a++) {
		for (p = 0; p < NNP_MAX_PORTS; p++) {
			struct chip_rank key = { info[a].ports[p].peer_chip, 0 };
			const struct chip_rank *b = NULL;

			if (p < info[a].nports)
				b = bsearch(&key, map, n, sizeof(*map), by_chip);
			g->peer[a][p] = b && nnp_rank_link(info, a, p, b->rank, &q) ?
					(int32_t)b->rank : -1;
		}
	}
	free(map);
	return 0;
}

static void graph_free(struct graph *g)
{
	free(g->peer);
	free(g->dist);
	free(g->queue);
}

/*
 * Links from every rank to @to, breadth first: g->dist, UINT32_MAX if
 * none. A rank whose @avoid byte is set (NULL: none) is on no path, but
 * for @to itself; with @ends, such a rank is still reached, as the end
 * of a path (its distance set, but nothing beyond it through it).
 */
static void graph_search(struct graph *g, uint32_t to, const uint8_t *avoid,
			 bool ends)
{
	uint32_t head = 0, tail = 0, p;

	memset(g->dist, 0xff, g->n * sizeof(*g->dist));
	g->dist[to] = 0;
	g->queue[tail++] = to;
	while (head < tail) {
		uint32_t a = g->queue[head++];

		/* Links are both ways (nnp_rank_link()): a's peers reach a. */
		for (p = 0; p < NNP_MAX_PORTS; p++) {
			int32_t b = g->peer[a][p];
			bool avoided = avoid && avoid[b];

			if (b < 0 || g->dist[b] != UINT32_MAX || (avoided && !ends))
				continue;
			g->dist[b] = g->dist[a] + 1;
			if (!avoided)
				g->queue[tail++] = (uint32_t)b;
		}
	}
}

/* The port of @a one link closer to the last search's destination, or -1. */
static int graph_next(const struct graph *g, uint32_t a)
{
	int best = -1;
	uint32_t p;

	if (g->dist[a] == UINT32_MAX || !g->dist[a])
		return -1;
	for (p = 0; p < NNP_MAX_PORTS; p++) {
		int32_t b = g->peer[a][p];

		if (b >= 0 && g->dist[b] == g->dist[a] - 1 &&
		    (best < 0 || b < g->peer[a][best]))
			best = (int)p;
	}
	return best;
}

nnp_result_t nnp_route_plan(const struct nnp_rank_info *info, uint32_t n,
			    uint32_t me, uint32_t limit, uint8_t *routes)
{
	return nnp_route_plan_via(info, n, n, me, limit, routes);
}

nnp_result_t nnp_route_plan_via(const struct nnp_rank_info *info, uint32_t nchips,
				uint32_t n, uint32_t me, uint32_t limit,
				uint8_t *routes)
{
	struct graph g;
	uint32_t to;

	if (graph_build(&g, info, nchips)) {
		graph_free(&g);
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory to plan routes of %u chips", nchips);
	}
	for (to = 0; to < n; to++) {
		int port = -1;

		/* A chip past the ranks (a transit's) labels no message of its own. */
		if (to != me && to < limit && (me < limit || me >= n)) {
			graph_search(&g, to, NULL, false);
			port = graph_next(&g, me);
		}
		routes[to] = port < 0 ? NNP_ROUTE_NONE : (uint8_t)port;
	}
	graph_free(&g);
	return NNP_SUCCESS;
}

uint32_t nnp_route_path(const struct nnp_rank_info *info, uint32_t n,
			uint32_t from, uint32_t to, uint32_t *hops)
{
	struct nnp_route_graph *g = nnp_route_graph_new(info, n);
	uint32_t k = g ? nnp_route_graph_path(g, from, to, NULL, hops) : 0;

	nnp_route_graph_free(g);
	return k;
}

struct nnp_route_graph *nnp_route_graph_new(const struct nnp_rank_info *info,
					    uint32_t n)
{
	struct graph *g = calloc(1, sizeof(*g));

	if (g && graph_build(g, info, n)) {
		graph_free(g);
		free(g);
		return NULL;
	}
	return (struct nnp_route_graph *)g;
}

void nnp_route_graph_free(struct nnp_route_graph *rg)
{
	struct graph *g = (struct graph *)rg;

	if (g)
		graph_free(g);
	free(g);
}

uint32_t nnp_route_graph_path(struct nnp_route_graph *rg, uint32_t from,
			      uint32_t to, const uint8_t *avoid, uint32_t *hops)
{
	struct graph *g = (struct graph *)rg;
	uint32_t k = 0, a = from;

	if (from >= g->n || to >= g->n)
		return 0;
	graph_search(g, to, avoid, false);
	while (a != to && k < g->n) {
		int p = graph_next(g, a);

		if (p < 0)
			return 0;
		a = (uint32_t)g->peer[a][p];
		hops[k++] = a;
	}
	return k;
}

const uint32_t *nnp_route_graph_dist(struct nnp_route_graph *rg, uint32_t from,
				     const uint8_t *avoid)
{
	struct graph *g = (struct graph *)rg;

	graph_search(g, from, avoid, true);
	return g->dist;
}
