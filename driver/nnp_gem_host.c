// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko host memory objects: pages the kernel allocates, charged to the
 * caller's memory cgroup, zeroed, and mapped into the process whole.
 */
#include <drm/drm_gem.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "nnp_drv.h"
#include "nnp_bo.h"

/*
 * Host objects take their pages in physically contiguous runs of up to
 * 2^NNP_BO_RUN_ORDER pages (2 MiB) where the allocator has them at hand:
 * the device copies a run of contiguous pages through one mapping, page by
 * page otherwise. A run is asked for without retrying, so a fragmented
 * host falls back to smaller runs, down to single pages asked for as any
 * host page.
 */
#define NNP_BO_RUN_ORDER	9
#define NNP_GFP_RUN	((NNP_GFP_HOST & ~__GFP_RETRY_MAYFAIL) | __GFP_NORETRY)

static void nnp_host_bo_free(struct drm_gem_object *obj)
{
	struct nnp_bo *bo = to_nnp_bo(obj);
	unsigned int i;

	if (!nnp_bo_release_key(bo))
		return;
	nnp_bo_unmap_pages(to_nnp(obj->dev), bo);
	for (i = 0; i < bo->npages && bo->pages; i++)
		if (bo->pages[i])
			__free_page(bo->pages[i]);
	kvfree(bo->pages);
	nnp_bo_destroy(bo);
}

static int nnp_host_bo_remap(struct nnp_bo *bo, struct vm_area_struct *vma)
{
	return vm_map_pages(vma, bo->pages, bo->npages);
}

static unsigned long nnp_host_bo_pfn(struct nnp_bo *bo, pgoff_t i)
{
	return page_to_pfn(bo->pages[i]);
}

/* After an unplug: the pages are still the object's, mapped again. */
static vm_fault_t nnp_host_bo_fault(struct vm_fault *vmf)
{
	return nnp_bo_fault_unplugged(vmf, nnp_host_bo_pfn);
}

static const struct vm_operations_struct nnp_host_bo_vm_ops = {
	.fault = nnp_host_bo_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static int nnp_host_bo_mmap(struct drm_gem_object *obj,
			    struct vm_area_struct *vma)
{
	return nnp_bo_mmap_with(obj, vma, nnp_host_bo_remap);
}

static const struct drm_gem_object_funcs nnp_host_bo_funcs = {
	.free = nnp_host_bo_free,
	.mmap = nnp_host_bo_mmap,
	.get_sg_table = nnp_bo_get_sg_table,
	.vm_ops = &nnp_host_bo_vm_ops,
};

/*
 * Each run is split into single pages, so that mmap and freeing go page by
 * page as for any page (the sg_table joins them again for the device); an
 * order that failed once is not asked for again for this object.
 */
static int nnp_bo_alloc_host(struct nnp_bo *bo)
{
	unsigned int order = NNP_BO_RUN_ORDER, i = 0, j;
	struct page *run;

	bo->npages = bo->base.size >> PAGE_SHIFT;
	bo->pages = kvcalloc(bo->npages, sizeof(*bo->pages), NNP_GFP_HOST);
	if (!bo->pages)
		return -ENOMEM;
	while (i < bo->npages) {
		while (order && bo->npages - i < 1u << order)
			order--;
		run = alloc_pages((order ? NNP_GFP_RUN : NNP_GFP_HOST) |
				  __GFP_ZERO, order);
		if (!run) {
			if (!order)
				return -ENOMEM;
			order--;
			continue;
		}
		split_page(run, order);
		for (j = 0; j < 1u << order; j++)
			bo->pages[i++] = nth_page(run, j);
	}
	return 0;
}

struct nnp_bo *nnp_bo_create_host(struct nnp_device *ndev,
				  struct nnp_file *nf, size_t size,
				  bool read_only)
{
	struct nnp_bo *bo;
	int ret;

	bo = nnp_bo_alloc(ndev, &nnp_host_bo_funcs, size, read_only);
	if (IS_ERR(bo))
		return bo;
	ret = nnp_bo_charge_key(bo, nf);
	if (!ret)
		ret = nnp_bo_alloc_host(bo);
	if (!ret)
		ret = nnp_bo_map_pages(ndev, bo);
	if (!ret)
		ret = nnp_bo_register_pages(ndev, bo, &bo->sgt,
					    NNP_KEY_TYPE_HOST, nf->ctx, size);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ERR_PTR(ret);
	}
	return bo;
}
