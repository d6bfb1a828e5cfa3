// SPDX-License-Identifier: MIT
/*
 * Transits of nnp_comm_split(): a group whose ranks' chips make no ring of
 * links gets a ring over chips of other parent ranks (transit_plan.h).
 * Each such chip, whatever its own color, holds the group's communicator
 * as a transit (driver interface 1.12, hardware 1.22): it passes the
 * group's packets on, one hop of its ring, and relays its routed
 * messages, never a rank of it. The transit is held by the parent and
 * ends with it, so a rank keeps its parent while groups split from it
 * run; a group's ranks do not wait for a transit to end theirs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <xf86drm.h>
#include <nnp_accel.h>

#include "comm.h"
#include "log.h"
#include "split.h"
#include "transit_plan.h"

/* Give transit @id of the @n ranks its routes, as chip @k of plan @t. */
static nnp_result_t transit_routes(nnp_comm_t *parent, uint32_t id,
				   const struct nnp_rank_info *pall,
				   const struct nnp_transit_plan *t,
				   uint32_t n, uint32_t k)
{
	uint8_t *r = malloc(n);
	struct drm_nnp_comm_routes a = {
		.comm = id, .nranks = n, .routes = (uintptr_t)r,
	};
	nnp_result_t res = r ? nnp_transit_routes(pall, t, n, k, r) :
			   nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for routes of %u ranks", n);

	if (res == NNP_SUCCESS && drmIoctl(parent->dev->fd, DRM_IOCTL_NNP_COMM_ROUTES, &a))
		res = nnp_ioctl_failed(parent->dev, "a transit's routes", errno);
	free(r);
	return res;
}

/* Make this chip, chip @k of plan @t, a transit of group @g. */
static nnp_result_t transit_make(nnp_comm_t *parent, const struct nnp_split_group *g,
				 const struct nnp_rank_info *pall,
				 const struct nnp_transit_plan *t, uint32_t k)
{
	const uint32_t *pair = t->pair[t->chips[k]];
	struct drm_nnp_comm_create c = {
		.nranks = g->n, .send_port = pair[0], .recv_port = pair[1],
		.flags = DRM_NNP_COMM_CREATE_TRANSIT, .epoch = g->epoch,
		.timeout_ms = parent->timeout_ms,
	};
	uint32_t *ids = realloc(parent->transits, (parent->ntransits + 1) * sizeof(*ids));
	nnp_result_t res;

	if (!ids)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for a transit");
	parent->transits = ids;
	if (parent->dev->driver_minor < 12)
		return nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"nnp_comm_split: color %d crosses %s, whose driver has no transits (interface 1.12)",
				g->color, parent->dev->path);
	if (drmIoctl(parent->dev->fd, DRM_IOCTL_NNP_COMM_CREATE, &c))
		return nnp_fail(nnp_result_from_errno(errno),
				"nnp_comm_split: color %d: %s refused to be a transit of its ring (ports %u and %u): %s",
				g->color, parent->dev->path, pair[0], pair[1], strerror(errno));
	ids[parent->ntransits++] = c.comm;
	res = transit_routes(parent, c.comm, pall, t, g->n, k);
	nnp_log(NNP_LOG_INFO, "parent rank %d: a transit of color %d's ring between ports %u and %u, communicator %u",
		parent->rank, g->color, pair[0], pair[1], c.comm);
	return res;
}

/* Whether @r is the lowest parent rank of its color in @all: one visit a group. */
static bool group_first(const struct nnp_split_entry *all, uint32_t r)
{
	uint32_t q;

	for (q = 0; q < r; q++)
		if (all[q].color == all[r].color)
			return false;
	return all[r].color >= 0;
}

/* Make this chip a transit of the group of parent rank @r, if it is one. */
static nnp_result_t group_transit(nnp_comm_t *parent, const struct nnp_split_entry *all,
				  const struct nnp_rank_info *pall, uint32_t r)
{
	uint32_t nparent = (uint32_t)parent->nranks, me = (uint32_t)parent->rank, k;
	struct nnp_split_group g;
	struct nnp_transit_plan t = { 0 };
	struct nnp_ring ring = { 0 };
	nnp_result_t res = nnp_split_group(all, nparent, r, &g);

	/*
	 * A group with a ring of links needs no transit; one with no ring at
	 * all fails on its own ranks, which say why.
	 */
	if (res != NNP_SUCCESS ||
	    nnp_ring_plan(g.info, g.n, &ring) != NNP_ERROR_NO_PATH ||
	    nnp_transit_plan(pall, nparent, g.parent, g.n, &t) != NNP_SUCCESS)
		res = NNP_SUCCESS;
	for (k = g.n; k < t.nchips && res == NNP_SUCCESS; k++)
		if (t.chips[k] == me)
			res = transit_make(parent, &g, pall, &t, k);
	nnp_transit_free(&t);
	nnp_ring_free(&ring);
	nnp_split_group_free(&g);
	return res;
}

nnp_result_t nnp_split_transits(nnp_comm_t *parent, const struct nnp_split_entry *all,
				const struct nnp_rank_info *pall)
{
	uint32_t r, me = (uint32_t)parent->rank;
	nnp_result_t res = NNP_SUCCESS;

	for (r = 0; r < (uint32_t)parent->nranks && res == NNP_SUCCESS; r++)
		if (all[r].color != all[me].color && group_first(all, r))
			res = group_transit(parent, all, pall, r);
	return res;
}

void nnp_split_transits_end(nnp_comm_t *parent)
{
	uint32_t k;

	for (k = 0; k < parent->ntransits; k++) {
		struct drm_nnp_comm_destroy d = { .comm = parent->transits[k] };

		drmIoctl(parent->dev->fd, DRM_IOCTL_NNP_COMM_DESTROY, &d);
	}
	free(parent->transits);
	parent->transits = NULL;
	parent->ntransits = 0;
}
