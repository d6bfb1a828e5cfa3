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
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <linux/interrupt.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "nnp_drv.h"
#include "nnp_accel.h"

unsigned int nnp_fw_timeout_ms = 5000;
module_param_named(fw_timeout_ms, nnp_fw_timeout_ms, uint, 0644);
MODULE_PARM_DESC(fw_timeout_ms,
		 "Milliseconds to wait for firmware boot and admin commands");

/*
 * Each user queue takes an MSI-X vector, and each vector some 25
 * allocations of the interrupt core at probe: fewer queues make a smaller
 * device and a probe the fail-nth sweep can cover in minutes
 * (tests/vm/probe_failnth.sh).
 */
static unsigned int nnp_max_queues = NNP_HW_MAX_QUEUES;

static int nnp_max_queues_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, NNP_HW_MAX_QUEUES);
}

static const struct kernel_param_ops nnp_max_queues_ops = {
	.set = nnp_max_queues_set,
	.get = param_get_uint,
};

module_param_cb(max_queues, &nnp_max_queues_ops, &nnp_max_queues, 0444);
MODULE_PARM_DESC(max_queues, "User queues per device at most, 1 to 64");

unsigned int nnp_dbg_mask;
module_param_named(dbg_mask, nnp_dbg_mask, uint, 0644);
MODULE_PARM_DESC(dbg_mask,
		 "Debug output: ADMIN=0x1 QUEUE=0x2 GEM=0x4 COMM=0x8 IRQ=0x10 RESET=0x20 QUERY=0x40");

/*
 * Every ioctl runs inside drm_dev_enter(), so unbinding waits for those in
 * flight and later ones fail with -ENODEV. A file whose context a reset
 * took gets -ECANCELED for everything (docs/uapi.md, "Resets").
 */
#define NNP_GUARDED_IOCTL(name)						\
static int nnp_guarded_##name(struct drm_device *drm, void *data,	\
			      struct drm_file *file)			\
{									\
	int idx, ret;							\
									\
	if (!drm_dev_enter(drm, &idx))					\
		return -ENODEV;						\
	if (nnp_file_lost(file->driver_priv))				\
		ret = -ECANCELED;					\
	else								\
		ret = nnp_ioctl_##name(drm, data, file);		\
	/* A reset during the call took its context: that failed it. */	\
	if (ret && nnp_file_lost(file->driver_priv))			\
		ret = -ECANCELED;					\
	drm_dev_exit(idx);						\
	return ret;							\
}

NNP_GUARDED_IOCTL(query)
NNP_GUARDED_IOCTL(bo_create)
NNP_GUARDED_IOCTL(bo_userptr)
NNP_GUARDED_IOCTL(bo_import)
NNP_GUARDED_IOCTL(queue_create)
NNP_GUARDED_IOCTL(queue_destroy)
NNP_GUARDED_IOCTL(queue_reset)
NNP_GUARDED_IOCTL(queue_wait)
NNP_GUARDED_IOCTL(comm_create)
NNP_GUARDED_IOCTL(comm_destroy)
NNP_GUARDED_IOCTL(comm_status)
NNP_GUARDED_IOCTL(comm_topology)
NNP_GUARDED_IOCTL(comm_routes)

static const struct drm_ioctl_desc nnp_ioctls[] = {
	DRM_IOCTL_DEF_DRV(NNP_QUERY, nnp_guarded_query, 0),
	DRM_IOCTL_DEF_DRV(NNP_BO_CREATE, nnp_guarded_bo_create, 0),
	DRM_IOCTL_DEF_DRV(NNP_BO_USERPTR, nnp_guarded_bo_userptr, 0),
	DRM_IOCTL_DEF_DRV(NNP_QUEUE_CREATE, nnp_guarded_queue_create, 0),
	DRM_IOCTL_DEF_DRV(NNP_QUEUE_DESTROY, nnp_guarded_queue_destroy, 0),
	DRM_IOCTL_DEF_DRV(NNP_QUEUE_RESET, nnp_guarded_queue_reset, 0),
	DRM_IOCTL_DEF_DRV(NNP_QUEUE_WAIT, nnp_guarded_queue_wait, 0),
	DRM_IOCTL_DEF_DRV(NNP_COMM_CREATE, nnp_guarded_comm_create, 0),
	DRM_IOCTL_DEF_DRV(NNP_COMM_DESTROY, nnp_guarded_comm_destroy, 0),
	DRM_IOCTL_DEF_DRV(NNP_COMM_STATUS, nnp_guarded_comm_status, 0),
	DRM_IOCTL_DEF_DRV(NNP_COMM_TOPOLOGY, nnp_guarded_comm_topology, 0),
	DRM_IOCTL_DEF_DRV(NNP_COMM_ROUTES, nnp_guarded_comm_routes, 0),
	DRM_IOCTL_DEF_DRV(NNP_BO_IMPORT, nnp_guarded_bo_import, 0),
};

