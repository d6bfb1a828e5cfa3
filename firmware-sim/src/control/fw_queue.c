// SPDX-License-Identifier: MIT
/*
 * Firmware simulator user queues: creation by admin command, the doorbell
 * page each owner maps, and the workers that run commands.
 *
 * Any number of host threads may call nnp_fw_run_queues(); each claims one
 * queue at a time, so one queue's commands run in order while different
 * queues run in parallel. A failed command stops its queue (error state,
 * visible in the doorbell page) until the driver resets it.
 *
 * A link command parks its queue while it waits (see nnp_fw_op): the
 * worker moves on, and the queue is runnable again once the op is ready,
 * aborted or past its deadline. Admin commands that tear a queue down
 * therefore wait for one step at most, never for another chip's data: the
 * command in flight ends ABORTED.
 */
#include <stdlib.h>
#include <string.h>

#include "fw_control.h"

/* Commands a worker runs from one queue before looking at the others. */
#define QUEUE_BATCH 16

/* The queue an admin command names by context and id; NULL if none. */
static struct nnp_fw_queue *queue_of_cmd(struct nnp_fw *fw,
					 const struct nnp_hw_admin_cmd *cmd)
{
	uint32_t ctx = fw_admin_arg(cmd, 0), qid = fw_admin_arg(cmd, 1);
	struct nnp_fw_queue *q = NULL;

	mtx_lock(&fw->lock);
	if (qid < NNP_HW_MAX_QUEUES && ctx && fw->queues[qid].ctx == ctx)
		q = &fw->queues[qid];
	mtx_unlock(&fw->lock);
	return q;
}

/* Start a queue's shadow doorbell words over at 0 (v1.11); false on a DMA fault. */
static bool shadow_clear(struct nnp_fw *fw, uint64_t shadow)
{
	const struct nnp_hw_queue_shadow zero = { 0 };

	return !shadow ||
	       !fw->host.dma_write(fw->host.opaque, shadow, &zero, sizeof(zero));
}

/* QUEUE_CREATE's data buffer: none, or the 8-byte aligned shadow words. */
static bool shadow_buffer_ok(const struct nnp_hw_admin_cmd *cmd)
{
	if (!cmd->addr && !cmd->len)
		return true;
	return cmd->addr && !(cmd->addr % 8) &&
	       cmd->len == sizeof(struct nnp_hw_queue_shadow);
}

uint16_t nnp_fw_queue_create(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_hw_queue_args a;
	struct nnp_fw_queue *q;
	uint16_t status = NNP_STATUS_SUCCESS;

	memcpy(&a, cmd->args, sizeof(a));
	fw_le_queue_args(&a);
	if (a.qid >= NNP_HW_MAX_QUEUES || a.vector < NNP_VECTOR_QUEUE(0) ||
	    a.vector >= NNP_VECTOR_QUEUE(NNP_HW_MAX_QUEUES) || a.irq_arm % 4 ||
	    !shadow_buffer_ok(cmd))
		return NNP_STATUS_INVALID_FIELD;
	if (!shadow_clear(fw, cmd->addr))
		return NNP_STATUS_DMA_ERROR;

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
			q->irq_arm = a.irq_arm;
			q->shadow = cmd->addr;
			q->error = false;
			q->error_info = 0;
			q->enabled = true;
		}
	}
	mtx_unlock(&fw->lock);
	return status;
}

static void queue_fail_locked(struct nnp_fw_queue *q, uint16_t cid,
			      uint16_t status)
{
	q->error = true;
	q->error_info = (uint32_t)cid << 16 | status;
}

/*
 * Raise @vector for the completions just posted on a queue whose armed
 * word is at @irq_arm, unless nobody sleeps on them (v1.9, struct
 * nnp_hw_queue_args): a process that polls its ring is not interrupted.
 */
