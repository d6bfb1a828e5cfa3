// SPDX-License-Identifier: MIT
/*
 * Firmware simulator admin queue: register access, command fetch by DMA,
 * execution and completion posting.
 *
 * Nothing the driver writes is trusted: ring setup is checked when the queue
 * is enabled, doorbell values are bounds-checked, and every command field an
 * opcode does not use must be zero. A malformed setup puts the queue into an
 * error state; a malformed command gets an error completion.
 */
#include <stdio.h>
#include <string.h>

#include "fw_internal.h"

#define SQE_SIZE sizeof(struct nnp_hw_admin_cmd)
#define CQE_SIZE sizeof(struct nnp_hw_admin_cqe)

_Static_assert(sizeof(struct nnp_hw_admin_cmd) == 64, "admin command size");
_Static_assert(sizeof(struct nnp_hw_admin_cqe) == 16, "admin completion size");
_Static_assert(sizeof(struct nnp_hw_identify) == NNP_HW_IDENTIFY_SIZE,
	       "identify size");

static uint64_t set_lo(uint64_t v, uint32_t lo)
{
	return (v & ~0xffffffffull) | lo;
}

static uint64_t set_hi(uint64_t v, uint32_t hi)
{
	return (v & 0xffffffffull) | ((uint64_t)hi << 32);
}

uint32_t nnp_fw_aq_reg_read_locked(struct nnp_fw *fw, uint32_t offset)
{
	const struct nnp_fw_admin_queue *aq = &fw->aq;

	switch (offset) {
	case NNP_REG_AQ_SQ_BASE_LO:
		return (uint32_t)aq->sq_base;
	case NNP_REG_AQ_SQ_BASE_HI:
		return (uint32_t)(aq->sq_base >> 32);
	case NNP_REG_AQ_CQ_BASE_LO:
		return (uint32_t)aq->cq_base;
	case NNP_REG_AQ_CQ_BASE_HI:
		return (uint32_t)(aq->cq_base >> 32);
	case NNP_REG_AQ_DEPTH:
		return aq->depth;
	case NNP_REG_AQ_CTRL:
		return aq->enabled ? NNP_AQ_CTRL_ENABLE : 0;
	case NNP_REG_AQ_STATUS:
		return (aq->enabled && !aq->error ? NNP_AQ_STATUS_READY : 0) |
		       (aq->error ? NNP_AQ_STATUS_ERROR : 0) |
		       (fw->aq_busy ? NNP_AQ_STATUS_BUSY : 0);
	case NNP_REG_AQ_SQ_TAIL:
		return aq->sq_tail;
	case NNP_REG_AQ_CQ_HEAD:
		return aq->cq_head;
	}
	nnp_fw_guest_error(fw, "read of unknown register 0x%x", offset);
	return 0;
}

static void aq_fail_locked(struct nnp_fw *fw, uint32_t fw_err, const char *why)
{
	fw->aq.error = true;
	fw->fw_error = fw_err;
	nnp_fw_guest_error(fw, "admin queue: %s", why);
}

static bool aq_setup_ok(const struct nnp_fw_admin_queue *aq)
{
	uint32_t d = aq->depth;

	return d >= NNP_AQ_DEPTH_MIN && d <= NNP_AQ_DEPTH_MAX &&
	       !(d & (d - 1)) && aq->sq_base && aq->cq_base &&
	       !(aq->sq_base % SQE_SIZE) && !(aq->cq_base % CQE_SIZE);
}

static bool aq_enable_locked(struct nnp_fw *fw)
{
	struct nnp_fw_admin_queue *aq = &fw->aq;

	if (fw->fw_status != NNP_FW_STATUS_READY) {
		nnp_fw_guest_error(fw, "admin queue enabled before firmware is ready");
		return false;
	}
	aq->enabled = true;
	aq->error = false;
	aq->sq_head = aq->sq_tail = 0;
	aq->cq_head = aq->cq_tail = 0;
	aq->phase = NNP_CQE_PHASE;
	if (!aq_setup_ok(aq)) {
		aq_fail_locked(fw, NNP_FW_ERR_AQ_CONFIG,
			       "bad depth or unaligned ring base");
		return false;
	}
	return true;
}