/*
 * Make device context @ctx; *@resets gets the reset count it belongs to.
 * A reset racing it loses the context: make it again (a reset is over
 * when the admin queue says so), so that an open never fails for a reset.
 */
static int nnp_ctx_create(struct nnp_device *ndev, u32 ctx, int *resets)
{
	__le32 arg = cpu_to_le32(ctx);
	int tries, ret = -ECANCELED;

	for (tries = 0; tries < 3 && ret == -ECANCELED; tries++) {
		*resets = atomic_read(&ndev->resets);
		ret = nnp_admin_run(ndev, NNP_ADMIN_CTX_CREATE, &arg,
				    sizeof(arg), 0, 0, NULL);
		if (!ret && *resets != atomic_read(&ndev->resets)) {
			nnp_admin_run(ndev, NNP_ADMIN_CTX_DESTROY, &arg,
				      sizeof(arg), 0, 0, NULL);
			ret = -ECANCELED;
		}
	}
	return ret == -ECANCELED ? -EAGAIN : ret;
}

/* One device context per open file. */
static int nnp_open(struct drm_device *drm, struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf;
	u32 ctx;
	int ret, idx;

	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	nf = kzalloc(sizeof(*nf), GFP_KERNEL);
	if (!nf) {
		ret = -ENOMEM;
		goto err;
	}
	nf->ndev = ndev;
	mutex_init(&nf->comm_lock);
	ret = nnp_user_open(nf);
	if (ret)
		goto err;
	ret = ida_alloc_range(&ndev->ctx_ida, 1, NNP_HW_MAX_CONTEXTS - 1,
			      GFP_KERNEL);
	if (ret < 0)
		goto err_user;
	ctx = ret;
	ret = nnp_ctx_create(ndev, ctx, &nf->resets);
	if (ret) {
		ida_free(&ndev->ctx_ida, ctx);
		goto err_user;
	}
	kref_init(&nf->ref);
	nf->ctx = ctx;
	file->driver_priv = nf;
	drm_dev_exit(idx);
	return 0;
err_user:
	nnp_user_close(nf);
err:
	if (nf)
		mutex_destroy(&nf->comm_lock);
	kfree(nf);
	drm_dev_exit(idx);
	return ret == -ENOSPC ? -EMFILE : ret;
}

static void nnp_file_free(struct kref *ref)
{
	struct nnp_file *nf = container_of(ref, struct nnp_file, ref);

	mutex_destroy(&nf->comm_lock);
	kfree(nf);
}

void nnp_file_put(struct nnp_file *nf)
{
	kref_put(&nf->ref, nnp_file_free);
}

/*
 * The file's memory objects are gone by now (their keys unregistered) or
 * held only by mappings; its queues go next, then the context, which the
 * firmware drops only after the context's commands in flight finish, and
 * with it the communicators. Their ids and the context's go back last,
 * once the events the device queued for them have been handed on.
 */
static void nnp_postclose(struct drm_device *drm, struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	int idx;

	nnp_queues_release(nf);
	if (drm_dev_enter(drm, &idx)) {
		__le32 arg = cpu_to_le32(nf->ctx);

		nnp_admin_run(ndev, NNP_ADMIN_CTX_DESTROY, &arg, sizeof(arg),
			      0, 0, NULL);
		nnp_events_drain(ndev);
		drm_dev_exit(idx);
	}
	nnp_comms_release(nf);
	ida_free(&ndev->ctx_ida, nf->ctx);
	nnp_user_close(nf);
	nnp_file_put(nf);
}

/* mmap() of a file a reset took fails like its ioctls. */
static int nnp_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct drm_file *file = filp->private_data;

	if (nnp_file_lost(file->driver_priv))
		return -ECANCELED;
	return drm_gem_mmap(filp, vma);
}

static const struct file_operations nnp_fops = {
	.owner = THIS_MODULE,
	DRM_ACCEL_FOPS,
	.mmap = nnp_mmap,
	.show_fdinfo = drm_show_fdinfo,
};

