// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko: module, PCI binding and DRM accel registration.
 *
 * Probe maps BAR0, sets up MSI-X, boots the firmware, starts the admin
 * queue, reads the device's identity and registers /dev/accel/accelN.
 * Everything is device-managed, so unbinding undoes it in reverse order.
 */
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <linux/interrupt.h>
#include <linux/module.h>

#include "nnp_drv.h"
#include "nnp_accel.h"

unsigned int nnp_fw_timeout_ms = 5000;
module_param_named(fw_timeout_ms, nnp_fw_timeout_ms, uint, 0644);
MODULE_PARM_DESC(fw_timeout_ms,
		 "Milliseconds to wait for firmware boot and admin commands");

static const struct drm_ioctl_desc nnp_ioctls[] = {
	DRM_IOCTL_DEF_DRV(NNP_QUERY, nnp_ioctl_query, 0),
};

DEFINE_DRM_ACCEL_FOPS(nnp_fops);

/*
 * DRIVER_GEM gives every file a GEM handle table and makes mmap() on the
 * node fail cleanly (-EINVAL) rather than reach an uninitialised manager.
 */
static const struct drm_driver nnp_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL,
	.ioctls = nnp_ioctls,
	.num_ioctls = ARRAY_SIZE(nnp_ioctls),
	.fops = &nnp_fops,
	.name = DRM_NNP_DRIVER_NAME,
	.desc = NNP_DRIVER_DESC,
	.date = "20261122",
	.major = DRM_NNP_DRIVER_MAJOR,
	.minor = DRM_NNP_DRIVER_MINOR,
};

static irqreturn_t nnp_irq(int irq, void *data)
{
	struct nnp_device *ndev = data;
	u32 cause = nnp_rd(ndev, NNP_REG_INT_STATUS);

	if (!cause)
		return IRQ_NONE;
	nnp_wr(ndev, NNP_REG_INT_STATUS, cause);
	if (cause & NNP_INT_ADMIN_CQ)
		nnp_admin_irq(ndev);
	return IRQ_HANDLED;
}

static int nnp_pci_init(struct nnp_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int ret;

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);

	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	ndev->regs = pcim_iomap_region(pdev, NNP_BAR_REGS, DRM_NNP_DRIVER_NAME);
	if (IS_ERR(ndev->regs))
		return PTR_ERR(ndev->regs);
	if (pci_resource_len(pdev, NNP_BAR_REGS) < NNP_BAR0_SIZE) {
		drm_err(&ndev->drm, "BAR0 too small: %pR\n",
			&pdev->resource[NNP_BAR_REGS]);
		return -ENODEV;
	}

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSIX);
	if (ret < 0)
		return ret;
	return devm_request_irq(&pdev->dev, pci_irq_vector(pdev, 0), nnp_irq, 0,
				DRM_NNP_DRIVER_NAME, ndev);
}

/* The BAR the device exposes its memory through must hold all of it. */
static int nnp_check_mem_bar(struct nnp_device *ndev)
{
	resource_size_t len = pci_resource_len(ndev->pdev, NNP_BAR_MEM);

	if (len < ndev->id.mem_size) {
		drm_err(&ndev->drm, "BAR%d is %pa bytes, device memory %llu\n",
			NNP_BAR_MEM, &len, ndev->id.mem_size);
		return -ENODEV;
	}
	return 0;
}

static int nnp_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct nnp_device *ndev;
	int ret;

	ndev = devm_drm_dev_alloc(&pdev->dev, &nnp_drm_driver,
				  struct nnp_device, drm);
	if (IS_ERR(ndev))
		return PTR_ERR(ndev);
	ndev->pdev = pdev;
	pci_set_drvdata(pdev, ndev);

	ret = nnp_pci_init(ndev);
	if (ret)
		return ret;
	ret = nnp_fw_boot(ndev);
	if (ret)
		return ret;
	ret = nnp_admin_init(ndev);
	if (ret)
		return ret;
	ret = nnp_fw_identify(ndev);
	if (ret)
		return ret;
	ret = nnp_check_mem_bar(ndev);
	if (ret)
		return ret;

	ret = drm_dev_register(&ndev->drm, 0);
	if (ret)
		return ret;

	drm_info(&ndev->drm, "chip %u, %llu MiB, %u ICL ports, firmware %s\n",
		 ndev->id.chip_id, ndev->id.mem_size >> 20, ndev->id.num_ports,
		 ndev->id.fw_build);
	return 0;
}

static void nnp_remove(struct pci_dev *pdev)
{
	struct nnp_device *ndev = pci_get_drvdata(pdev);

	/* Waits for ioctls in flight; later ones get -ENODEV. */
	drm_dev_unplug(&ndev->drm);
}

static const struct pci_device_id nnp_pci_ids[] = {
	{ PCI_DEVICE(NNP_PCI_VENDOR_ID, NNP_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, nnp_pci_ids);

static struct pci_driver nnp_pci_driver = {
	.name = KBUILD_MODNAME,
	.id_table = nnp_pci_ids,
	.probe = nnp_probe,
	.remove = nnp_remove,
	.dev_groups = nnp_dev_groups,
};
module_pci_driver(nnp_pci_driver);

MODULE_DESCRIPTION(NNP_DRIVER_DESC);
MODULE_LICENSE("GPL");
