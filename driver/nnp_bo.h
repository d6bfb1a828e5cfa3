/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nnp.ko memory objects: GEM objects for device memory, host pages,
 * pinned user memory, queue rings and doorbell pages.
 */
#ifndef __NNP_BO_H__
#define __NNP_BO_H__

#include <drm/drm_gem.h>
#include <drm/drm_mm.h>

struct nnp_device;
struct nnp_file;

enum nnp_bo_kind {
	NNP_BO_KIND_DEVICE,	/* a range of BAR2 */
	NNP_BO_KIND_HOST,	/* pages the kernel allocated */
	NNP_BO_KIND_USERPTR,	/* pinned user pages */
	NNP_BO_KIND_RING,	/* coherent DMA memory of a queue's rings */
	NNP_BO_KIND_DOORBELL,	/* a queue's doorbell page in BAR0 */
};

struct nnp_bo {
	struct drm_gem_object base;
	enum nnp_bo_kind kind;
	/* The device key and the context it belongs to; 0 if none. */
	u32 key;
	u32 ctx;
	bool read_only;
	/* The file whose max_keys_per_file the key counts against. */
	struct nnp_file *owner;
	/* USERPTR: the mm whose pinned_vm (RLIMIT_MEMLOCK) the pin is charged to. */
	struct mm_struct *pin_mm;

	struct drm_mm_node node;	/* DEVICE */
	struct page **pages;		/* HOST, USERPTR */
	dma_addr_t *dma;		/* HOST, USERPTR: one per page */
	unsigned int npages;
	u32 page_offset;		/* USERPTR: start within the first page */
	void *vaddr;			/* RING */
	dma_addr_t ring_dma;		/* RING */
	u32 qid;			/* DOORBELL */
	bool revoked;			/* DOORBELL: its queue is gone */
	bool lost;			/* DOORBELL: to a reset: a dummy page */
};

static inline struct nnp_bo *to_nnp_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct nnp_bo, base);
}

/* A queue's ring memory or doorbell page, mappable by @file only. */
struct nnp_bo *nnp_bo_create_ring(struct nnp_device *ndev, size_t size);
struct nnp_bo *nnp_bo_create_doorbell(struct nnp_device *ndev, u32 qid);
int nnp_bo_allow(struct nnp_bo *bo, struct drm_file *file, u64 *mmap_offset);
/* nnp_queue.c: a doorbell page, mapped on first touch while its queue lives. */
int nnp_queue_doorbell_mmap(struct nnp_bo *bo, struct vm_area_struct *vma);

#endif /* __NNP_BO_H__ */
