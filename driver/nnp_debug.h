/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nnp.ko debug output, one category per part of the driver, each enabled by
 * a bit of the dbg_mask module parameter
 * (/sys/module/nnp/parameters/dbg_mask). Off by default. Every call is
 * rate-limited where it stands: most are reached from ioctls, which any
 * user of the device can repeat as fast as they like.
 */
#ifndef __NNP_DEBUG_H__
#define __NNP_DEBUG_H__

#include <linux/bits.h>
#include <linux/device.h>

#define NNP_DBG_ADMIN	BIT(0)	/* admin commands and their results */
#define NNP_DBG_QUEUE	BIT(1)	/* user queues: create, destroy, wait */
#define NNP_DBG_GEM	BIT(2)	/* memory objects */
#define NNP_DBG_COMM	BIT(3)	/* communicators */
#define NNP_DBG_IRQ	BIT(4)	/* interrupts */
#define NNP_DBG_RESET	BIT(5)	/* resets and the watchdog */
#define NNP_DBG_QUERY	BIT(6)	/* the QUERY ioctl */

extern unsigned int nnp_dbg_mask;

#define nnp_dbg(ndev, type, fmt, ...)					\
do {									\
	if (unlikely(nnp_dbg_mask & NNP_DBG_##type))			\
		dev_info_ratelimited((ndev)->drm.dev, "[%s] " fmt,	\
				     #type, ##__VA_ARGS__);		\
} while (0)

#endif /* __NNP_DEBUG_H__ */
