// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko imported memory: a dma-buf of an exporter nnp knows (udmabuf,
 * the system dma-buf heap, an nnp device's memory) made a key of the
 * importing file's context, so that queue commands read and write it like
 * host memory.
 *
 * DRM_IOCTL_NNP_BO_IMPORT does this rather than PRIME_FD_TO_HANDLE: a key
 * belongs to one file's context and counts against that file's keys, and
 * DRM's import hook is not told which file asks.
 *
 * The attachment is dynamic, so that an exporter can take its memory back
 * (dma_buf_move_notify(): nnp does at unbind, for device memory whose
 * range the next binding hands out again, and at the end of a reset). The
 * key is then unregistered, which waits for the commands using it; later
 * commands naming it fail as for any unknown key. The object and its
 * handle stay until closed.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>

#include "nnp_drv.h"
#include "nnp_bo.h"
#include "nnp_accel.h"

/*
 * The exporters whose mappings nnp has been tested with: nnp itself (an
 * object's pages or its range of a device's BAR), and whole pages of host
 * memory from udmabuf and the system heap, by their exporter names.
 * Another exporter's mapping may be memory the device cannot reach
 * coherently, or pages that move without notice; it is refused rather
 * than guessed at. nnp's own are known by their owner: DRM's helper names
 * host objects' dma-bufs "drm".
 */
static const char *const nnp_import_exporters[] = { "udmabuf", "system" };

static bool nnp_import_exporter_known(const struct dma_buf *dmabuf)
{
	int i;

	if (dmabuf->owner == THIS_MODULE)
		return true;
	for (i = 0; i < ARRAY_SIZE(nnp_import_exporters); i++)
		if (dmabuf->exp_name &&
		    !strcmp(dmabuf->exp_name, nnp_import_exporters[i]))
			return true;
	return false;
}

/* Called with the dma-buf's reservation lock held, as is every key change. */
static void nnp_import_revoke(struct nnp_bo *bo)
{
	struct nnp_device *ndev = to_nnp(bo->base.dev);
	int idx;

	bo->revoked = true;
	if (!bo->key || !drm_dev_enter(&ndev->drm, &idx))
		return;
	if (nnp_bo_unregister(ndev, bo))
		bo->key = 0;
	else
		drm_warn(&ndev->drm,
			 "key 0x%x of an imported dma-buf not released by the device\n",
			 bo->key);
	drm_dev_exit(idx);
}

static void nnp_import_move_notify(struct dma_buf_attachment *attach)
{
	nnp_import_revoke(attach->importer_priv);
}

static const struct dma_buf_attach_ops nnp_import_attach_ops = {
	.allow_peer2peer = true,
	.move_notify = nnp_import_move_notify,
};

static void nnp_import_bo_free(struct drm_gem_object *obj)
{
	struct dma_buf_attachment *attach = obj->import_attach;
	struct nnp_bo *bo = to_nnp_bo(obj);
	struct dma_buf *dmabuf;
	bool released;

	if (!attach) {
		nnp_bo_destroy(bo);
		return;
	}
	dmabuf = attach->dmabuf;
	dma_resv_lock(dmabuf->resv, NULL);
	released = nnp_bo_release_key(bo);
	if (released && bo->import_sgt)
		dma_buf_unmap_attachment(attach, bo->import_sgt,
					 DMA_BIDIRECTIONAL);
	dma_resv_unlock(dmabuf->resv);
	if (!released)
		return;
	dma_buf_detach(dmabuf, attach);
	dma_buf_put(dmabuf);
	nnp_bo_destroy(bo);
}

static const struct drm_gem_object_funcs nnp_import_bo_funcs = {
	.free = nnp_import_bo_free,
};

/*
 * The device takes a key's memory as a list of whole pages: every segment
 * of the exporter's mapping must start and end on one, and together they
 * must cover the object.
 */
static int nnp_import_check(struct nnp_bo *bo, struct sg_table *sgt)
{
	struct scatterlist *sg;
	u64 total = 0;
	int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		if (!PAGE_ALIGNED(sg_dma_address(sg)) ||
		    !PAGE_ALIGNED(sg_dma_len(sg)))
			return -EINVAL;
		total += sg_dma_len(sg);
	}
	return total < bo->base.size ? -EINVAL : 0;
}

