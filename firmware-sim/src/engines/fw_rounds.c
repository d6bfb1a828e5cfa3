// SPDX-License-Identifier: MIT
/*
 * Firmware simulator commands made of parts that each wait on their own
 * nnp_fw_op: an exchange's flows (fw_xchg.c), a group's members
 * (fw_group.c). Each round steps every part not done once; the command
 * parks on any port when a round moved none of them, unless a wake came
 * while they ran (fw->wakes), as the allreduce algorithms' lanes do
 * (fw_algo.c). So every part goes on whichever of its peers is first.
 */
#include "fw_engines.h"

uint16_t nnp_fw_op_torn(struct nnp_fw *fw, const struct nnp_fw_op *op)
{
	uint16_t torn;

	mtx_lock(&fw->lock);
	torn = op->aborted;
	mtx_unlock(&fw->lock);
	return torn;
}

void nnp_fw_part_begin(struct nnp_fw *fw, const struct nnp_fw_round *r,
		       struct nnp_fw_op *part)
{
	mtx_lock(&fw->lock);
	/* A part torn down on its own (a member a peer left) stays so. */
	if (r->aborted)
		part->aborted = r->aborted;
	else if (!part->aborted)
		part->aborted = fw->engine_hooks->torn_locked(fw, part);
	part->link_lost = r->lost;
	part->parked = false;
	mtx_unlock(&fw->lock);
}

void nnp_fw_part_waits(struct nnp_fw_round *r, const struct nnp_fw_op *part)
{
	if (part->deadline_ns < r->deadline)
		r->deadline = part->deadline_ns;
	if (part->wait_since_ns < r->since) {
		r->since = part->wait_since_ns;
		r->port = part->waits_on;
	}
}

void nnp_fw_part_parked(struct nnp_fw_round *r, const struct nnp_fw_op *part)
{
	r->left++;
	nnp_fw_part_waits(r, part);
}

void nnp_fw_park_parts_locked(struct nnp_fw_op *op,
			      const struct nnp_fw_round *r)
{
	op->parked = true;
	op->ready = false;
	op->wait_port = NNP_FW_ANY_PORT;
	op->deadline_ns = r->deadline;
	op->wait_since_ns = r->since;
	op->waits_on = r->port;
}

uint16_t nnp_fw_rounds(struct nnp_fw *fw, struct nnp_fw_op *op,
		       uint16_t (*round)(struct nnp_fw *fw,
					 struct nnp_fw_op *op,
					 struct nnp_fw_round *r))
{
	for (;;) {
		struct nnp_fw_round r = {
			.deadline = UINT64_MAX, .since = UINT64_MAX,
		};
		uint32_t wakes;
		uint16_t st;

		mtx_lock(&fw->lock);
		wakes = fw->wakes;
		r.aborted = op->aborted;
		r.lost = op->link_lost;
		mtx_unlock(&fw->lock);
		st = round(fw, op, &r);
		if (st || !r.left)
			return st;
		if (r.moved)
			continue;
		mtx_lock(&fw->lock);
		if (fw->wakes == wakes && !op->aborted && !op->link_lost) {
			nnp_fw_park_parts_locked(op, &r);
			mtx_unlock(&fw->lock);
			return NNP_FW_PARKED;
		}
		mtx_unlock(&fw->lock);
	}
}
