/* SPDX-License-Identifier: GPL-2.0-only */
/* nnp.ko: the admin queue, the driver's command channel to the firmware. */
#ifndef __NNP_ADMIN_H__
#define __NNP_ADMIN_H__

#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "nnp_hw.h"

struct nnp_device;

struct nnp_admin_queue {
	/*
	 * Serialises submitters: one admin command in flight at a time.
	 * Guards the ring state below (the rings' contents, the indexes,
	 * @phase, @next_cid and @broken).
	 */
	struct mutex lock;
	wait_queue_head_t wq;

	struct nnp_hw_admin_cmd *sq;
	struct nnp_hw_cqe *cq;
	dma_addr_t sq_dma;
	dma_addr_t cq_dma;
	u32 sq_tail;
	u32 cq_head;
	u16 phase;
	u16 next_cid;
	/* A command timed out: the ring state is unknown until a reset. */
	bool broken;
	/* Unbinding has reset the device: it touches no host memory now. */
	struct completion quiesced;
};

int nnp_admin_init(struct nnp_device *ndev);
/*
 * Run admin @opcode with argument words @args (@args_len bytes, the rest
 * zero) and data buffer @addr/@len; *@result (if set) gets the result.
 */
int nnp_admin_run(struct nnp_device *ndev, u8 opcode, const void *args,
		  size_t args_len, dma_addr_t addr, u32 len, u32 *result);
int nnp_admin_read(struct nnp_device *ndev, u8 opcode, void *out, u32 len,
		   u32 *result);
/* The same for an opcode with argument words, as nnp_admin_run(). */
int nnp_admin_read_args(struct nnp_device *ndev, u8 opcode, const void *args,
			size_t args_len, void *out, u32 len, u32 *result);
int nnp_admin_get_ports(struct nnp_device *ndev, struct nnp_hw_port_info *info,
			u32 n);
void nnp_admin_irq(struct nnp_device *ndev);
void nnp_admin_stop(struct nnp_device *ndev);
int nnp_admin_restart(struct nnp_device *ndev);
void nnp_admin_wait_quiesced(struct nnp_device *ndev);

#endif /* __NNP_ADMIN_H__ */
