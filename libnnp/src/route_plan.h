/* SPDX-License-Identifier: MIT */
/*
 * Where routed messages go: from one rank's chip, the port towards every
 * other rank, the first hop of a shortest path over links that are up.
 * Every rank computes the same distances from the same table, so the hops
 * of one path agree without talking: each hop's next is one link closer.
 */
#ifndef NNP_ROUTE_PLAN_H
#define NNP_ROUTE_PLAN_H

#include <stdint.h>

#include "ring_plan.h"

/* A rank the chip has no route to, or the chip's own: DRM_NNP_ROUTE_NONE. */
#define NNP_ROUTE_NONE	0xff

/*
 * The routes of rank @me among the @n ranks of @info: @routes[r] the port
 * of @me's chip towards rank r (@n bytes). Ties between shortest paths go
 * to the neighbour of lowest rank, then to the lowest port. Ranks from
 * @limit on get no route (the device labels routed messages with ranks
 * below it). NNP_ERROR_OUT_OF_MEMORY only.
 */
nnp_result_t nnp_route_plan(const struct nnp_rank_info *info, uint32_t n,
			    uint32_t me, uint32_t limit, uint8_t *routes);
/*
 * The same over @nchips chips of @info, of which the first @n are the
 * ranks and the others transits (chips the ranks' packets may cross, of
 * no rank): @routes gets @n bytes, from @me, a rank or a transit.
 */
nnp_result_t nnp_route_plan_via(const struct nnp_rank_info *info, uint32_t nchips,
				uint32_t n, uint32_t me, uint32_t limit,
				uint8_t *routes);

/*
 * The ranks a message from @from to @to crosses, @to last, into @hops
 * (room for @n), as every chip's routes send it; their count, or 0 if
 * there is no path (or @from is @to).
 */
uint32_t nnp_route_path(const struct nnp_rank_info *info, uint32_t n,
			uint32_t from, uint32_t to, uint32_t *hops);
/*
 * The fabric of @n ranks of @info as a graph, built once for many
 * searches (NULL: no host memory); nnp_route_graph_free() frees it.
 */
struct nnp_route_graph;
struct nnp_route_graph *nnp_route_graph_new(const struct nnp_rank_info *info,
					    uint32_t n);
void nnp_route_graph_free(struct nnp_route_graph *g);
/*
 * nnp_route_path() on @g, over no rank whose @avoid byte is set (NULL:
 * none) but @to.
 */
uint32_t nnp_route_graph_path(struct nnp_route_graph *g, uint32_t from,
			      uint32_t to, const uint8_t *avoid, uint32_t *hops);
/*
 * Links from @from to every rank over no rank whose @avoid byte is set,
 * which may still end a path: by rank, UINT32_MAX if none; valid until
 * @g's next search.
 */
const uint32_t *nnp_route_graph_dist(struct nnp_route_graph *g, uint32_t from,
				     const uint8_t *avoid);

#endif /* NNP_ROUTE_PLAN_H */
