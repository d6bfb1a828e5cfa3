/* SPDX-License-Identifier: MIT */
/* State shared by the firmware simulator's source files. */
#ifndef NNP_FW_INTERNAL_H
#define NNP_FW_INTERNAL_H

#include <threads.h>

#include "nnp_fw.h"

struct nnp_fw_admin_queue {
	uint64_t sq_base;
	uint64_t cq_base;
	uint32_t depth;
	bool enabled;
	bool error;
	uint32_t sq_tail;	/* written by the driver (doorbell) */
	uint32_t cq_head;	/* written by the driver */
	uint32_t sq_head;	/* firmware's position */
	uint32_t cq_tail;	/* firmware's position */
	uint16_t phase;		/* phase tag of the current CQ pass */
};

struct nnp_fw {
	struct nnp_fw_config cfg;
	struct nnp_fw_host host;

	/*
	 * Guards everything below. Held only for short register-sized
	 * updates, never across DMA or a host callback that may block.
	 */
	mtx_t lock;
	uint32_t generation;	/* bumped by every reset */
	uint32_t fw_status;
	uint32_t fw_error;
	uint32_t heartbeat;
	uint32_t scratch;
	uint32_t int_status;
	uint32_t int_enable;
	uint64_t boot_done_ns;
	uint64_t next_heartbeat_ns;
	struct nnp_fw_admin_queue aq;
	bool aq_busy;		/* a fetched command is in flight; kept over reset */
};

void nnp_fw_guest_error(struct nnp_fw *fw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Latch interrupt causes @bits; returns true if vector 0 must fire. */
bool nnp_fw_int_latch_locked(struct nnp_fw *fw, uint32_t bits);

/* Admin queue register access, with fw->lock held. */
uint32_t nnp_fw_aq_reg_read_locked(struct nnp_fw *fw, uint32_t offset);
bool nnp_fw_aq_reg_write_locked(struct nnp_fw *fw, uint32_t offset,
				uint32_t value);
/* Consume submitted admin commands; called from nnp_fw_run(). */
void nnp_fw_aq_process(struct nnp_fw *fw);

#endif /* NNP_FW_INTERNAL_H */
