// SPDX-License-Identifier: MIT
/*
 * Firmware simulator user queues: creation by admin command, the doorbell
 * page each owner maps, and the workers that run commands.
 *
 * Any number of host threads may call nnp_fw_run_queues(); each claims one
 * queue at a time, so one queue's commands run in order while different
 * queues run in parallel. A failed command stops its queue (error state,
 * visible in the doorbell page) until the driver resets it.
 */
#include <string.h>

#include "fw_internal.h"

#define SQE_SIZE sizeof(struct nnp_hw_queue_cmd)
#define CQE_SIZE sizeof(struct nnp_hw_cqe)
/* Commands a worker runs from one queue before looking at the others. */
#define QUEUE_BATCH 16

static struct nnp_fw_queue *queue_of_locked(struct nnp_fw *fw, uint32_t ctx,
					    uint32_t qid)
{
	if (qid >= NNP_HW_MAX_QUEUES || !ctx || fw->queues[qid].ctx != ctx)
		return NULL;
	return &fw->queues[qid];
}

uint16_t nnp_fw_queue_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_hw_queue_args a;
	struct nnp_fw_queue *q;
	uint16_t status = NNP_STATUS_SUCCESS;

	memcpy(&a, cmd->args, sizeof(a));
	if (a.qid >= NNP_HW_MAX_QUEUES || a.vector < NNP_VECTOR_QUEUE(0) ||
	    a.vector >= NNP_VECTOR_QUEUE(NNP_HW_MAX_QUEUES))
		return NNP_STATUS_INVALID_FIELD;

	mtx_lock(&fw->lock);
	q = &fw->queues[a.qid];
	if (!nnp_fw_ctx_valid_locked(fw, a.ctx)) {
		status = NNP_STATUS_NOT_FOUND;
	} else if (q->ctx) {
		status = NNP_STATUS_BUSY;
	} else {
		struct nnp_fw_ring r = {
			.sq_base = a.sq_base, .cq_base = a.cq_base, .depth = a.depth,
		};

		if (!nnp_fw_ring_setup_ok(&r, NNP_HW_QUEUE_DEPTH_MIN,
					  NNP_HW_QUEUE_DEPTH_MAX)) {
			status = NNP_STATUS_INVALID_FIELD;
		} else {
			nnp_fw_ring_start(&r);
			q->ring = r;
			q->ctx = a.ctx;
			q->vector = a.vector;
			q->error = false;
			q->error_info = 0;
			q->enabled = true;
		}
	}
	mtx_unlock(&fw->lock);
	return status;
}

/* Stop @q, wait for its command in flight, forget it. */
static void queue_destroy(struct nnp_fw *fw, struct nnp_fw_queue *q)
{
	mtx_lock(&fw->lock);
	q->enabled = false;
	mtx_unlock(&fw->lock);
	mtx_lock(&q->exec);
	mtx_lock(&fw->lock);
	memset(&q->ring, 0, sizeof(q->ring));
	q->ctx = 0;
	q->error = false;
	q->error_info = 0;
	mtx_unlock(&fw->lock);
	mtx_unlock(&q->exec);
}

void nnp_fw_queues_destroy_ctx(struct nnp_fw *fw, uint32_t ctx)
{
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		bool match;

		mtx_lock(&fw->lock);
		match = fw->queues[i].ctx && (!ctx || fw->queues[i].ctx == ctx);
		mtx_unlock(&fw->lock);
		if (match)
			queue_destroy(fw, &fw->queues[i]);
	}
}

uint16_t nnp_fw_queue_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_fw_queue *q;

	mtx_lock(&fw->lock);
	q = queue_of_locked(fw, cmd->args[0], cmd->args[1]);
	mtx_unlock(&fw->lock);
	if (!q)
		return NNP_STATUS_NOT_FOUND;
	queue_destroy(fw, q);
	return NNP_STATUS_SUCCESS;
}

/* Clear the error state and start the rings over from slot 0, phase 1. */
uint16_t nnp_fw_queue_reset(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_fw_queue *q;

	mtx_lock(&fw->lock);
	q = queue_of_locked(fw, cmd->args[0], cmd->args[1]);
	if (q)
		q->enabled = false;
	mtx_unlock(&fw->lock);
	if (!q)
		return NNP_STATUS_NOT_FOUND;
	mtx_lock(&q->exec);
	mtx_lock(&fw->lock);
	nnp_fw_ring_start(&q->ring);
	q->error = false;
	q->error_info = 0;
	q->enabled = true;
	mtx_unlock(&fw->lock);
	mtx_unlock(&q->exec);
	return NNP_STATUS_SUCCESS;
}

/* ---- doorbell pages ---- */

bool nnp_fw_is_doorbell(uint32_t offset)
{
	return offset >= NNP_REG_DOORBELL_BASE &&
	       offset < NNP_DOORBELL(NNP_HW_MAX_QUEUES);
}

static struct nnp_fw_queue *db_queue(struct nnp_fw *fw, uint32_t offset)
{
	return &fw->queues[(offset - NNP_REG_DOORBELL_BASE) / NNP_REG_DOORBELL_STRIDE];
}

static void queue_fail_locked(struct nnp_fw_queue *q, uint16_t cid,
			      uint16_t status)
{
	q->error = true;
	q->error_info = (uint32_t)cid << 16 | status;
}

