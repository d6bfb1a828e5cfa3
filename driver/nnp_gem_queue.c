// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko objects of a user queue: its rings, in coherent DMA memory, and
 * its doorbell page in BAR0. Neither has a key or a handle: the queue
 * lets its owner map them (nnp_bo_allow()) and revokes that.
 */
#include <drm/drm_gem.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "nnp_drv.h"
#include "nnp_bo.h"

/* A queue's rings are one coherent block, as large as the allocator makes. */
static_assert(NNP_HW_QUEUE_DEPTH_MAX * (sizeof(struct nnp_hw_queue_cmd) +
					sizeof(struct nnp_hw_cqe)) <=
	      PAGE_SIZE << MAX_PAGE_ORDER);

static void nnp_ring_bo_free(struct drm_gem_object *obj)
{
	struct nnp_bo *bo = to_nnp_bo(obj);

	if (bo->vaddr)
		dma_free_coherent(obj->dev->dev, obj->size, bo->vaddr,
				  bo->ring_dma);
	nnp_bo_destroy(bo);
}

static int nnp_ring_bo_remap(struct nnp_bo *bo, struct vm_area_struct *vma)
{
	return dma_mmap_coherent(bo->base.dev->dev, vma, bo->vaddr,
				 bo->ring_dma, bo->base.size);
}

static unsigned long nnp_ring_bo_pfn(struct nnp_bo *bo, pgoff_t i)
{
	void *p = bo->vaddr + (i << PAGE_SHIFT);

	return is_vmalloc_addr(p) ? vmalloc_to_pfn(p) : page_to_pfn(virt_to_page(p));
}

/* After an unplug: the rings are still the queue's, mapped again. */
static vm_fault_t nnp_ring_bo_fault(struct vm_fault *vmf)
{
	return nnp_bo_fault_unplugged(vmf, nnp_ring_bo_pfn);
}

static const struct vm_operations_struct nnp_ring_bo_vm_ops = {
	.fault = nnp_ring_bo_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static int nnp_ring_bo_mmap(struct drm_gem_object *obj,
			    struct vm_area_struct *vma)
{
	return nnp_bo_mmap_with(obj, vma, nnp_ring_bo_remap);
}

static const struct drm_gem_object_funcs nnp_ring_bo_funcs = {
	.free = nnp_ring_bo_free,
	.mmap = nnp_ring_bo_mmap,
	.vm_ops = &nnp_ring_bo_vm_ops,
};

struct nnp_bo *nnp_bo_create_ring(struct nnp_device *ndev, size_t size)
{
	struct nnp_bo *bo = nnp_bo_alloc(ndev, &nnp_ring_bo_funcs, size, false);

	if (IS_ERR(bo))
		return bo;
	bo->vaddr = dma_alloc_coherent(&ndev->pdev->dev, size, &bo->ring_dma,
				       GFP_KERNEL | __GFP_NOWARN);
	if (!bo->vaddr) {
		drm_gem_object_put(&bo->base);
		return ERR_PTR(-ENOMEM);
	}
	return bo;
}

static void nnp_doorbell_bo_free(struct drm_gem_object *obj)
{
	nnp_bo_destroy(to_nnp_bo(obj));
}

static int nnp_doorbell_bo_mmap(struct drm_gem_object *obj,
				struct vm_area_struct *vma)
{
	return nnp_bo_mmap_with(obj, vma, nnp_queue_doorbell_mmap);
}

/* The page is mapped on first touch, by nnp_doorbell_vm_ops' fault. */
static const struct drm_gem_object_funcs nnp_doorbell_bo_funcs = {
	.free = nnp_doorbell_bo_free,
	.mmap = nnp_doorbell_bo_mmap,
	.vm_ops = &nnp_doorbell_vm_ops,
};

struct nnp_bo *nnp_bo_create_doorbell(struct nnp_device *ndev, u32 qid)
{
	struct nnp_bo *bo = nnp_bo_alloc(ndev, &nnp_doorbell_bo_funcs,
					 PAGE_SIZE, false);

	if (!IS_ERR(bo))
		bo->qid = qid;
	return bo;
}