static bool aq_ring_index_ok(struct nnp_fw *fw, const char *name, uint32_t v)
{
	if (!fw->aq.enabled || fw->aq.error) {
		nnp_fw_guest_error(fw, "%s written while admin queue %s", name,
				   fw->aq.error ? "in error" : "disabled");
		return false;
	}
	if (v >= fw->aq.depth) {
		aq_fail_locked(fw, NNP_FW_ERR_AQ_CONFIG,
			       "ring index past depth");
		return false;
	}
	return true;
}

bool nnp_fw_aq_reg_write_locked(struct nnp_fw *fw, uint32_t offset,
				uint32_t value)
{
	struct nnp_fw_admin_queue *aq = &fw->aq;

	switch (offset) {
	case NNP_REG_AQ_CTRL:
		if (value & ~NNP_AQ_CTRL_ENABLE)
			nnp_fw_guest_error(fw, "AQ_CTRL: unknown bits 0x%x",
					   value);
		if (!(value & NNP_AQ_CTRL_ENABLE)) {
			aq->enabled = false;
			aq->error = false;
			return false;
		}
		return !aq->enabled && aq_enable_locked(fw);
	case NNP_REG_AQ_SQ_TAIL:
		if (!aq_ring_index_ok(fw, "AQ_SQ_TAIL", value))
			return false;
		aq->sq_tail = value;
		return true;
	case NNP_REG_AQ_CQ_HEAD:
		if (!aq_ring_index_ok(fw, "AQ_CQ_HEAD", value))
			return false;
		aq->cq_head = value;
		/* Room in the CQ may let a stalled queue go on. */
		return true;
	}

	if (aq->enabled) {
		nnp_fw_guest_error(fw, "admin queue register 0x%x written while enabled",
				   offset);
		return false;
	}
	switch (offset) {
	case NNP_REG_AQ_SQ_BASE_LO:
		aq->sq_base = set_lo(aq->sq_base, value);
		break;
	case NNP_REG_AQ_SQ_BASE_HI:
		aq->sq_base = set_hi(aq->sq_base, value);
		break;
	case NNP_REG_AQ_CQ_BASE_LO:
		aq->cq_base = set_lo(aq->cq_base, value);
		break;
	case NNP_REG_AQ_CQ_BASE_HI:
		aq->cq_base = set_hi(aq->cq_base, value);
		break;
	case NNP_REG_AQ_DEPTH:
		aq->depth = value;
		break;
	default:
		nnp_fw_guest_error(fw, "write 0x%x to read-only register 0x%x",
				   value, offset);
	}
	return false;
}

static bool args_zero(const struct nnp_hw_admin_cmd *cmd)
{
	size_t i;

	for (i = 0; i < sizeof(cmd->args) / sizeof(cmd->args[0]); i++)
		if (cmd->args[i])
			return false;
	return !cmd->flags && !cmd->rsvd0 && !cmd->rsvd1;
}

static uint16_t admin_identify(struct nnp_fw *fw,
			       const struct nnp_hw_admin_cmd *cmd,
			       uint32_t *result)
{
	struct nnp_hw_identify id;

	if (cmd->len < sizeof(id))
		return NNP_STATUS_BUFFER_TOO_SMALL;
	memset(&id, 0, sizeof(id));
	id.magic = NNP_HW_ID_MAGIC;
	id.hw_version = NNP_HW_VERSION;
	id.fw_version = NNP_FW_VERSION_CURRENT;
	id.chip_id = fw->cfg.chip_id;
	id.mem_size = fw->cfg.mem_size;
	id.caps = nnp_fw_reg_read(fw, NNP_REG_CAPS);
	id.num_ports = fw->cfg.num_ports;
	id.num_queues = NNP_HW_MAX_QUEUES;
	id.num_vectors = NNP_VECTOR_QUEUE(NNP_HW_MAX_QUEUES);
	snprintf(id.serial, sizeof(id.serial), "NNPSIM-%08x",
		 (unsigned int)fw->cfg.chip_id);
	snprintf(id.fw_build, sizeof(id.fw_build), "%s", NNP_FW_BUILD_STRING);
	if (fw->host.dma_write(fw->host.opaque, cmd->addr, &id, sizeof(id))) {
		nnp_fw_guest_error(fw, "IDENTIFY: buffer 0x%llx unreachable",
				   (unsigned long long)cmd->addr);
		return NNP_STATUS_DMA_ERROR;
	}
	*result = sizeof(id);
	return NNP_STATUS_SUCCESS;
}

