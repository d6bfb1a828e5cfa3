// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko objects made of host pages, whether the kernel allocated them or
 * a process's pinned them: the pages go into an sg_table, so that runs of
 * contiguous pages are one segment each, and are DMA-mapped through it.
 * The firmware takes them as a list of page DMA addresses.
 */
#include <drm/drm_prime.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>

#include "nnp_drv.h"
#include "nnp_bo.h"

static_assert(NNP_BO_HOST_MAX / PAGE_SIZE * sizeof(__le64) <=
	      PAGE_SIZE << MAX_PAGE_ORDER);
static_assert(NNP_BO_HOST_MAX <=
	      (u64)NNP_HW_HOST_KEY_MAX_PAGES * NNP_HW_PAGE_SIZE);

/* Map @bo's pages for the device, as the firmware's page list needs. */
int nnp_bo_map_pages(struct nnp_device *ndev, struct nnp_bo *bo)
{
	int ret;

	ret = sg_alloc_table_from_pages(&bo->sgt, bo->pages, bo->npages, 0,
					(unsigned long)bo->npages << PAGE_SHIFT,
					NNP_GFP_HOST);
	if (ret)
		return ret;
	/*
	 * Whatever the mapping layer says went wrong, the caller's answer is
	 * the one it always was: no room to map the pages.
	 */
	if (dma_map_sgtable(&ndev->pdev->dev, &bo->sgt, DMA_BIDIRECTIONAL, 0))
		return -ENOMEM;
	return 0;
}

/* Undo what nnp_bo_map_pages() did, or as much of it as it did. */
void nnp_bo_unmap_pages(struct nnp_device *ndev, struct nnp_bo *bo)
{
	if (bo->sgt.nents)
		dma_unmap_sgtable(&ndev->pdev->dev, &bo->sgt,
				  DMA_BIDIRECTIONAL, 0);
	sg_free_table(&bo->sgt);
}

/*
 * Register the pages @sgt maps for the device (@bo's own, or an imported
 * dma-buf's) as @bo's key of @type (NNP_KEY_TYPE_HOST or _PEER), @length
 * bytes from its page_offset.
 */
int nnp_bo_register_pages(struct nnp_device *ndev, struct nnp_bo *bo,
			  struct sg_table *sgt, u32 type, u32 ctx, u64 length)
{
	struct nnp_hw_key_args a = {
		.type = cpu_to_le32(type),
		.page_offset = cpu_to_le32(bo->page_offset),
		.length = cpu_to_le64(length),
	};
	size_t list_len = bo->npages * sizeof(__le64);
	struct device *dev = &ndev->pdev->dev;
	struct sg_dma_page_iter it;
	unsigned int i = 0;
	dma_addr_t list_dma;
	__le64 *list;
	int ret;

	list = dma_alloc_coherent(dev, list_len, &list_dma,
				  GFP_KERNEL | __GFP_NOWARN);
	if (!list)
		return -ENOMEM;
	/* Segments are whole pages (importers check): one entry per page. */
	for_each_sgtable_dma_page(sgt, &it, 0) {
		/* An imported dma-buf may map more than the object holds. */
		if (i == bo->npages)
			break;
		list[i++] = cpu_to_le64(sg_page_iter_dma_address(&it));
	}
	ret = nnp_bo_register(ndev, bo, ctx, &a, list_dma, list_len);
	dma_free_coherent(dev, list_len, list, list_dma);
	return ret;
}

/*
 * An exported dma-buf's pages, for an importer to map (drm_gem_map_dma_buf()
 * maps them for its device): a table of their own, since each attachment's
 * mapping is separate from the one this device's key uses.
 */
struct sg_table *nnp_bo_get_sg_table(struct drm_gem_object *obj)
{
	struct nnp_bo *bo = to_nnp_bo(obj);

	return drm_prime_pages_to_sg(obj->dev, bo->pages, bo->npages);
}
