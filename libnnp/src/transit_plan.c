// SPDX-License-Identifier: MIT
/* Rings over transit chips: see transit_plan.h. */
#include <stdlib.h>

#include "nnp_hw.h"
#include "log.h"
#include "route_plan.h"
#include "transit_plan.h"

void nnp_transit_free(struct nnp_transit_plan *t)
{
	nnp_ring_free(&t->ring);
	free(t->pair);
	free(t->chips);
	t->pair = NULL;
	t->chips = NULL;
}

/*
 * The ports of the link between chips @x and @y: the lower chip's first
 * port towards the other, and where it lands, so that both directions of
 * a hop cross the same link (split links have several).
 */
static void link_ports(const struct nnp_rank_info *all, uint32_t x, uint32_t y,
		       uint32_t *px, uint32_t *py)
{
	if (x > y) {
		link_ports(all, y, x, py, px);
		return;
	}
	*px = (uint32_t)nnp_rank_port_to(all, x, y);
	*py = all[x].ports[*px].peer_port;
}

/* Chip @x passes between ports @a and @b: false if it passes another pair. */
static bool pair_set(struct nnp_transit_plan *t, uint32_t x, uint32_t a, uint32_t b)
{
	uint32_t *p = t->pair[x];

	if (p[0] == NNP_TRANSIT_NONE) {
		p[0] = a;
		p[1] = b;
		return true;
	}
	return (p[0] == a && p[1] == b) || (p[0] == b && p[1] == a);
}

/*
 * The hop from ring position @pos to the next over the path @hops (@len
 * chips, the next rank's last): the two ranks' ports, each transit's pair.
 */
static nnp_result_t hop_set(const struct nnp_rank_info *all, struct nnp_transit_plan *t,
			    const uint32_t *ranks, uint32_t n, uint32_t pos,
			    const uint32_t *hops, uint32_t len)
{
	uint32_t a = t->ring.order[pos], b = t->ring.order[(pos + 1) % n];
	uint32_t prev = ranks[a], j, out, in, next, unused;

	for (j = 0; j < len; j++) {
		link_ports(all, prev, hops[j], &out, &in);
		if (!j)
			t->ring.send_port[a] = out;
		if (j + 1 == len) {
			t->ring.recv_port[b] = in;
			break;
		}
		next = hops[j + 1];
		link_ports(all, hops[j], next, &out, &unused);
		if (!pair_set(t, hops[j], in, out))
			return nnp_fail(NNP_ERROR_NO_PATH,
					"no ring over the %u ranks: chip %u would pass two of its hops between different ports",
					n, all[hops[j]].chip);
		prev = hops[j];
	}
	return NNP_SUCCESS;
}

/*
 * The chips from rank @a's to rank @b's over chips of no rank, into
 * @hops: their count, 0 if there is no such path.
 */
static uint32_t hop_path(struct nnp_route_graph *g, const uint32_t *ranks,
			 uint32_t a, uint32_t b, uint8_t *avoid, uint32_t *hops)
{
	uint32_t len;

	/* The search runs from @b's chip: of the ranks', only @a's may start it. */
	avoid[ranks[a]] = 0;
	len = nnp_route_graph_path(g, ranks[a], ranks[b], avoid, hops);
	avoid[ranks[a]] = 1;
	return len;
}

/*
 * The ring's order: from rank 0, each time to the nearest rank not yet on
 * it over chips of no rank (the lower rank of a tie), so that hops stay
 * short and apart (a torus's every other chip goes round its square, not
 * across it). A rank no path reaches comes last; its hop then says so.
 */
static void order_plan(struct nnp_route_graph *g, const uint32_t *ranks,
		       uint32_t n, uint32_t *order, const uint8_t *avoid)
{
	uint32_t pos, k, best;
	uint8_t *on = calloc(n, 1);

	for (pos = 0; pos < n; pos++)
		order[pos] = pos;
	if (!on || !n) {
		free(on);
		return;
	}
	on[0] = 1;
	for (pos = 1; pos < n; pos++) {
		const uint32_t *dist = nnp_route_graph_dist(g, ranks[order[pos - 1]], avoid);

		best = UINT32_MAX;
		for (k = 0; k < n; k++)
			if (!on[k] && (best == UINT32_MAX ||
				       dist[ranks[k]] < dist[ranks[best]]))
				best = k;
		order[pos] = best;
		on[best] = 1;
	}
	free(on);
}

