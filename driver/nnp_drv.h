/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nnp.ko: DRM accel driver for NNP-T-class training accelerators.
 * State of one device, shared by the driver's source files.
 */
#ifndef __NNP_DRV_H__
#define __NNP_DRV_H__

#include <drm/drm_device.h>
#include <drm/drm_print.h>
#include <linux/io.h>
#include <linux/pci.h>

#include "nnp_hw.h"
#include "nnp_admin.h"

#define NNP_DRIVER_DESC "NNP-T-class training accelerator"

struct nnp_device {
	struct drm_device drm;
	struct pci_dev *pdev;
	void __iomem *regs;

	/* From IDENTIFY at probe; fixed for the life of the binding. */
	struct nnp_hw_identify id;

	struct nnp_admin_queue aq;
};

static inline struct nnp_device *to_nnp(struct drm_device *drm)
{
	return container_of(drm, struct nnp_device, drm);
}

static inline u32 nnp_rd(struct nnp_device *ndev, u32 reg)
{
	return readl(ndev->regs + reg);
}

static inline void nnp_wr(struct nnp_device *ndev, u32 reg, u32 val)
{
	writel(val, ndev->regs + reg);
}

/* Milliseconds to wait for the firmware: boot, admin commands, quiesce. */
extern unsigned int nnp_fw_timeout_ms;

/* nnp_fw.c */
int nnp_fw_boot(struct nnp_device *ndev);
int nnp_fw_identify(struct nnp_device *ndev);

/* nnp_query.c */
int nnp_ioctl_query(struct drm_device *drm, void *data, struct drm_file *file);

/* nnp_sysfs.c */
extern const struct attribute_group *nnp_dev_groups[];

#endif /* __NNP_DRV_H__ */
