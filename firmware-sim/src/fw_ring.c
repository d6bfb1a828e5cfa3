// SPDX-License-Identifier: MIT
/*
 * Submission/completion ring bookkeeping shared by the admin queue and the
 * user queues: setup checks, positions, phase tags.
 */
#include "fw_internal.h"

bool nnp_fw_ring_setup_ok(const struct nnp_fw_ring *r, uint32_t min_depth,
			  uint32_t max_depth)
{
	uint32_t d = r->depth;

	return d >= min_depth && d <= max_depth && !(d & (d - 1)) &&
	       r->sq_base && r->cq_base &&
	       !(r->sq_base % 64) && !(r->cq_base % sizeof(struct nnp_hw_cqe));
}

void nnp_fw_ring_start(struct nnp_fw_ring *r)
{
	r->sq_head = r->sq_tail = 0;
	r->cq_head = r->cq_tail = 0;
	r->phase = NNP_CQE_PHASE;
}

/* The CQ can take one more completion (one slot always stays free). */
bool nnp_fw_ring_cq_has_room(const struct nnp_fw_ring *r)
{
	return (r->cq_tail + 1) % r->depth != r->cq_head;
}

/* A command is waiting and its completion has a free slot to go to. */
bool nnp_fw_ring_has_work(const struct nnp_fw_ring *r)
{
	return r->sq_head != r->sq_tail && nnp_fw_ring_cq_has_room(r);
}

void nnp_fw_ring_advance(struct nnp_fw_ring *r)
{
	r->sq_head = (r->sq_head + 1) % r->depth;
	r->cq_tail = (r->cq_tail + 1) % r->depth;
	if (r->cq_tail == 0)
		r->phase ^= NNP_CQE_PHASE;
}