static nnp_result_t plan_alloc(struct nnp_transit_plan *t, uint32_t nall, uint32_t n)
{
	uint32_t x;

	*t = (struct nnp_transit_plan){
		.ring = {
			.order = calloc(n, sizeof(uint32_t)),
			.send_port = calloc(n, sizeof(uint32_t)),
			.recv_port = calloc(n, sizeof(uint32_t)),
		},
		.pair = calloc(nall, sizeof(*t->pair)),
		.chips = calloc(nall, sizeof(uint32_t)),
	};
	if (!t->ring.order || !t->ring.send_port || !t->ring.recv_port ||
	    !t->pair || !t->chips)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
				"no host memory to plan a ring over %u chips", nall);
	for (x = 0; x < nall; x++)
		t->pair[x][0] = t->pair[x][1] = NNP_TRANSIT_NONE;
	return NNP_SUCCESS;
}

/* Every hop of the ring over the graph @g of the chips, over chips of no rank. */
static nnp_result_t hops_plan(const struct nnp_rank_info *all, struct nnp_route_graph *g,
			      const uint32_t *ranks, uint32_t n,
			      struct nnp_transit_plan *t, uint8_t *avoid,
			      uint32_t *hops)
{
	const uint32_t *order = t->ring.order;
	nnp_result_t res = NNP_SUCCESS;
	uint32_t pos, len, k;

	for (k = 0; k < n; k++)
		avoid[ranks[k]] = 1;
	order_plan(g, ranks, n, t->ring.order, avoid);
	for (pos = 0; pos < n && res == NNP_SUCCESS; pos++) {
		uint32_t a = order[pos], b = order[(pos + 1) % n];

		len = hop_path(g, ranks, a, b, avoid, hops);
		if (!len)
			return nnp_fail(NNP_ERROR_NO_PATH,
					"no ring over the %u ranks: no path from rank %u (chip %u) to rank %u (chip %u) but through other ranks",
					n, a, all[ranks[a]].chip, b, all[ranks[b]].chip);
		res = hop_set(all, t, ranks, n, pos, hops, len);
	}
	for (k = 0; k < n && n > 2 && res == NNP_SUCCESS; k++)
		if (t->ring.send_port[k] == t->ring.recv_port[k])
			return nnp_fail(NNP_ERROR_NO_PATH,
					"no ring over the %u ranks: rank %u (chip %u) would send and receive on port %u",
					n, k, all[ranks[k]].chip, t->ring.send_port[k]);
	return res;
}

nnp_result_t nnp_transit_plan(const struct nnp_rank_info *all, uint32_t nall,
			      const uint32_t *ranks, uint32_t n,
			      struct nnp_transit_plan *t)
{
	struct nnp_route_graph *g = nnp_route_graph_new(all, nall);
	uint8_t *avoid = calloc(nall, 1);
	uint32_t *hops = calloc(nall, sizeof(uint32_t));
	nnp_result_t res = plan_alloc(t, nall, n);
	uint32_t x;

	if (res == NNP_SUCCESS && (!g || !avoid || !hops))
		res = nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
			       "no host memory to plan a ring over %u chips", nall);
	if (res == NNP_SUCCESS)
		res = hops_plan(all, g, ranks, n, t, avoid, hops);
	if (res == NNP_SUCCESS) {
		for (x = 0; x < n; x++)
			t->chips[t->nchips++] = ranks[x];
		for (x = 0; x < nall; x++)
			if (t->pair[x][0] != NNP_TRANSIT_NONE)
				t->chips[t->nchips++] = x;
	}
	nnp_route_graph_free(g);
	free(avoid);
	free(hops);
	return res;
}

nnp_result_t nnp_transit_routes(const struct nnp_rank_info *all,
				const struct nnp_transit_plan *t, uint32_t n,
				uint32_t k, uint8_t *routes)
{
	struct nnp_rank_info *sub = calloc(t->nchips, sizeof(*sub));
	nnp_result_t res;
	uint32_t x;

	if (!sub)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY,
				"no host memory for routes over %u chips", t->nchips);
	for (x = 0; x < t->nchips; x++)
		sub[x] = all[t->chips[x]];
	res = nnp_route_plan_via(sub, t->nchips, n, k, NNP_HW_MAX_ROUTED_RANKS, routes);
	free(sub);
	return res;
}