static void queue_raise_irq(struct nnp_fw *fw, uint32_t vector,
			    uint64_t irq_arm)
{
	uint32_t armed = 1;
	const uint32_t disarmed = 0;

	if (irq_arm) {
		/*
		 * The completions' writes before the word's read, against the
		 * driver's write of the word before its read of the ring.
		 */
		atomic_thread_fence(memory_order_seq_cst);
		if (!fw->host.dma_read(fw->host.opaque, irq_arm, &armed,
				       sizeof(armed)) && !armed)
			return;
		fw->host.dma_write(fw->host.opaque, irq_arm, &disarmed,
				   sizeof(disarmed));
	}
	fw->host.raise_irq(fw->host.opaque, vector);
}

/* Account a command's end, with fw->lock held; true if it was posted. */
static bool queue_done_locked(struct nnp_fw *fw, struct nnp_fw_queue *q,
			      bool posted, uint16_t cid, uint16_t status)
{
	if (!posted) {
		nnp_fw_guest_error(fw, "queue %u: ring unreachable by DMA",
				   (unsigned int)(q - fw->queues));
		queue_fail_locked(q, 0xffff, NNP_STATUS_DMA_ERROR);
		return false;
	}
	nnp_fw_ring_advance(&q->ring);
	if (status == NNP_STATUS_SUCCESS) {
		fw->counters.cmds_completed++;
	} else {
		fw->counters.cmds_failed++;
		queue_fail_locked(q, cid, status);
	}
	return true;
}

/* Mark @q's link command aborted if @key is 0 or it uses @key; fw->lock held. */
static bool op_abort_locked(struct nnp_fw_queue *q, uint32_t key)
{
	struct nnp_fw_op *op = q->op;

	if (!op || (key && !nnp_fw_op_uses_key(op, key)))
		return false;
	op->aborted = NNP_STATUS_ABORTED;
	return true;
}

/*
 * With @q->exec held, so that no worker runs it: end @q's link command in
 * flight ABORTED, posting its completion if @post, and stop the queue as
 * after any failed command.
 */
static void queue_abort_op(struct nnp_fw *fw, struct nnp_fw_queue *q,
			   uint32_t key, bool post)
{
	struct nnp_fw_op *op = NULL;
	struct nnp_fw_ring r;
	uint64_t irq_arm;
	uint32_t vector;
	bool irq = false;
	uint16_t cid;

	mtx_lock(&fw->lock);
	if (op_abort_locked(q, key)) {
		op = q->op;
		q->op = NULL;
	}
	r = q->ring;
	vector = q->vector;
	irq_arm = q->irq_arm;
	mtx_unlock(&fw->lock);
	if (!op)
		return;
	cid = op->cid;
	op->end(fw, op, NNP_STATUS_ABORTED);
	if (!post)
		return;
	post = nnp_fw_ring_post(fw, &r, cid, NNP_STATUS_ABORTED, 0);
	mtx_lock(&fw->lock);
	irq = queue_done_locked(fw, q, post, cid, NNP_STATUS_ABORTED);
	mtx_unlock(&fw->lock);
	if (irq)
		queue_raise_irq(fw, vector, irq_arm);
}

/*
 * Stop @q and take it from the workers: a step in flight finishes, a link
 * command ends ABORTED. Returns with @q->exec held.
 */
static void queue_stop(struct nnp_fw *fw, struct nnp_fw_queue *q, bool post)
{
	mtx_lock(&fw->lock);
	q->enabled = false;
	op_abort_locked(q, 0);
	mtx_unlock(&fw->lock);
	mtx_lock(&q->exec);
	queue_abort_op(fw, q, 0, post);
}

/* Stop @q, end its command in flight, forget it. */
static void queue_destroy(struct nnp_fw *fw, struct nnp_fw_queue *q, bool post)
{
	queue_stop(fw, q, post);
	mtx_lock(&fw->lock);
	memset(&q->ring, 0, sizeof(q->ring));
	q->ctx = 0;
	q->shadow = 0;
	q->error = false;
	q->error_info = 0;
	mtx_unlock(&fw->lock);
	mtx_unlock(&q->exec);
}