/* Memory objects are GEM objects; mmap() goes through their fake offsets. */
static const struct drm_driver nnp_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_COMPUTE_ACCEL,
	.open = nnp_open,
	.postclose = nnp_postclose,
	.show_fdinfo = nnp_show_fdinfo,
	.gem_prime_import = nnp_gem_prime_import,
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
	nnp_dbg(ndev, IRQ, "interrupt cause 0x%x\n", cause);
	nnp_wr(ndev, NNP_REG_INT_STATUS, cause);
	if (cause & NNP_INT_ADMIN_CQ)
		nnp_admin_irq(ndev);
	if (cause & NNP_INT_FW_EVENT)
		nnp_events_irq(ndev);
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

	/*
	 * Claimed and mapped in two steps: pcim_iomap_region() reports a
	 * mapping that could not be allocated as EINVAL, and a bind that
	 * ran out of memory should say ENOMEM.
	 */
	ret = pcim_request_region(pdev, NNP_BAR_REGS, DRM_NNP_DRIVER_NAME);
	if (ret)
		return ret;
	if (pci_resource_len(pdev, NNP_BAR_REGS) < NNP_BAR0_SIZE) {
		drm_err(&ndev->drm, "BAR0 too small: %pR\n",
			&pdev->resource[NNP_BAR_REGS]);
		return -ENODEV;
	}
	ndev->regs = devm_ioremap(&pdev->dev,
				  pci_resource_start(pdev, NNP_BAR_REGS),
				  NNP_BAR0_SIZE);
	if (!ndev->regs)
		return -ENOMEM;

	/* Vector 0 for the admin queue, one per user queue after it. */
	ret = pci_alloc_irq_vectors(pdev, 1, NNP_VECTOR_QUEUE(nnp_max_queues),
				    PCI_IRQ_MSIX);
	if (ret < 0)
		return ret;
	ndev->num_queues = ret - 1;
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

static void nnp_ida_fini(struct drm_device *drm, void *data)
{
	struct nnp_device *ndev = data;

	ida_destroy(&ndev->comm_ida);
	ida_destroy(&ndev->ctx_ida);
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
	ida_init(&ndev->ctx_ida);
	ida_init(&ndev->comm_ida);
	/* Files may outlive the binding: the ids go with the last of them. */
	ret = drmm_add_action_or_reset(&ndev->drm, nnp_ida_fini, ndev);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&ndev->drm, &ndev->queue_lock);
	if (ret)
		return ret;
	ret = drmm_add_action_or_reset(&ndev->drm, nnp_queues_fini, ndev);
	if (ret)
		return ret;
	ret = drmm_mutex_init(&ndev->drm, &ndev->users_lock);
	if (ret)
		return ret;
	INIT_LIST_HEAD(&ndev->users);
	nnp_events_init(ndev);
	ret = nnp_reset_init(ndev);
	if (ret)
		return ret;

	ret = nnp_pci_init(ndev);
	if (ret)
		return ret;
	ret = nnp_fw_boot(ndev);
	if (ret)
		return ret;
	ret = nnp_queues_init(ndev);
	if (ret)
		return ret;
	ret = nnp_admin_init(ndev);
	if (ret)
		return ret;
	ret = nnp_fw_identify(ndev);
	if (ret)
		return ret;
	nnp_events_start(ndev);
	ret = nnp_check_mem_bar(ndev);
	if (ret)
		return ret;
	ret = nnp_mem_init(ndev);
	if (ret)
		return ret;
	ret = nnp_exports_init(ndev);
	if (ret)
		return ret;
	ret = nnp_sysfs_ports_init(ndev);
	if (ret)
		return ret;
	ret = nnp_hwmon_init(ndev);
	if (ret)
		return ret;

	nnp_debugfs_init(ndev);
	ret = drm_dev_register(&ndev->drm, 0);
	if (ret)
		return ret;

	drm_info(&ndev->drm, "chip %u, %llu MiB, %u ICL ports, %u queues, firmware %s\n",
		 ndev->id.chip_id, ndev->id.mem_size >> 20, ndev->id.num_ports,
		 ndev->num_queues, ndev->id.fw_build);
	nnp_reset_start(ndev);
	return 0;
}

static void nnp_remove(struct pci_dev *pdev)
{
	struct nnp_device *ndev = pci_get_drvdata(pdev);

	/* Sleepers in QUEUE_WAIT leave, so that unplugging need not wait. */
	WRITE_ONCE(ndev->unplugging, true);
	nnp_queues_wake_all(ndev);
	/* Waits for ioctls in flight; later ones get -ENODEV. */
	drm_dev_unplug(&ndev->drm);
	/* Before the next binding can hand its memory to anyone else. */
	nnp_exports_revoke(ndev);
	nnp_reset_fini(ndev);
	nnp_events_fini(ndev);
	nnp_queues_detach_irqs(ndev);
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
	.err_handler = &nnp_err_handlers,
	.driver.pm = pm_sleep_ptr(&nnp_pm_ops),
	.dev_groups = nnp_dev_groups,
};
module_pci_driver(nnp_pci_driver);

MODULE_DESCRIPTION(NNP_DRIVER_DESC);
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
