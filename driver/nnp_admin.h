/* SPDX-License-Identifier: GPL-2.0-only */
/* nnp.ko: the admin queue, the driver's command channel to the firmware. */
#ifndef __NNP_ADMIN_H__
#define __NNP_ADMIN_H__

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/wait.h>

#include "nnp_hw.h"

struct nnp_device;

struct nnp_admin_queue {
	/* Serialises submitters: one admin command in flight at a time. */
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
};

int nnp_admin_init(struct nnp_device *ndev);
int nnp_admin_submit(struct nnp_device *ndev, struct nnp_hw_admin_cmd *cmd,
		     struct nnp_hw_cqe *cqe);
void nnp_admin_irq(struct nnp_device *ndev);

#endif /* __NNP_ADMIN_H__ */