void nnp_fw_queues_destroy_ctx(struct nnp_fw *fw, uint32_t ctx, bool post)
{
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		bool match;

		mtx_lock(&fw->lock);
		match = fw->queues[i].ctx && (!ctx || fw->queues[i].ctx == ctx);
		mtx_unlock(&fw->lock);
		if (match)
			queue_destroy(fw, &fw->queues[i], post);
	}
}

void nnp_fw_queues_abort_key(struct nnp_fw *fw, uint32_t ctx, uint32_t key)
{
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		struct nnp_fw_queue *q = &fw->queues[i];
		bool mine;

		mtx_lock(&fw->lock);
		mine = q->ctx == ctx;
		if (mine)
			op_abort_locked(q, key);
		mtx_unlock(&fw->lock);
		if (mine) {
			/* A command that resolved the key holds this. */
			mtx_lock(&q->exec);
			queue_abort_op(fw, q, key, true);
			mtx_unlock(&q->exec);
		}
	}
}

uint16_t nnp_fw_queue_destroy(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_fw_queue *q = queue_of_cmd(fw, cmd);

	if (!q)
		return NNP_STATUS_NOT_FOUND;
	queue_destroy(fw, q, true);
	return NNP_STATUS_SUCCESS;
}

/* Clear the error state and start the rings over from slot 0, phase 1. */
uint16_t nnp_fw_queue_reset(struct nnp_fw *fw, const struct nnp_hw_admin_cmd *cmd)
{
	struct nnp_fw_queue *q = queue_of_cmd(fw, cmd);
	uint16_t status = NNP_STATUS_SUCCESS;

	if (!q)
		return NNP_STATUS_NOT_FOUND;
	queue_stop(fw, q, true);
	/* The owner's tail of before the reset must not run the new ring. */
	if (!shadow_clear(fw, q->shadow))
		status = NNP_STATUS_DMA_ERROR;
	mtx_lock(&fw->lock);
	nnp_fw_ring_start(&q->ring);
	q->error = status != NNP_STATUS_SUCCESS;
	q->error_info = q->error ? 0xffffu << 16 | status : 0;
	q->enabled = true;
	mtx_unlock(&fw->lock);
	mtx_unlock(&q->exec);
	return status;
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
		       (q->claimed ? NNP_QUEUE_STATUS_BUSY : 0) |
		       (q->op && q->op->parked ? NNP_QUEUE_STATUS_WAITING : 0);
	case NNP_DB_ERROR:
		return q->error_info;
	case NNP_DB_SQ_HEAD:
		return q->ring.sq_head;
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
	bool full;

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
	if (reg == NNP_DB_SQ_TAIL) {
		q->ring.sq_tail = value;
		return NNP_FW_KICK_QUEUES;
	}
	/*
	 * Owners write CQ_HEAD lazily, most often while the queue still has
	 * room: only a write that frees a full CQ lets a stopped queue go on.
	 */
	full = !nnp_fw_ring_cq_has_room(&q->ring);
	q->ring.cq_head = value;
	return full && nnp_fw_ring_has_work(&q->ring) ? NNP_FW_KICK_QUEUES : 0;
}

/* ---- workers ---- */

static bool op_runnable_locked(const struct nnp_fw_op *op, uint64_t now)
{
	return !op || !op->parked || op->ready || op->aborted ||
	       now >= op->deadline_ns;
}

static bool queue_runnable_locked(const struct nnp_fw_queue *q, uint64_t now)
{
	return q->enabled && !q->error && nnp_fw_ring_has_work(&q->ring) &&
	       op_runnable_locked(q->op, now);
}

