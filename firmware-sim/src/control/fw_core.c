// SPDX-License-Identifier: MIT
/*
 * Firmware simulator core: lifecycle, boot and heartbeat, and the BAR0
 * register file other than the admin queue's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_control.h"

#define NS_PER_MS 1000000ull

/* The upward calls of the layers below, answered here. */
static const struct nnp_fw_link_hooks link_hooks = {
	.rx_fault = nnp_fw_fault_rx,
	.comm_failed_locked = nnp_fw_comm_failed_locked,
	.peer_left_locked = nnp_fw_comm_left_locked,
	.rank_left_locked = nnp_fw_comm_rank_left_locked,
	.link_changed = nnp_fw_event_link,
};

static const struct nnp_fw_engine_hooks engine_hooks = {
	.comm_ended = nnp_fw_comm_ended,
	.pass_abort = nnp_fw_comm_pass_abort,
	.torn_locked = nnp_fw_comm_torn_locked,
};

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

struct nnp_fw *nnp_fw_create(const struct nnp_fw_config *cfg,
			     const struct nnp_fw_host *host,
			     const char **err)
{
	const char *why = NULL;
	struct nnp_fw *fw;
	int i;

	if (!is_pow2(cfg->mem_size) || cfg->mem_size < NNP_MEM_SIZE_MIN ||
	    cfg->mem_size > NNP_MEM_SIZE_MAX)
		why = "mem-size must be a power of two from 1 MiB to 64 GiB";
	else if (!cfg->mem)
		why = "no device memory";
	else if (cfg->heartbeat_ms == 0)
		why = "heartbeat period must be nonzero";
	else if (cfg->num_ports > NNP_FW_MAX_PORTS)
		why = "too many ICL ports";
	else if (!host->dma_read || !host->dma_write || !host->raise_irq ||
		 !host->now_ns)
		why = "host callbacks missing";
	else if (!host->dma_map != !host->dma_unmap)
		why = "dma_map without dma_unmap, or the other way round";
	if (why) {
		if (err)
			*err = why;
		return NULL;
	}

	fw = calloc(1, sizeof(*fw));
	if (!fw || mtx_init(&fw->lock, mtx_plain) != thrd_success ||
	    mtx_init(&fw->log.lock, mtx_plain) != thrd_success) {
		free(fw);
		if (err)
			*err = "out of memory";
		return NULL;
	}
	for (i = 0; i < NNP_HW_MAX_QUEUES; i++)
		mtx_init(&fw->queues[i].exec, mtx_plain);
	nnp_fw_ports_init(fw);
	nnp_fw_relay_init(fw);
	fw->cfg = *cfg;
	fw->link_hooks = &link_hooks;
	fw->engine_hooks = &engine_hooks;
	fw->algo = &nnp_fw_algorithms;
	nnp_fw_clock_init(fw);
	nnp_fw_faults_init(fw, host);
	nnp_fw_thermal_init(fw, fw->host.now_ns(fw->host.opaque));
	nnp_fw_reset(fw);
	return fw;
}

static void reset_locked(struct nnp_fw *fw)
{
	uint64_t now = fw->host.now_ns(fw->host.opaque);
	int i;

	fw->generation++;
	nnp_fw_faults_reset(fw);
	fw->fw_status = NNP_FW_STATUS_BOOTING;
	fw->fw_error = NNP_FW_ERR_NONE;
	fw->heartbeat = 0;
	fw->scratch = 0;
	fw->int_status = 0;
	fw->int_enable = 0;
	fw->boot_done_ns = now + fw->cfg.boot_time_ms * NS_PER_MS;
	memset(&fw->aq, 0, sizeof(fw->aq));
	memset(&fw->counters, 0, sizeof(fw->counters));
	nnp_fw_events_clear_locked(fw);
	nnp_fw_clock_reset_locked(fw);
	nnp_fw_thermal_reset_locked(fw, now);
	for (i = 0; i < NNP_HW_MAX_QUEUES; i++)
		fw->queues[i].enabled = false;
	fw->reset_pending = true;
}

