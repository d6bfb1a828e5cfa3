// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko user pointer objects: a process's own memory, pinned for as long
 * as the object lives and charged to its RLIMIT_MEMLOCK. The process
 * already has the memory mapped, so the object has no mapping of its own.
 */
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <linux/capability.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nnp_drv.h"
#include "nnp_bo.h"
#include "nnp_accel.h"

/*
 * Charge @npages pages about to be pinned to the caller's RLIMIT_MEMLOCK,
 * in mm->pinned_vm as RDMA's ib_umem_get() does: pinned pages can be
 * neither swapped nor reclaimed. CAP_IPC_LOCK lifts the limit, not the
 * charge. The mm is kept, since the object may be freed by another task.
 */
static int nnp_bo_charge_pin(struct nnp_bo *bo, unsigned long npages)
{
	unsigned long limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
	struct mm_struct *mm = current->mm;

	if (atomic64_add_return(npages, &mm->pinned_vm) > limit &&
	    !capable(CAP_IPC_LOCK)) {
		atomic64_sub(npages, &mm->pinned_vm);
		return -ENOMEM;
	}
	mmgrab(mm);
	bo->pin_mm = mm;
	return 0;
}

static void nnp_userptr_bo_free(struct drm_gem_object *obj)
{
	struct nnp_bo *bo = to_nnp_bo(obj);

	if (!nnp_bo_release_key(bo))
		return;
	nnp_bo_unmap_pages(to_nnp(obj->dev), bo);
	if (bo->pages)
		unpin_user_pages_dirty_lock(bo->pages, bo->npages,
					    !bo->read_only);
	kvfree(bo->pages);
	if (bo->pin_mm) {
		atomic64_sub(obj->size >> PAGE_SHIFT, &bo->pin_mm->pinned_vm);
		mmdrop(bo->pin_mm);
	}
	nnp_bo_destroy(bo);
}

static int nnp_userptr_bo_remap(struct nnp_bo *bo, struct vm_area_struct *vma)
{
	nnp_dbg(to_nnp(bo->base.dev), GEM,
		"mmap: a user pointer object has no mapping of its own\n");
	return -EINVAL;
}

/* Reached only through an exported dma-buf: the object has no offset. */
static int nnp_userptr_bo_mmap(struct drm_gem_object *obj,
			       struct vm_area_struct *vma)
{
	return nnp_bo_mmap_with(obj, vma, nnp_userptr_bo_remap);
}

static const struct drm_gem_object_funcs nnp_userptr_bo_funcs = {
	.free = nnp_userptr_bo_free,
	.mmap = nnp_userptr_bo_mmap,
	.get_sg_table = nnp_bo_get_sg_table,
	.vm_ops = &nnp_bo_vm_ops,
};

/* Pin the @span bytes at @start into @bo, which has room for their pages. */
static int nnp_bo_pin(struct nnp_bo *bo, unsigned long start, u64 span)
{
	unsigned int gup = FOLL_LONGTERM | (bo->read_only ? 0 : FOLL_WRITE);
	int pinned;

	bo->pages = kvcalloc(span >> PAGE_SHIFT, sizeof(*bo->pages), NNP_GFP_HOST);
	if (!bo->pages)
		return -ENOMEM;
	pinned = pin_user_pages_fast(start, span >> PAGE_SHIFT, gup, bo->pages);
	if (pinned > 0)
		bo->npages = pinned;
	if (pinned != span >> PAGE_SHIFT)
		return pinned < 0 ? pinned : -EFAULT;
	return 0;
}

int nnp_ioctl_bo_userptr(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_bo_userptr *args = data;
	unsigned long start = args->user_ptr & PAGE_MASK;
	u32 offset = args->user_ptr & ~PAGE_MASK;
	struct nnp_bo *bo;
	u64 span;
	int ret;

	if (args->reserved) {
		nnp_dbg(ndev, GEM, "bo_userptr: reserved is 0x%x, not 0\n",
			args->reserved);
		return -EINVAL;
	}
	if (!args->size) {
		nnp_dbg(ndev, GEM, "bo_userptr: size 0\n");
		return -EINVAL;
	}
	if (args->flags & ~DRM_NNP_BO_READ_ONLY) {
		nnp_dbg(ndev, GEM, "bo_userptr: unknown flags 0x%x\n",
			args->flags);
		return -EINVAL;
	}
	/* The pages the range touches; size alone cannot overflow here. */
	if (args->size > NNP_BO_HOST_MAX)
		return -E2BIG;
	span = PAGE_ALIGN(offset + args->size);
	if (span > NNP_BO_HOST_MAX)
		return -E2BIG;
	if (!access_ok((void __user *)start, span))
		return -EFAULT;

	bo = nnp_bo_alloc(ndev, &nnp_userptr_bo_funcs, span,
			  args->flags & DRM_NNP_BO_READ_ONLY);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	bo->page_offset = offset;
	ret = nnp_bo_charge_key(bo, nf);
	if (!ret)
		ret = nnp_bo_charge_pin(bo, span >> PAGE_SHIFT);
	if (!ret)
		ret = nnp_bo_pin(bo, start, span);
	if (!ret)
		ret = nnp_bo_map_pages(ndev, bo);
	if (!ret)
		ret = nnp_bo_register_pages(ndev, bo, &bo->sgt,
					    NNP_KEY_TYPE_HOST, nf->ctx,
					    args->size);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ret;
	}
	args->key = bo->key;
	return nnp_bo_publish(bo, file, &args->handle);
}
