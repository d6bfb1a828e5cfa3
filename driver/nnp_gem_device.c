// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko device memory objects: a range of BAR2, allocated with drm_mm,
 * mapped write-combined, and scrubbed when freed.
 */
#include <drm/drm_drv.h>
#include <drm/drm_gem.h>
#include <linux/io.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/sizes.h>

#include "nnp_drv.h"
#include "nnp_bo.h"

/*
 * Zero @size bytes of device memory at @at a chunk at a time, with a
 * chance to schedule between: an object of gigabytes takes seconds to
 * scrub (tens under emulation), long enough for the soft-lockup watchdog.
 */
static void nnp_device_scrub(void __iomem *at, u64 size)
{
	u64 done, n;

	for (done = 0; done < size; done += n) {
		n = min_t(u64, size - done, SZ_16M);
		memset_io(at + done, 0, n);
		cond_resched();
	}
}

static void nnp_device_bo_free(struct drm_gem_object *obj)
{
	struct nnp_device *ndev = to_nnp(obj->dev);
	struct nnp_bo *bo = to_nnp_bo(obj);
	int idx;

	if (!nnp_bo_release_key(bo))
		return;
	if (drm_mm_node_allocated(&bo->node)) {
		/*
		 * Nothing of one context may reach the next owner. Once
		 * unbound, the device was reset, and is again at the next
		 * probe: a reset zeroes device memory, so no scrub is needed.
		 */
		if (drm_dev_enter(obj->dev, &idx)) {
			nnp_device_scrub(ndev->mem + bo->node.start,
					 bo->node.size);
			drm_dev_exit(idx);
		}
		mutex_lock(&ndev->mm_lock);
		ndev->mem_used -= bo->node.size;
		drm_mm_remove_node(&bo->node);
		mutex_unlock(&ndev->mm_lock);
		nnp_user_uncharge_n(bo->owner, NNP_LIMIT_DEVICE_MEM,
				    obj->size);
	}
	nnp_bo_destroy(bo);
}

static int nnp_device_bo_remap(struct nnp_bo *bo, struct vm_area_struct *vma)
{
	struct nnp_device *ndev = to_nnp(bo->base.dev);
	phys_addr_t phys = pci_resource_start(ndev->pdev, NNP_BAR_MEM) +
			   bo->node.start;

	vm_flags_set(vma, VM_IO | VM_PFNMAP);
	vma->vm_page_prot = pgprot_writecombine(vm_get_page_prot(vma->vm_flags));
	return io_remap_pfn_range(vma, vma->vm_start,
				  (phys >> PAGE_SHIFT) + vma->vm_pgoff,
				  vma->vm_end - vma->vm_start, vma->vm_page_prot);
}

/* After an unplug: the memory is gone, the dummy page stands in. */
static vm_fault_t nnp_device_bo_fault(struct vm_fault *vmf)
{
	return nnp_bo_fault_unplugged(vmf, NULL);
}

static const struct vm_operations_struct nnp_device_bo_vm_ops = {
	.fault = nnp_device_bo_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static int nnp_device_bo_mmap(struct drm_gem_object *obj,
			      struct vm_area_struct *vma)
{
	return nnp_bo_mmap_with(obj, vma, nnp_device_bo_remap);
}

static const struct drm_gem_object_funcs nnp_device_bo_funcs = {
	.free = nnp_device_bo_free,
	.mmap = nnp_device_bo_mmap,
	.export = nnp_device_bo_export,
	.vm_ops = &nnp_device_bo_vm_ops,
};

struct nnp_bo *nnp_bo_create_device(struct nnp_device *ndev,
				    struct nnp_file *nf, size_t size,
				    bool read_only)
{
	struct nnp_hw_key_args a = {
		.type = cpu_to_le32(NNP_KEY_TYPE_DEVICE),
		.length = cpu_to_le64(size),
	};
	struct nnp_bo *bo;
	int ret;

	bo = nnp_bo_alloc(ndev, &nnp_device_bo_funcs, size, read_only);
	if (IS_ERR(bo))
		return bo;
	ret = nnp_bo_charge_key(bo, nf);
	if (ret)
		goto err;
	/* The user's share first: a user at it gets EDQUOT, not ENOSPC. */
	ret = nnp_user_charge_n(nf, NNP_LIMIT_DEVICE_MEM, size);
	if (ret)
		goto err;
	mutex_lock(&ndev->mm_lock);
	ret = drm_mm_insert_node(&ndev->mm, &bo->node, size);
	if (!ret)
		ndev->mem_used += bo->node.size;
	mutex_unlock(&ndev->mm_lock);
	if (ret) {
		nnp_user_uncharge_n(nf, NNP_LIMIT_DEVICE_MEM, size);
		goto err;
	}
	a.dev_base = cpu_to_le64(bo->node.start);
	ret = nnp_bo_register(ndev, bo, nf->ctx, &a, 0, 0);
	if (ret)
		goto err;
	return bo;
err:
	drm_gem_object_put(&bo->base);
	return ERR_PTR(ret);
}