/*
 * Zero device memory, so that nothing a previous owner left there reaches
 * the next driver or process. Pages that already read as zero are not
 * written, so memory nobody touched stays untouched (and, in QEMU,
 * unallocated on the host).
 */
static void mem_clear(uint8_t *mem, uint64_t size)
{
	static const uint8_t zero[4096];
	uint64_t off;

	/* mem_size is a power of two of at least 1 MiB: whole chunks. */
	for (off = 0; off < size; off += sizeof(zero))
		if (memcmp(mem + off, zero, sizeof(zero)))
			memset(mem + off, 0, sizeof(zero));
}

/*
 * A reset drops every context, key and queue and zeroes device memory.
 * Queues stop at once, but user commands in flight finish first (each
 * holds its queue's exec lock), so the keys they use are freed and the
 * memory cleared only after them; until that cleanup is done the firmware
 * stays BOOTING and AQ_STATUS.BUSY is set. The cleanup waits, so it runs
 * in nnp_fw_run(), never in a register write.
 */
static void reset_cleanup(struct nnp_fw *fw)
{
	nnp_fw_queues_destroy_ctx(fw, 0, false);
	nnp_fw_comms_clear(fw, 0);
	nnp_fw_icl_purge_all(fw);
	nnp_fw_scratch_release(fw);
	/* Timing-only chips may share memory nobody reads: left as it is. */
	if (!fw->cfg.timing_only &&
	    (!fw->host.mem_discard || fw->host.mem_discard(fw->host.opaque)))
		mem_clear(fw->cfg.mem, fw->cfg.mem_size);
	mtx_lock(&fw->lock);
	nnp_fw_keys_clear_locked(fw);
	memset(fw->ctx_used, 0, sizeof(fw->ctx_used));
	fw->reset_pending = false;
	mtx_unlock(&fw->lock);
}

void nnp_fw_reset(struct nnp_fw *fw)
{
	mtx_lock(&fw->lock);
	reset_locked(fw);
	mtx_unlock(&fw->lock);
}

void nnp_fw_destroy(struct nnp_fw *fw)
{
	int i;

	if (!fw)
		return;
	nnp_fw_reset(fw);
	reset_cleanup(fw);
	nnp_fw_ports_fini(fw);
	nnp_fw_scratch_release(fw);
	for (i = 0; i < NNP_HW_MAX_QUEUES; i++)
		mtx_destroy(&fw->queues[i].exec);
	mtx_destroy(&fw->lock);
	mtx_destroy(&fw->log.lock);
	free(fw);
}

bool nnp_fw_int_latch_locked(struct nnp_fw *fw, uint32_t bits)
{
	fw->int_status |= bits;
	return (bits & fw->int_enable) != 0;
}

uint32_t nnp_fw_hw_version(const struct nnp_fw *fw)
{
	return fw->cfg.no_shadow_doorbells ? (NNP_HW_VERSION_MAJOR << 16) | 10 :
					     NNP_HW_VERSION;
}

static uint32_t identity_reg(const struct nnp_fw *fw, uint32_t offset)
{
	switch (offset) {
	case NNP_REG_ID:
		return NNP_HW_ID_MAGIC;
	case NNP_REG_HW_VERSION:
		return nnp_fw_hw_version(fw);
	case NNP_REG_CAPS:
		return NNP_CAP_ADMIN_QUEUE | NNP_CAP_USER_QUEUES | NNP_CAP_ICL |
		       NNP_CAP_COLLECTIVES;
	case NNP_REG_CHIP_ID:
		return fw->cfg.chip_id;
	case NNP_REG_MEM_SIZE_LO:
		return (uint32_t)fw->cfg.mem_size;
	case NNP_REG_MEM_SIZE_HI:
		return (uint32_t)(fw->cfg.mem_size >> 32);
	case NNP_REG_NUM_PORTS:
		return fw->cfg.num_ports;
	case NNP_REG_NUM_QUEUES:
		return NNP_HW_MAX_QUEUES;
	case NNP_REG_NUM_VECTORS:
		return NNP_VECTOR_QUEUE(NNP_HW_MAX_QUEUES);
	}
	return 0;
}