uint32_t nnp_fw_db_read_locked(struct nnp_fw *fw, uint32_t offset)
{
	struct nnp_fw_queue *q = db_queue(fw, offset);

	switch (offset % NNP_REG_DOORBELL_STRIDE) {
	case NNP_DB_SQ_TAIL:
		return q->ring.sq_tail;
	case NNP_DB_CQ_HEAD:
		return q->ring.cq_head;
	case NNP_DB_STATUS:
		return (q->enabled ? NNP_QUEUE_STATUS_ENABLED : 0) |
		       (q->error ? NNP_QUEUE_STATUS_ERROR : 0) |
		       (q->claimed ? NNP_QUEUE_STATUS_BUSY : 0);
	case NNP_DB_ERROR:
		return q->error_info;
	}
	nnp_fw_guest_error(fw, "read of unknown doorbell register 0x%x", offset);
	return 0;
}

unsigned int nnp_fw_db_write_locked(struct nnp_fw *fw, uint32_t offset,
				    uint32_t value)
{
	struct nnp_fw_queue *q = db_queue(fw, offset);
	uint32_t reg = offset % NNP_REG_DOORBELL_STRIDE;
	uint32_t qid = (uint32_t)(q - fw->queues);

	if (reg != NNP_DB_SQ_TAIL && reg != NNP_DB_CQ_HEAD) {
		nnp_fw_guest_error(fw, "write 0x%x to %s doorbell register 0x%x",
				   value, reg == NNP_DB_STATUS || reg == NNP_DB_ERROR ?
				   "read-only" : "unknown", offset);
		return 0;
	}
	if (!q->enabled) {
		nnp_fw_guest_error(fw, "doorbell of queue %u, which is not running",
				   qid);
		return 0;
	}
	if (value >= q->ring.depth) {
		nnp_fw_guest_error(fw, "queue %u: ring index %u past depth %u",
				   qid, value, q->ring.depth);
		queue_fail_locked(q, 0xffff, NNP_STATUS_INVALID_FIELD);
		return 0;
	}
	if (reg == NNP_DB_SQ_TAIL)
		q->ring.sq_tail = value;
	else
		q->ring.cq_head = value;
	return NNP_FW_KICK_QUEUES;
}

/* ---- workers ---- */

static bool queue_runnable_locked(const struct nnp_fw_queue *q)
{
	return q->enabled && !q->error && nnp_fw_ring_has_work(&q->ring);
}

/* Claim a queue with work, round-robin; NULL if there is none. */
static struct nnp_fw_queue *queue_claim(struct nnp_fw *fw)
{
	struct nnp_fw_queue *found = NULL;
	uint32_t i;

	mtx_lock(&fw->lock);
	for (i = 0; i < NNP_HW_MAX_QUEUES && !found; i++) {
		struct nnp_fw_queue *q =
			&fw->queues[(fw->next_queue + i) % NNP_HW_MAX_QUEUES];

		if (!q->claimed && queue_runnable_locked(q)) {
			q->claimed = true;
			found = q;
		}
	}
	if (found)
		fw->next_queue = (uint32_t)(found - fw->queues + 1) % NNP_HW_MAX_QUEUES;
	mtx_unlock(&fw->lock);
	return found;
}

/*
 * Run one command of @q; false when the queue has nothing runnable. The
 * exec lock is held for the whole command, so destroying the queue or
 * unregistering a key waits for it.
 */
static bool queue_step(struct nnp_fw *fw, struct nnp_fw_queue *q, bool *posted)
{
	struct nnp_hw_queue_cmd cmd;
	struct nnp_hw_cqe cqe = { 0 };
	struct nnp_fw_ring r;
	uint32_t ctx;
	bool fault = false;

	mtx_lock(&q->exec);
	mtx_lock(&fw->lock);
	if (!queue_runnable_locked(q)) {
		mtx_unlock(&fw->lock);
		mtx_unlock(&q->exec);
		return false;
	}
	r = q->ring;
	ctx = q->ctx;
	fw->executing++;
	mtx_unlock(&fw->lock);

	if (fw->host.dma_read(fw->host.opaque, r.sq_base + (uint64_t)r.sq_head * SQE_SIZE,
			      &cmd, sizeof(cmd))) {
		fault = true;
	} else {
		cqe.status = nnp_fw_exec(fw, ctx, &cmd);
		cqe.cid = cmd.cid;
		cqe.sq_head = (uint16_t)((r.sq_head + 1) % r.depth);
		cqe.phase = r.phase;
		fault = fw->host.dma_write(fw->host.opaque,
					   r.cq_base + (uint64_t)r.cq_tail * CQE_SIZE,
					   &cqe, sizeof(cqe)) != 0;
	}

	mtx_lock(&fw->lock);
	fw->executing--;
	if (fault) {
		nnp_fw_guest_error(fw, "queue %u: ring unreachable by DMA",
				   (unsigned int)(q - fw->queues));
		queue_fail_locked(q, 0xffff, NNP_STATUS_DMA_ERROR);
	} else {
		nnp_fw_ring_advance(&q->ring);
		*posted = true;
		if (cqe.status == NNP_STATUS_SUCCESS) {
			fw->counters.cmds_completed++;
		} else {
			fw->counters.cmds_failed++;
			queue_fail_locked(q, cmd.cid, cqe.status);
		}
	}
	mtx_unlock(&fw->lock);
	mtx_unlock(&q->exec);
	return !fault && cqe.status == NNP_STATUS_SUCCESS;
}

void nnp_fw_run_queues(struct nnp_fw *fw)
{
	struct nnp_fw_queue *q;

	while ((q = queue_claim(fw))) {
		bool posted = false;
		uint32_t vector;
		int n;

		for (n = 0; n < QUEUE_BATCH && queue_step(fw, q, &posted); n++)
			;
		mtx_lock(&fw->lock);
		q->claimed = false;
		vector = q->ctx ? q->vector : 0;
		mtx_unlock(&fw->lock);
		/* One interrupt per batch of completions. */
		if (posted && vector)
			fw->host.raise_irq(fw->host.opaque, vector);
	}
}