static uint16_t admin_execute(struct nnp_fw *fw,
			      const struct nnp_hw_admin_cmd *cmd,
			      uint32_t *result)
{
	*result = 0;
	if (!args_zero(cmd)) {
		nnp_fw_guest_error(fw, "admin cid %u: reserved field set",
				   cmd->cid);
		return NNP_STATUS_INVALID_FIELD;
	}
	switch (cmd->opcode) {
	case NNP_ADMIN_NOP:
		if (cmd->addr || cmd->len)
			return NNP_STATUS_INVALID_FIELD;
		return NNP_STATUS_SUCCESS;
	case NNP_ADMIN_IDENTIFY:
		return admin_identify(fw, cmd, result);
	}
	nnp_fw_guest_error(fw, "admin cid %u: unknown opcode 0x%x", cmd->cid,
			   cmd->opcode);
	return NNP_STATUS_INVALID_OPCODE;
}

/*
 * Take the next command if there is one and room for its completion.
 * Returns false when there is nothing to do.
 */
static bool aq_next(struct nnp_fw *fw, uint32_t gen,
		    struct nnp_fw_admin_queue *snap)
{
	const struct nnp_fw_admin_queue *aq = &fw->aq;
	bool go;

	mtx_lock(&fw->lock);
	go = fw->generation == gen && aq->enabled && !aq->error &&
	     aq->sq_head != aq->sq_tail &&
	     (aq->cq_tail + 1) % aq->depth != aq->cq_head;
	if (go)
		*snap = *aq;
	fw->aq_busy = go;
	mtx_unlock(&fw->lock);
	return go;
}

void nnp_fw_aq_process(struct nnp_fw *fw)
{
	struct nnp_fw_admin_queue q;
	struct nnp_hw_admin_cmd cmd;
	struct nnp_hw_admin_cqe cqe;
	bool posted = false;
	bool irq = false;
	uint32_t gen;

	mtx_lock(&fw->lock);
	gen = fw->generation;
	mtx_unlock(&fw->lock);

	while (aq_next(fw, gen, &q)) {
		uint32_t fault = NNP_FW_ERR_NONE;

		memset(&cqe, 0, sizeof(cqe));
		if (fw->host.dma_read(fw->host.opaque,
				      q.sq_base + (uint64_t)q.sq_head * SQE_SIZE,
				      &cmd, sizeof(cmd))) {
			fault = NNP_FW_ERR_AQ_DMA;
		} else {
			cqe.status = admin_execute(fw, &cmd, &cqe.result);
			cqe.cid = cmd.cid;
			cqe.sq_head = (uint16_t)((q.sq_head + 1) % q.depth);
			cqe.phase = q.phase;
			if (fw->host.dma_write(fw->host.opaque,
					       q.cq_base + (uint64_t)q.cq_tail * CQE_SIZE,
					       &cqe, sizeof(cqe)))
				fault = NNP_FW_ERR_AQ_DMA;
		}

		mtx_lock(&fw->lock);
		if (fw->generation != gen) {
			mtx_unlock(&fw->lock);
			break;
		}
		if (fault) {
			aq_fail_locked(fw, fault, "ring unreachable by DMA");
		} else {
			fw->aq.sq_head = cqe.sq_head;
			fw->aq.cq_tail = (q.cq_tail + 1) % q.depth;
			if (fw->aq.cq_tail == 0)
				fw->aq.phase ^= NNP_CQE_PHASE;
			posted = true;
		}
		mtx_unlock(&fw->lock);
		if (fault)
			break;
	}

	mtx_lock(&fw->lock);
	fw->aq_busy = false;
	irq = posted && fw->generation == gen &&
	      nnp_fw_int_latch_locked(fw, NNP_INT_ADMIN_CQ);
	mtx_unlock(&fw->lock);
	if (irq)
		fw->host.raise_irq(fw->host.opaque, NNP_VECTOR_ADMIN);
}
