// SPDX-License-Identifier: MIT
/*
 * Submission/completion rings, shared by the admin queue and the user
 * queues: setup checks, positions, phase tags, and the fetch of a command
 * and post of its completion that both queues' loops are made of.
 */
#include "fw_base.h"

_Static_assert(sizeof(struct nnp_hw_admin_cmd) == NNP_HW_SQE_SIZE &&
	       sizeof(struct nnp_hw_queue_cmd) == NNP_HW_SQE_SIZE &&
	       sizeof(struct nnp_hw_cqe) == NNP_HW_CQE_SIZE, "ring entry sizes");

bool nnp_fw_ring_setup_ok(const struct nnp_fw_ring *r, uint32_t min_depth,
			  uint32_t max_depth)
{
	uint32_t d = r->depth;

	return d >= min_depth && d <= max_depth && !(d & (d - 1)) &&
	       r->sq_base && r->cq_base &&
	       !(r->sq_base % NNP_HW_SQE_SIZE) && !(r->cq_base % NNP_HW_CQE_SIZE);
}

void nnp_fw_ring_start(struct nnp_fw_ring *r)
{
	r->sq_head = r->sq_tail = 0;
	r->cq_head = r->cq_tail = 0;
	r->phase = NNP_CQE_PHASE;
	r->need = 0;
}

static uint32_t ring_need(const struct nnp_fw_ring *r)
{
	return r->need ? r->need : 1;
}

/*
 * The CQ can take the completions the head command needs (one slot
 * always stays free).
 */
bool nnp_fw_ring_cq_has_room(const struct nnp_fw_ring *r)
{
	return (r->cq_head + r->depth - r->cq_tail - 1) % r->depth >= ring_need(r);
}

/* The head command and what it needs are in the SQ. */
bool nnp_fw_ring_sq_ready(const struct nnp_fw_ring *r)
{
	return (r->sq_tail + r->depth - r->sq_head) % r->depth >= ring_need(r);
}

/* ...and the CQ has room for its completions. */
bool nnp_fw_ring_has_work(const struct nnp_fw_ring *r)
{
	return nnp_fw_ring_sq_ready(r) && nnp_fw_ring_cq_has_room(r);
}

bool nnp_fw_ring_fetch_ahead(struct nnp_fw *fw, const struct nnp_fw_ring *r,
			     uint32_t ahead, void *cmd)
{
	uint64_t slot = (r->sq_head + ahead) % r->depth;

	return !fw->host.dma_read(fw->host.opaque,
				  r->sq_base + slot * NNP_HW_SQE_SIZE,
				  cmd, NNP_HW_SQE_SIZE);
}

bool nnp_fw_ring_fetch(struct nnp_fw *fw, const struct nnp_fw_ring *r,
		       void *cmd)
{
	return nnp_fw_ring_fetch_ahead(fw, r, 0, cmd);
}

bool nnp_fw_ring_post(struct nnp_fw *fw, const struct nnp_fw_ring *r,
		      uint16_t cid, uint16_t status, uint64_t result)
{
	struct nnp_hw_cqe cqe = {
		.result = (uint32_t)result, .rsvd = (uint32_t)(result >> 32),
		.cid = cid, .status = status,
		.sq_head = (uint16_t)((r->sq_head + 1) % r->depth),
		.phase = r->phase,
	};

	fw_le_cqe(&cqe);
	return !fw->host.dma_write(fw->host.opaque,
				   r->cq_base + (uint64_t)r->cq_tail * NNP_HW_CQE_SIZE,
				   &cqe, sizeof(cqe));
}

void nnp_fw_ring_advance(struct nnp_fw_ring *r)
{
	r->sq_head = (r->sq_head + 1) % r->depth;
	r->cq_tail = (r->cq_tail + 1) % r->depth;
	if (r->cq_tail == 0)
		r->phase ^= NNP_CQE_PHASE;
}