static bool is_identity_reg(uint32_t offset)
{
	return offset <= NNP_REG_NUM_VECTORS;
}

static bool is_readonly_reg(uint32_t offset)
{
	return is_identity_reg(offset) || nnp_fw_is_telemetry_reg(offset) ||
	       (offset >= NNP_REG_FW_STATUS && offset <= NNP_REG_FW_ERROR);
}

static bool is_aq_reg(uint32_t offset)
{
	return offset >= NNP_REG_AQ_SQ_BASE_LO && offset <= NNP_REG_AQ_CQ_HEAD;
}

static bool reg_offset_ok(struct nnp_fw *fw, uint32_t offset)
{
	if (offset % 4 == 0 && offset < NNP_BAR0_SIZE)
		return true;
	nnp_fw_guest_error(fw, "register access at bad offset 0x%x", offset);
	return false;
}

uint32_t nnp_fw_reg_read(struct nnp_fw *fw, uint32_t offset)
{
	uint32_t val = 0;

	if (!reg_offset_ok(fw, offset))
		return 0;
	if (is_identity_reg(offset))
		return identity_reg(fw, offset);
	/* Its own lock: read even while the firmware is stuck. */
	if (nnp_fw_is_log_reg(offset))
		return nnp_fw_log_read(fw, offset);

	mtx_lock(&fw->lock);
	switch (offset) {
	case NNP_REG_SCRATCH:
		val = fw->scratch;
		break;
	case NNP_REG_FW_STATUS:
		val = fw->fw_status;
		break;
	case NNP_REG_FW_VERSION:
		/* Known only once the firmware has booted. */
		if (fw->fw_status == NNP_FW_STATUS_READY)
			val = NNP_FW_VERSION_CURRENT;
		break;
	case NNP_REG_FW_HEARTBEAT:
		val = fw->heartbeat;
		break;
	case NNP_REG_FW_ERROR:
		val = fw->fw_error;
		break;
	case NNP_REG_INT_STATUS:
		val = fw->int_status;
		break;
	case NNP_REG_INT_ENABLE:
		val = fw->int_enable;
		break;
	default:
		if (is_aq_reg(offset))
			val = nnp_fw_aq_reg_read_locked(fw, offset);
		else if (nnp_fw_is_telemetry_reg(offset))
			val = nnp_fw_telemetry_read_locked(fw, offset,
							   fw->host.now_ns(fw->host.opaque));
		else if (nnp_fw_is_doorbell(offset))
			val = nnp_fw_db_read_locked(fw, offset);
		else
			nnp_fw_guest_error(fw, "read of unknown register 0x%x",
					   offset);
	}
	mtx_unlock(&fw->lock);
	return val;
}

unsigned int nnp_fw_reg_write(struct nnp_fw *fw, uint32_t offset,
			      uint32_t value)
{
	unsigned int kick = 0;
	bool irq = false;

	if (!reg_offset_ok(fw, offset))
		return 0;
	mtx_lock(&fw->lock);
	switch (offset) {
	case NNP_REG_SCRATCH:
		fw->scratch = value;
		break;
	case NNP_REG_DEV_CTRL:
		if (value & ~NNP_DEV_CTRL_RESET)
			nnp_fw_guest_error(fw, "DEV_CTRL: unknown bits 0x%x",
					   value);
		if (value & NNP_DEV_CTRL_RESET) {
			reset_locked(fw);
			kick = NNP_FW_KICK_ADMIN;
		}
		break;
	case NNP_REG_INT_STATUS:
		fw->int_status &= ~value;
		break;
	case NNP_REG_INT_ENABLE:
		if (value & ~NNP_INT_ALL)
			nnp_fw_guest_error(fw, "INT_ENABLE: unknown bits 0x%x",
					   value);
		fw->int_enable = value & NNP_INT_ALL;
		/* A cause already latched fires as soon as it is enabled. */
		irq = (fw->int_status & fw->int_enable) != 0;
		break;
	default:
		if (is_aq_reg(offset))
			kick = nnp_fw_aq_reg_write_locked(fw, offset, value);
		else if (nnp_fw_is_doorbell(offset))
			kick = nnp_fw_db_write_locked(fw, offset, value);
		else
			nnp_fw_guest_error(fw, "write 0x%x to %s register 0x%x",
					   value, is_readonly_reg(offset) ?
					   "read-only" : "unknown", offset);
	}
	mtx_unlock(&fw->lock);
	if (irq)
		fw->host.raise_irq(fw->host.opaque, NNP_VECTOR_ADMIN);
	return kick;
}

