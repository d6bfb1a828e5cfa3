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

#include "fw_control.h"

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
	const struct nnp_fw_ring *r = &aq->ring;

	switch (offset) {
	case NNP_REG_AQ_SQ_BASE_LO:
		return (uint32_t)r->sq_base;
	case NNP_REG_AQ_SQ_BASE_HI:
		return (uint32_t)(r->sq_base >> 32);
	case NNP_REG_AQ_CQ_BASE_LO:
		return (uint32_t)r->cq_base;
	case NNP_REG_AQ_CQ_BASE_HI:
		return (uint32_t)(r->cq_base >> 32);
	case NNP_REG_AQ_DEPTH:
		return r->depth;
	case NNP_REG_AQ_CTRL:
		return aq->enabled ? NNP_AQ_CTRL_ENABLE : 0;
	case NNP_REG_AQ_STATUS:
		return (aq->enabled && !aq->error ? NNP_AQ_STATUS_READY : 0) |
		       (aq->error ? NNP_AQ_STATUS_ERROR : 0) |
		       (fw->aq_busy || fw->executing || fw->reset_pending ?
			NNP_AQ_STATUS_BUSY : 0);
	case NNP_REG_AQ_SQ_TAIL:
		return r->sq_tail;
	case NNP_REG_AQ_CQ_HEAD:
		return r->cq_head;
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

static bool aq_enable_locked(struct nnp_fw *fw)
{
	struct nnp_fw_admin_queue *aq = &fw->aq;

	if (fw->fw_status != NNP_FW_STATUS_READY) {
		nnp_fw_guest_error(fw, "admin queue enabled before firmware is ready");
		return false;
	}
	aq->enabled = true;
	aq->error = false;
	nnp_fw_ring_start(&aq->ring);
	if (!nnp_fw_ring_setup_ok(&aq->ring, NNP_AQ_DEPTH_MIN,
				  NNP_AQ_DEPTH_MAX)) {
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
	if (v >= fw->aq.ring.depth) {
		aq_fail_locked(fw, NNP_FW_ERR_AQ_CONFIG,
			       "ring index past depth");
		return false;
	}
	return true;
}

unsigned int nnp_fw_aq_reg_write_locked(struct nnp_fw *fw, uint32_t offset,
					uint32_t value)
{
	struct nnp_fw_admin_queue *aq = &fw->aq;
	struct nnp_fw_ring *r = &aq->ring;

	switch (offset) {
	case NNP_REG_AQ_CTRL:
		if (value & ~NNP_AQ_CTRL_ENABLE)
			nnp_fw_guest_error(fw, "AQ_CTRL: unknown bits 0x%x",
					   value);
		if (!(value & NNP_AQ_CTRL_ENABLE)) {
			aq->enabled = false;
			aq->error = false;
			return 0;
		}
		return !aq->enabled && aq_enable_locked(fw) ?
		       NNP_FW_KICK_ADMIN : 0;
	case NNP_REG_AQ_SQ_TAIL:
		if (!aq_ring_index_ok(fw, "AQ_SQ_TAIL", value))
			return 0;
		r->sq_tail = value;
		return NNP_FW_KICK_ADMIN;
	case NNP_REG_AQ_CQ_HEAD:
		if (!aq_ring_index_ok(fw, "AQ_CQ_HEAD", value))
			return 0;
		r->cq_head = value;
		/* Room in the CQ may let a stalled queue go on. */
		return NNP_FW_KICK_ADMIN;
	}

	if (aq->enabled) {
		nnp_fw_guest_error(fw, "admin queue register 0x%x written while enabled",
				   offset);
		return 0;
	}
	switch (offset) {
	case NNP_REG_AQ_SQ_BASE_LO:
		r->sq_base = set_lo(r->sq_base, value);
		break;
	case NNP_REG_AQ_SQ_BASE_HI:
		r->sq_base = set_hi(r->sq_base, value);
		break;
	case NNP_REG_AQ_CQ_BASE_LO:
		r->cq_base = set_lo(r->cq_base, value);
		break;
	case NNP_REG_AQ_CQ_BASE_HI:
		r->cq_base = set_hi(r->cq_base, value);
		break;
	case NNP_REG_AQ_DEPTH:
		r->depth = value;
		break;
	default:
		nnp_fw_guest_error(fw, "write 0x%x to read-only register 0x%x",
				   value, offset);
	}
	return 0;
}

static bool words_zero(const uint32_t *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (w[i])
			return false;
	return true;
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
	id.hw_version = nnp_fw_hw_version(fw);
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
	fw_le_identify(&id);
	if (fw->host.dma_write(fw->host.opaque, cmd->addr, &id, sizeof(id))) {
		nnp_fw_guest_error(fw, "IDENTIFY: buffer 0x%llx unreachable",
				   (unsigned long long)cmd->addr);
		return NNP_STATUS_DMA_ERROR;
	}
	*result = sizeof(id);
	return NNP_STATUS_SUCCESS;
}

static uint16_t admin_get_counters(struct nnp_fw *fw,
				   const struct nnp_hw_admin_cmd *cmd,
				   uint32_t *result)
{
	struct nnp_hw_counters c;
	/* A driver before 1.24 asks for the 1.3 block, and gets it. */
	uint32_t len = cmd->len < sizeof(c) ? cmd->len : sizeof(c);

	if (cmd->len < NNP_HW_COUNTERS_SIZE_V1_3)
		return NNP_STATUS_BUFFER_TOO_SMALL;
	mtx_lock(&fw->lock);
	c = fw->counters;
	mtx_unlock(&fw->lock);
	c.icl_held_bytes = nnp_fw_icl_held_bytes(fw);
	fw_le_counters(&c);
	if (fw->host.dma_write(fw->host.opaque, cmd->addr, &c, len))
		return NNP_STATUS_DMA_ERROR;
	*result = len;
	return NNP_STATUS_SUCCESS;
}

static uint16_t admin_get_ports(struct nnp_fw *fw,
				const struct nnp_hw_admin_cmd *cmd,
				uint32_t *result)
{
	struct nnp_hw_port_info info[NNP_FW_MAX_PORTS];
	uint32_t len = fw->cfg.num_ports * sizeof(info[0]), i;

	if (cmd->len < len)
		return NNP_STATUS_BUFFER_TOO_SMALL;
	nnp_fw_icl_ports_info(fw, info);
	for (i = 0; i < fw->cfg.num_ports; i++)
		fw_le_port_info(&info[i]);
	if (len && fw->host.dma_write(fw->host.opaque, cmd->addr, info, len))
		return NNP_STATUS_DMA_ERROR;
	*result = len;
	return NNP_STATUS_SUCCESS;
}

static uint16_t admin_get_model(struct nnp_fw *fw,
				const struct nnp_hw_admin_cmd *cmd,
				uint32_t *result)
{
	struct nnp_hw_model hw = { 0 };
	struct nnp_fw_model m;
	unsigned int i;

	if (cmd->len < sizeof(hw))
		return NNP_STATUS_BUFFER_TOO_SMALL;
	nnp_fw_model_get(fw, &m);
	hw.now_ns = fw_le64(m.now_ns);
	hw.commands = fw_le64(m.commands);
	hw.hbm_busy_ns = fw_le64(m.hbm_busy_ns);
	hw.pcie_busy_ns = fw_le64(m.pcie_busy_ns);
	for (i = 0; i < fw->cfg.num_ports; i++)
		hw.port_tx_busy_ns[i] = fw_le64(m.port_busy_ns[i]);
	if (fw->host.dma_write(fw->host.opaque, cmd->addr, &hw, sizeof(hw)))
		return NNP_STATUS_DMA_ERROR;
	*result = sizeof(hw);
	return NNP_STATUS_SUCCESS;
}

static uint16_t admin_get_ctx_usage(struct nnp_fw *fw,
				    const struct nnp_hw_admin_cmd *cmd,
				    uint32_t *result)
{
	uint32_t ctx = fw_admin_arg(cmd, 0);
	uint64_t busy[NNP_HW_ENGINES];
	struct nnp_hw_ctx_usage u;
	unsigned int i;
	bool ok;

	if (cmd->len < sizeof(u))
		return NNP_STATUS_BUFFER_TOO_SMALL;
	mtx_lock(&fw->lock);
	ok = nnp_fw_ctx_valid_locked(fw, ctx);
	mtx_unlock(&fw->lock);
	if (!ok)
		return NNP_STATUS_NOT_FOUND;
	nnp_fw_ctx_usage_get(fw, ctx, busy);
	for (i = 0; i < NNP_HW_ENGINES; i++)
		u.busy_ns[i] = fw_le64(busy[i]);
	if (fw->host.dma_write(fw->host.opaque, cmd->addr, &u, sizeof(u)))
		return NNP_STATUS_DMA_ERROR;
	*result = sizeof(u);
	return NNP_STATUS_SUCCESS;
}

/*
 * Opcodes that take a data buffer; the others need addr and len zero.
 * QUEUE_CREATE's is the shadow doorbell, from 1.11.
 */
static bool takes_buffer(const struct nnp_fw *fw, uint8_t opcode)
{
	if (opcode == NNP_ADMIN_QUEUE_CREATE)
		return !fw->cfg.no_shadow_doorbells;
	return opcode == NNP_ADMIN_IDENTIFY || opcode == NNP_ADMIN_GET_COUNTERS ||
	       opcode == NNP_ADMIN_KEY_REGISTER || opcode == NNP_ADMIN_GET_PORTS ||
	       opcode == NNP_ADMIN_COMM_CREATE ||
	       opcode == NNP_ADMIN_COMM_TOPOLOGY || opcode == NNP_ADMIN_GET_MODEL ||
	       opcode == NNP_ADMIN_GET_CTX_USAGE ||
	       opcode == NNP_ADMIN_COMM_ROUTES || opcode == NNP_ADMIN_GET_EVENTS ||
	       opcode == NNP_ADMIN_COMM_STATE;
}

/* Argument words each opcode uses; the rest must be zero. */
static size_t args_used(uint8_t opcode)
{
	switch (opcode) {
	case NNP_ADMIN_CTX_CREATE:
	case NNP_ADMIN_CTX_DESTROY:
	case NNP_ADMIN_GET_CTX_USAGE:
		return 1;
	case NNP_ADMIN_KEY_UNREGISTER:
	case NNP_ADMIN_QUEUE_DESTROY:
	case NNP_ADMIN_QUEUE_RESET:
	case NNP_ADMIN_COMM_STATUS:
	case NNP_ADMIN_COMM_TOPOLOGY:
	case NNP_ADMIN_COMM_ROUTES:
	case NNP_ADMIN_COMM_STATE:
		return 2;
	case NNP_ADMIN_COMM_DESTROY:
		return 3;
	case NNP_ADMIN_COMM_CREATE:
		return sizeof(struct nnp_hw_comm_args) / 4;
	case NNP_ADMIN_KEY_REGISTER:
		return offsetof(struct nnp_hw_key_args, rsvd) / 4;
	case NNP_ADMIN_QUEUE_CREATE:
		return sizeof(struct nnp_hw_queue_args) / 4;
	}
	return 0;
}

static uint16_t admin_execute(struct nnp_fw *fw,
			      const struct nnp_hw_admin_cmd *cmd,
			      uint32_t *result)
{
	size_t used = args_used(cmd->opcode);

	*result = 0;
	if (cmd->flags || cmd->rsvd0 || cmd->rsvd1 ||
	    !words_zero(cmd->args + used, 10 - used) ||
	    (!takes_buffer(fw, cmd->opcode) && (cmd->addr || cmd->len))) {
		nnp_fw_guest_error(fw, "admin cid %u: reserved field set",
				   cmd->cid);
		return NNP_STATUS_INVALID_FIELD;
	}
	switch (cmd->opcode) {
	case NNP_ADMIN_NOP:
		return NNP_STATUS_SUCCESS;
	case NNP_ADMIN_IDENTIFY:
		return admin_identify(fw, cmd, result);
	case NNP_ADMIN_CTX_CREATE:
		return nnp_fw_ctx_create(fw, cmd);
	case NNP_ADMIN_CTX_DESTROY:
		return nnp_fw_ctx_destroy(fw, cmd);
	case NNP_ADMIN_KEY_REGISTER:
		return nnp_fw_key_register(fw, cmd, result);
	case NNP_ADMIN_KEY_UNREGISTER:
		return nnp_fw_key_unregister(fw, cmd);
	case NNP_ADMIN_QUEUE_CREATE:
		return nnp_fw_queue_create(fw, cmd);
	case NNP_ADMIN_QUEUE_DESTROY:
		return nnp_fw_queue_destroy(fw, cmd);
	case NNP_ADMIN_QUEUE_RESET:
		return nnp_fw_queue_reset(fw, cmd);
	case NNP_ADMIN_GET_COUNTERS:
		return admin_get_counters(fw, cmd, result);
	case NNP_ADMIN_COMM_CREATE:
		return nnp_fw_comm_create(fw, cmd);
	case NNP_ADMIN_COMM_DESTROY:
		return nnp_fw_comm_destroy(fw, cmd);
	case NNP_ADMIN_COMM_STATUS:
		return nnp_fw_comm_status(fw, cmd, result);
	case NNP_ADMIN_GET_PORTS:
		return admin_get_ports(fw, cmd, result);
	case NNP_ADMIN_COMM_TOPOLOGY:
		return nnp_fw_comm_topology(fw, cmd);
	case NNP_ADMIN_GET_MODEL:
		return admin_get_model(fw, cmd, result);
	case NNP_ADMIN_GET_CTX_USAGE:
		return admin_get_ctx_usage(fw, cmd, result);
	case NNP_ADMIN_COMM_ROUTES:
		return nnp_fw_comm_routes(fw, cmd);
	case NNP_ADMIN_GET_EVENTS:
		return nnp_fw_get_events(fw, cmd, result);
	case NNP_ADMIN_COMM_STATE:
		return nnp_fw_comm_state(fw, cmd, result);
	}
	nnp_fw_guest_error(fw, "admin cid %u: unknown opcode 0x%x", cmd->cid,
			   cmd->opcode);
	return NNP_STATUS_INVALID_OPCODE;
}

/*
 * Take the next command if there is one and room for its completion.
 * Returns false when there is nothing to do.
 */
static bool aq_next(struct nnp_fw *fw, uint32_t gen, struct nnp_fw_ring *snap)
{
	const struct nnp_fw_admin_queue *aq = &fw->aq;
	bool go;

	mtx_lock(&fw->lock);
	go = fw->generation == gen && aq->enabled && !aq->error &&
	     nnp_fw_ring_has_work(&aq->ring);
	if (go)
		*snap = aq->ring;
	fw->aq_busy = go;
	mtx_unlock(&fw->lock);
	return go;
}

void nnp_fw_aq_process(struct nnp_fw *fw)
{
	struct nnp_hw_admin_cmd cmd;
	struct nnp_fw_ring q;
	bool posted = false;
	bool irq = false;
	uint32_t gen;

	mtx_lock(&fw->lock);
	gen = fw->generation;
	mtx_unlock(&fw->lock);

	while (aq_next(fw, gen, &q)) {
		uint32_t fault = NNP_FW_ERR_AQ_DMA, result = 0;

		if (nnp_fw_ring_fetch(fw, &q, &cmd)) {
			uint16_t status;

			fw_le_admin_cmd(&cmd);
			status = admin_execute(fw, &cmd, &result);

			if (nnp_fw_ring_post(fw, &q, cmd.cid, status, result))
				fault = NNP_FW_ERR_NONE;
		}

		mtx_lock(&fw->lock);
		if (fw->generation != gen) {
			mtx_unlock(&fw->lock);
			break;
		}
		if (fault) {
			aq_fail_locked(fw, fault, "ring unreachable by DMA");
		} else {
			nnp_fw_ring_advance(&fw->aq.ring);
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