/*
 * Memory without struct pages is another device's (a BAR, as nnp's own
 * device memory exports): a PEER key on a device that has them (hardware
 * 1.24), whose bytes the device counts apart from host memory's.
 */
static u32 nnp_import_key_type(struct nnp_device *ndev, struct sg_table *sgt)
{
	if ((ndev->id.hw_version & 0xffff) >= 24 && !sg_page(sgt->sgl))
		return NNP_KEY_TYPE_PEER;
	return NNP_KEY_TYPE_HOST;
}

/* Map the attachment and register its pages, under the reservation lock. */
static int nnp_import_register(struct nnp_bo *bo, struct nnp_file *nf)
{
	struct dma_buf_attachment *attach = bo->base.import_attach;
	struct nnp_device *ndev = to_nnp(bo->base.dev);
	struct sg_table *sgt;
	int ret;

	ret = dma_resv_lock_interruptible(attach->dmabuf->resv, NULL);
	if (ret)
		return ret;
	sgt = dma_buf_map_attachment(attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out;
	}
	bo->import_sgt = sgt;
	ret = nnp_import_check(bo, sgt);
	if (ret) {
		nnp_dbg(ndev, GEM,
			"bo_import: the exporter's pages are not whole pages\n");
		goto out;
	}
	/* Taken back between the attach and now. */
	if (bo->revoked) {
		ret = -ENODEV;
		goto out;
	}
	ret = nnp_bo_register_pages(ndev, bo, sgt, nnp_import_key_type(ndev, sgt),
				    nf->ctx, bo->base.size);
out:
	dma_resv_unlock(attach->dmabuf->resv);
	return ret;
}

int nnp_ioctl_bo_import(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_bo_import *args = data;
	struct dma_buf_attachment *attach;
	struct dma_buf *dmabuf;
	struct nnp_bo *bo;
	int ret;

	if (args->flags & ~DRM_NNP_BO_READ_ONLY) {
		nnp_dbg(ndev, GEM, "bo_import: unknown flags 0x%x\n",
			args->flags);
		return -EINVAL;
	}
	dmabuf = dma_buf_get(args->fd);
	if (IS_ERR(dmabuf)) {
		nnp_dbg(ndev, GEM, "bo_import: fd %d is not a dma-buf\n",
			args->fd);
		return PTR_ERR(dmabuf);
	}
	if (!nnp_import_exporter_known(dmabuf)) {
		nnp_dbg(ndev, GEM, "bo_import: exporter %s is not one nnp takes\n",
			dmabuf->exp_name ?: "(unnamed)");
		dma_buf_put(dmabuf);
		return -EOPNOTSUPP;
	}
	if (!dmabuf->size || !PAGE_ALIGNED(dmabuf->size) ||
	    dmabuf->size > NNP_BO_HOST_MAX) {
		nnp_dbg(ndev, GEM, "bo_import: a dma-buf of %zu bytes\n",
			dmabuf->size);
		ret = dmabuf->size > NNP_BO_HOST_MAX ? -E2BIG : -EINVAL;
		dma_buf_put(dmabuf);
		return ret;
	}
	bo = nnp_bo_alloc(ndev, &nnp_import_bo_funcs, dmabuf->size,
			  args->flags & DRM_NNP_BO_READ_ONLY);
	if (IS_ERR(bo)) {
		dma_buf_put(dmabuf);
		return PTR_ERR(bo);
	}
	bo->npages = bo->base.size >> PAGE_SHIFT;
	attach = dma_buf_dynamic_attach(dmabuf, drm->dev,
					&nnp_import_attach_ops, bo);
	if (IS_ERR(attach)) {
		dma_buf_put(dmabuf);
		drm_gem_object_put(&bo->base);
		return PTR_ERR(attach);
	}
	/* From here the object's free detaches and puts the dma-buf. */
	bo->base.import_attach = attach;
	ret = nnp_bo_charge_key(bo, nf);
	if (!ret)
		ret = nnp_import_register(bo, nf);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ret;
	}
	/*
	 * As DRM's own import does: handles hold the dma-buf as well, and
	 * fdinfo counts the memory as shared.
	 */
	get_dma_buf(dmabuf);
	bo->base.dma_buf = dmabuf;
	args->size = bo->base.size;
	args->key = bo->key;
	return nnp_bo_publish(bo, file, &args->handle);
}