uint64_t nnp_fw_queues_deadline_locked(struct nnp_fw *fw)
{
	uint64_t t = UINT64_MAX;
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		const struct nnp_fw_op *op = fw->queues[i].op;

		if (op && op->parked && !op->ready && op->deadline_ns < t)
			t = op->deadline_ns;
	}
	return t;
}

bool nnp_fw_queues_expire_locked(struct nnp_fw *fw, uint64_t now)
{
	bool any = false;
	uint32_t i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		struct nnp_fw_op *op = fw->queues[i].op;

		if (op && op->parked && !op->ready && now >= op->deadline_ns) {
			op->ready = true;
			any = true;
		}
	}
	return any;
}

/* Claim a queue with work, round-robin; NULL if there is none. */
static struct nnp_fw_queue *queue_claim(struct nnp_fw *fw)
{
	uint64_t now = fw->host.now_ns(fw->host.opaque);
	struct nnp_fw_queue *found = NULL;
	uint32_t i;

	mtx_lock(&fw->lock);
	for (i = 0; i < NNP_HW_MAX_QUEUES && !found; i++) {
		struct nnp_fw_queue *q =
			&fw->queues[(fw->next_queue + i) % NNP_HW_MAX_QUEUES];

		if (!q->claimed && queue_runnable_locked(q, now) &&
		    !nnp_fw_fault_queue_stuck(fw, (uint32_t)(q - fw->queues))) {
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
 * Start GROUP @cmd at @r's head (v1.13): its members are the len commands
 * after it. Until they are all in the ring and the CQ has room for every
 * completion, the queue waits (*@status NNP_FW_PARKED, no op); false on a
 * DMA fault.
 */
static bool group_fetch(struct nnp_fw *fw, struct nnp_fw_queue *q,
			const struct nnp_fw_ring *r, uint32_t ctx,
			const struct nnp_hw_queue_cmd *cmd, uint16_t *status,
			struct nnp_fw_op **op)
{
	struct nnp_hw_queue_cmd *members;
	struct nnp_fw_ring need = *r;
	uint32_t i, n;
	bool ready;

	if (!cmd->len || cmd->len >= r->depth / 2) {
		nnp_fw_guest_error(fw, "queue cid %u: GROUP of %llu members, not 1 to %u",
				   cmd->cid, (unsigned long long)cmd->len,
				   r->depth / 2 - 1);
		*status = NNP_STATUS_INVALID_FIELD;
		return true;
	}
	n = (uint32_t)cmd->len;
	mtx_lock(&fw->lock);
	need.sq_tail = q->ring.sq_tail;
	need.cq_head = q->ring.cq_head;
	need.need = n + 1;
	ready = nnp_fw_ring_has_work(&need);
	q->ring.need = ready ? 0 : n + 1;
	mtx_unlock(&fw->lock);
	if (!ready) {
		*status = NNP_FW_PARKED;
		return true;
	}
	members = malloc(n * sizeof(*members));
	if (!members) {
		*status = NNP_STATUS_NO_RESOURCES;
		return true;
	}
	for (i = 0; i < n; i++) {
		if (!nnp_fw_ring_fetch_ahead(fw, r, i + 1, &members[i])) {
			free(members);
			return false;
		}
		fw_le_queue_cmd(&members[i]);
	}
	*status = nnp_fw_group(fw, ctx, cmd, members, n, op);
	free(members);
	return true;
}

/*
 * Start the command at @r's head: a status, or for a link command its op,
 * made @q's. *@cid gets the command's id; false on a DMA fault.
 */
static bool queue_fetch(struct nnp_fw *fw, struct nnp_fw_queue *q,
			const struct nnp_fw_ring *r, uint32_t ctx,
			uint16_t *cid, uint16_t *status)
{
	struct nnp_hw_queue_cmd cmd;
	struct nnp_fw_op *op = NULL;

	if (!nnp_fw_ring_fetch(fw, r, &cmd))
		return false;
	fw_le_queue_cmd(&cmd);
	*cid = cmd.cid;
	if (cmd.opcode != NNP_CMD_GROUP)
		*status = nnp_fw_exec(fw, ctx, &cmd, &op);
	else if (!group_fetch(fw, q, r, ctx, &cmd, status, &op))
		return false;
	if (op) {
		op->cid = cmd.cid;
		mtx_lock(&fw->lock);
		q->op = op;
		/* From here on, an abort or a leave finds it on the queue. */
		nnp_fw_comm_op_queued_locked(fw, ctx, op);
		mtx_unlock(&fw->lock);
	}
	return true;
}

/*
 * A GROUP @op that succeeded (v1.13): its own completion, then each
 * member's, in ring order; @r, @q's ring when the step began, is left at
 * the last member for the caller's post. The group started with room for
 * them all. False on a DMA fault.
 */
static bool post_members(struct nnp_fw *fw, struct nnp_fw_queue *q,
			 struct nnp_fw_ring *r, const struct nnp_fw_op *op,
			 uint16_t *cid, bool *posted)
{
	uint32_t i;

	for (i = 0; i < op->members; i++) {
		bool ok = nnp_fw_ring_post(fw, r, *cid, NNP_STATUS_SUCCESS, 0);

		mtx_lock(&fw->lock);
		*posted |= queue_done_locked(fw, q, ok, *cid, NNP_STATUS_SUCCESS);
		*r = q->ring;
		mtx_unlock(&fw->lock);
		if (!ok)
			return false;
		*cid = op->member_cids[i];
	}
	/* The last member's completion is the caller's to post. */
	return true;
}

/*
 * Run one step of @q's command in flight; false when the queue has
 * nothing runnable (or the command parked). The exec lock is held for the
 * step, so destroying the queue or unregistering a key waits for it.
 */
static bool queue_step(struct nnp_fw *fw, struct nnp_fw_queue *q, bool *posted)
{
	uint64_t now = fw->host.now_ns(fw->host.opaque);
	uint16_t cid = 0xffff, status = NNP_STATUS_SUCCESS;
	struct nnp_fw_op *op;
	struct nnp_fw_ring r;
	uint64_t detail = 0;
	bool ok = true;
	uint32_t ctx;

	mtx_lock(&q->exec);
	mtx_lock(&fw->lock);
	if (!queue_runnable_locked(q, now)) {
		mtx_unlock(&fw->lock);
		mtx_unlock(&q->exec);
		return false;
	}
	r = q->ring;
	ctx = q->ctx;
	op = q->op;
	if (op)
		op->parked = false;
	nnp_fw_busy_begin_locked(fw, now);
	mtx_unlock(&fw->lock);

	if (!op)
		ok = queue_fetch(fw, q, &r, ctx, &cid, &status);
	mtx_lock(&fw->lock);
	op = q->op;
	mtx_unlock(&fw->lock);
	if (op) {
		status = op->step(fw, op);
		cid = op->cid;
		if (status != NNP_FW_PARKED) {
			nnp_fw_clock_end_op(fw, ctx, op);
			/*
			 * Out of the queue before end() frees it: an abort or
			 * a link event from another chip's thread looks at
			 * q->op under fw->lock at any time.
			 */
			mtx_lock(&fw->lock);
			q->op = NULL;
			mtx_unlock(&fw->lock);
			if (!status && op->members && ok)
				ok = post_members(fw, q, &r, op, &cid, posted);
			detail = op->detail;
			op->end(fw, op, status);
		}
	}
	if (ok && status != NNP_FW_PARKED)
		ok = nnp_fw_ring_post(fw, &r, cid, status, detail);

	mtx_lock(&fw->lock);
	nnp_fw_busy_end_locked(fw, fw->host.now_ns(fw->host.opaque));
	if (status != NNP_FW_PARKED)
		*posted |= queue_done_locked(fw, q, ok, cid, status);
	mtx_unlock(&fw->lock);
	mtx_unlock(&q->exec);
	return ok && status == NNP_STATUS_SUCCESS;
}

/*
 * Claimed queue @q ran out of commands: if it has a shadow doorbell
 * (v1.11), say where the device stopped (sq_event), then read the owner's
 * tail, which the owner may have moved without a doorbell write while the
 * queue ran. The exec lock keeps the queue, and the host memory of its
 * shadow words, from being destroyed meanwhile.
 */
static void queue_shadow_idle(struct nnp_fw *fw, struct nnp_fw_queue *q)
{
	uint32_t head, event, tail, known, depth;
	uint64_t shadow;
	bool fault;

	mtx_lock(&q->exec);
	mtx_lock(&fw->lock);
	shadow = q->shadow;
	head = q->ring.sq_head;
	known = q->ring.sq_tail;
	depth = q->ring.depth;
	/* Idle: no command, or a GROUP whose members are not all there. */
	if (!q->enabled || q->error || q->op || nnp_fw_ring_sq_ready(&q->ring))
		shadow = 0;
	mtx_unlock(&fw->lock);
	if (!shadow) {
		mtx_unlock(&q->exec);
		return;
	}
	fw_store_le32(&event, head);
	fault = fw->host.dma_write(fw->host.opaque,
				   shadow + offsetof(struct nnp_hw_queue_shadow, sq_event),
				   &event, sizeof(event));
	/* Against the owner's tail write, then its read of sq_event. */
	atomic_thread_fence(memory_order_seq_cst);
	fault = fault ||
		fw->host.dma_read(fw->host.opaque,
				  shadow + offsetof(struct nnp_hw_queue_shadow, sq_tail),
				  &tail, sizeof(tail));
	tail = fw_load_le32(&tail);
	mtx_lock(&fw->lock);
	if (fault) {
		nnp_fw_guest_error(fw, "queue %u: shadow doorbell unreachable by DMA",
				   (unsigned int)(q - fw->queues));
		queue_fail_locked(q, 0xffff, NNP_STATUS_DMA_ERROR);
	} else if (tail >= depth) {
		nnp_fw_guest_error(fw, "queue %u: shadow ring index %u past depth %u",
				   (unsigned int)(q - fw->queues), tail, depth);
		queue_fail_locked(q, 0xffff, NNP_STATUS_INVALID_FIELD);
	} else if (q->ring.sq_tail == known) {
		/*
		 * Unless a doorbell write came since: the owner rang it after
		 * its shadow write, so its tail is as new as this read's or
		 * newer, and this read must not take the queue back to it.
		 */
		q->ring.sq_tail = tail;
	}
	mtx_unlock(&fw->lock);
	mtx_unlock(&q->exec);
}

void nnp_fw_run_queues(struct nnp_fw *fw)
{
	struct nnp_fw_queue *q;

	if (!nnp_fw_fault_hung(fw)) {
		nnp_fw_comms_pass_aborts(fw);
		nnp_fw_relay_run(fw);
	}
	while (!nnp_fw_fault_hung(fw) && (q = queue_claim(fw))) {
		bool posted = false;
		uint64_t irq_arm;
		uint32_t vector;
		int n;

		for (n = 0; n < QUEUE_BATCH && queue_step(fw, q, &posted); n++)
			;
		/* Commands given by the shadow tail make it runnable again. */
		queue_shadow_idle(fw, q);
		mtx_lock(&fw->lock);
		q->claimed = false;
		vector = q->ctx ? q->vector : 0;
		irq_arm = q->irq_arm;
		mtx_unlock(&fw->lock);
		/* One interrupt per batch of completions, if anyone sleeps. */
		if (posted && vector)
			queue_raise_irq(fw, vector, irq_arm);
	}
	/* After the commands: a failure they met is told once they ended. */
	if (!nnp_fw_fault_hung(fw))
		nnp_fw_events_notify(fw);
}
