// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko device memory shared with other devices through dma-buf.
 *
 * Device memory has no struct page: an attaching device gets the object's
 * range of BAR2 as one DMA address range of its own (dma_map_resource(),
 * as other drivers do for memory behind a BAR when the kernel has no
 * PCI_P2PDMA), in a table whose segments have no page.
 *
 * The exported object outlives the binding that made it (its dma-buf holds
 * it), but after an unbind its range of BAR2 goes to objects of the next
 * binding. So every export is listed on the device, and the unbind tells
 * each importer to let go (dma_buf_move_notify()) before anything else
 * can own that memory; a new attachment fails with ENODEV from then on.
 */
#include <drm/drm_drv.h>
#include <drm/drm_managed.h>
#include <drm/drm_prime.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "nnp_drv.h"
#include "nnp_bo.h"

/* A scatterlist segment's length is an unsigned int. */
#define NNP_EXPORT_SEG	SZ_1G

static struct sg_table *nnp_device_map_dma_buf(struct dma_buf_attachment *attach,
					       enum dma_data_direction dir)
{
	struct drm_gem_object *obj = attach->dmabuf->priv;
	struct nnp_device *ndev = to_nnp(obj->dev);
	struct nnp_bo *bo = to_nnp_bo(obj);
	phys_addr_t phys = pci_resource_start(ndev->pdev, NNP_BAR_MEM) +
			   bo->node.start;
	struct scatterlist *sg;
	struct sg_table *sgt;
	dma_addr_t addr;
	u64 done = 0;
	int ret, idx, i;

	if (!drm_dev_enter(obj->dev, &idx))
		return ERR_PTR(-ENODEV);
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	ret = sgt ? sg_alloc_table(sgt, DIV_ROUND_UP(obj->size, NNP_EXPORT_SEG),
				   GFP_KERNEL) : -ENOMEM;
	if (ret)
		goto err_free;
	addr = dma_map_resource(attach->dev, phys, obj->size, dir,
				DMA_ATTR_SKIP_CPU_SYNC);
	if (dma_mapping_error(attach->dev, addr)) {
		ret = -EIO;
		goto err_table;
	}
	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 len = min_t(u64, obj->size - done, NNP_EXPORT_SEG);

		sg_set_page(sg, NULL, len, 0);
		sg_dma_address(sg) = addr + done;
		sg_dma_len(sg) = len;
		done += len;
	}
	drm_dev_exit(idx);
	return sgt;
err_table:
	sg_free_table(sgt);
err_free:
	kfree(sgt);
	drm_dev_exit(idx);
	return ERR_PTR(ret);
}

static void nnp_device_unmap_dma_buf(struct dma_buf_attachment *attach,
				     struct sg_table *sgt,
				     enum dma_data_direction dir)
{
	struct drm_gem_object *obj = attach->dmabuf->priv;

	dma_unmap_resource(attach->dev, sg_dma_address(sgt->sgl), obj->size,
			   dir, DMA_ATTR_SKIP_CPU_SYNC);
	sg_free_table(sgt);
	kfree(sgt);
}

static void nnp_device_dmabuf_release(struct dma_buf *dmabuf)
{
	nnp_device_bo_unexport(to_nnp_bo(dmabuf->priv));
	drm_gem_dmabuf_release(dmabuf);
}

static const struct dma_buf_ops nnp_device_dmabuf_ops = {
	.attach = drm_gem_map_attach,
	.detach = drm_gem_map_detach,
	.map_dma_buf = nnp_device_map_dma_buf,
	.unmap_dma_buf = nnp_device_unmap_dma_buf,
	.release = nnp_device_dmabuf_release,
	.mmap = drm_gem_dmabuf_mmap,
};

struct dma_buf *nnp_device_bo_export(struct drm_gem_object *obj, int flags)
{
	struct nnp_device *ndev = to_nnp(obj->dev);
	struct nnp_bo *bo = to_nnp_bo(obj);
	struct dma_buf_export_info info = {
		.exp_name = KBUILD_MODNAME,
		.owner = THIS_MODULE,
		.ops = &nnp_device_dmabuf_ops,
		.size = obj->size,
		.flags = flags,
		.priv = obj,
		.resv = obj->resv,
	};
	struct dma_buf *dmabuf;

	dmabuf = drm_gem_dmabuf_export(obj->dev, &info);
	if (IS_ERR(dmabuf))
		return dmabuf;
	mutex_lock(&ndev->exports_lock);
	bo->export = dmabuf;
	list_add_tail(&bo->export_link, &ndev->exports);
	mutex_unlock(&ndev->exports_lock);
	return dmabuf;
}

/*
 * PRIME_FD_TO_HANDLE: a dma-buf of this binding's device memory is its own
 * object again, as drm_gem_prime_import() does for the dma-bufs it makes;
 * any other goes there, which takes back its own and refuses the rest.
 */
struct drm_gem_object *nnp_gem_prime_import(struct drm_device *dev,
					    struct dma_buf *dmabuf)
{
	struct drm_gem_object *obj = dmabuf->priv;

	if (dmabuf->ops == &nnp_device_dmabuf_ops && obj->dev == dev) {
		drm_gem_object_get(obj);
		return obj;
	}
	return drm_gem_prime_import(dev, dmabuf);
}

/* The object's dma-buf is being released: no importer is left to tell. */
void nnp_device_bo_unexport(struct nnp_bo *bo)
{
	struct nnp_device *ndev = to_nnp(bo->base.dev);

	mutex_lock(&ndev->exports_lock);
	list_del_init(&bo->export_link);
	bo->export = NULL;
	mutex_unlock(&ndev->exports_lock);
}

/*
 * At unbind, once no ioctl can run, and at the end of a reset: every
 * importer of this device's memory lets go of it. A dma-buf being
 * released meanwhile waits on the lock in nnp_device_bo_unexport(), so
 * each one listed is still whole here.
 */
void nnp_exports_revoke(struct nnp_device *ndev)
{
	struct nnp_bo *bo;

	mutex_lock(&ndev->exports_lock);
	list_for_each_entry(bo, &ndev->exports, export_link) {
		dma_resv_lock(bo->base.resv, NULL);
		dma_buf_move_notify(bo->export);
		dma_resv_unlock(bo->base.resv);
	}
	mutex_unlock(&ndev->exports_lock);
}

int nnp_exports_init(struct nnp_device *ndev)
{
	INIT_LIST_HEAD(&ndev->exports);
	return drmm_mutex_init(&ndev->drm, &ndev->exports_lock);
}