/* Booting and the sensors: the firmware's timed work. True if it just booted. */
static bool run_timers(struct nnp_fw *fw)
{
	uint64_t now = fw->host.now_ns(fw->host.opaque);
	uint64_t period = fw->cfg.heartbeat_ms * NS_PER_MS;
	bool irq = false, booted = false;

	mtx_lock(&fw->lock);
	if (fw->fw_status == NNP_FW_STATUS_BOOTING && !fw->reset_pending &&
	    now >= fw->boot_done_ns) {
		fw->fw_status = NNP_FW_STATUS_READY;
		booted = true;
		fw->next_heartbeat_ns = now + period;
		irq = nnp_fw_int_latch_locked(fw, NNP_INT_FW_EVENT);
	}
	nnp_fw_thermal_step_locked(fw, now);
	mtx_unlock(&fw->lock);
	if (irq)
		fw->host.raise_irq(fw->host.opaque, NNP_VECTOR_ADMIN);
	return booted;
}

void nnp_fw_beat(struct nnp_fw *fw)
{
	uint64_t now;

	/* A hung firmware: no heartbeat. */
	if (nnp_fw_fault_hung(fw))
		return;
	now = fw->host.now_ns(fw->host.opaque);
	mtx_lock(&fw->lock);
	if (fw->fw_status == NNP_FW_STATUS_READY &&
	    now >= fw->next_heartbeat_ns) {
		fw->heartbeat++;
		/* Skip beats missed while the host did not run us. */
		fw->next_heartbeat_ns = now + fw->cfg.heartbeat_ms * NS_PER_MS;
	}
	mtx_unlock(&fw->lock);
}

void nnp_fw_run(struct nnp_fw *fw)
{
	uint64_t now = fw->host.now_ns(fw->host.opaque);
	bool cleanup, expired;

	mtx_lock(&fw->lock);
	cleanup = fw->reset_pending;
	expired = nnp_fw_queues_expire_locked(fw, now);
	mtx_unlock(&fw->lock);
	/* A parked command's wait is over: a worker ends it. */
	if (expired && fw->host.kick)
		fw->host.kick(fw->host.opaque, NNP_FW_KICK_QUEUES);
	if (cleanup) {
		/*
		 * A chip being reset drops its links, so that its ring
		 * neighbours' commands end LINK_DOWN now instead of waiting
		 * for it to their communicator's timeout.
		 */
		nnp_fw_links_take_down(fw);
		reset_cleanup(fw);
	}
	/* A hung firmware: no heartbeat, the admin queue is never read. */
	if (nnp_fw_fault_hung(fw))
		return;
	/* Booted again: its links train and come back up. */
	if (run_timers(fw))
		nnp_fw_faults_revive(fw);
	nnp_fw_beat(fw);
	nnp_fw_icl_sweep(fw);
	nnp_fw_aq_process(fw);
}

uint64_t nnp_fw_next_deadline_ns(struct nnp_fw *fw)
{
	uint64_t t = UINT64_MAX;

	mtx_lock(&fw->lock);
	if (fw->fw_status == NNP_FW_STATUS_BOOTING)
		t = fw->boot_done_ns;
	else if (fw->fw_status == NNP_FW_STATUS_READY)
		t = fw->next_heartbeat_ns;
	if (nnp_fw_queues_deadline_locked(fw) < t)
		t = nnp_fw_queues_deadline_locked(fw);
	mtx_unlock(&fw->lock);
	return t;
}
