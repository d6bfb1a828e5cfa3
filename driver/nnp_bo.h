/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * nnp.ko memory objects: GEM objects for device memory, host pages,
 * pinned user memory, queue rings and doorbell pages. Each kind has its
 * own drm_gem_object_funcs, in a file of its own (nnp_gem_*.c); what they
 * share is in nnp_gem.c.
 */
#ifndef __NNP_BO_H__
#define __NNP_BO_H__

#include <drm/drm_gem.h>
#include <drm/drm_mm.h>
#include <linux/scatterlist.h>

#include "nnp_hw.h"

struct nnp_device;
struct nnp_file;

/*
 * Largest host or user object. The firmware takes a key's page list in one
 * coherent DMA block, 8 bytes a page, and the largest block the page
 * allocator makes (4 MiB) holds the list of 2 GiB.
 */
#define NNP_BO_HOST_MAX		(2ull << 30)

/*
 * Host pages and page arrays: charged to the caller's memory cgroup, and a
 * request the host cannot meet fails with -ENOMEM, without a warning and
 * without sending the OOM killer after somebody else.
 */
#define NNP_GFP_HOST	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

struct nnp_bo {
	struct drm_gem_object base;
	/* The device key and the context it belongs to; 0 if none. */
	u32 key;
	u32 ctx;
	bool read_only;
	/* The file whose max_keys_per_file the key counts against. */
	struct nnp_file *owner;
	/* Userptr: the mm whose pinned_vm (RLIMIT_MEMLOCK) the pin is charged to. */
	struct mm_struct *pin_mm;

	struct drm_mm_node node;	/* device: a range of BAR2 */
	struct page **pages;		/* host, userptr: one per page */
	unsigned int npages;
	struct sg_table sgt;		/* host, userptr: the pages, DMA-mapped */
	struct sg_table *import_sgt;	/* import: the exporter's mapping */
	/* device: its dma-buf while one exists, listed on ndev->exports */
	struct dma_buf *export;
	struct list_head export_link;
	u32 page_offset;		/* userptr: start within the first page */
	void *vaddr;			/* ring: coherent DMA memory */
	dma_addr_t ring_dma;		/* ring */
	u32 qid;			/* doorbell */
	/* doorbell: its queue is gone; import: its exporter took it back */
	bool revoked;
	bool lost;			/* doorbell: to a reset: a dummy page */
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
extern const struct vm_operations_struct nnp_doorbell_vm_ops;

/* nnp_gem.c: what every kind shares. */
extern const struct vm_operations_struct nnp_bo_vm_ops;
vm_fault_t nnp_bo_fault_dummy(struct vm_fault *vmf, struct nnp_device *ndev);
vm_fault_t nnp_bo_fault_unplugged(struct vm_fault *vmf,
				  unsigned long (*pfn_at)(struct nnp_bo *bo,
							  pgoff_t i));
struct nnp_bo *nnp_bo_alloc(struct nnp_device *ndev,
			    const struct drm_gem_object_funcs *funcs,
			    size_t size, bool read_only);
int nnp_bo_charge_key(struct nnp_bo *bo, struct nnp_file *nf);
int nnp_bo_register(struct nnp_device *ndev, struct nnp_bo *bo, u32 ctx,
		    struct nnp_hw_key_args *a, dma_addr_t list_dma,
		    size_t list_len);
bool nnp_bo_unregister(struct nnp_device *ndev, struct nnp_bo *bo);
bool nnp_bo_release_key(struct nnp_bo *bo);
void nnp_bo_destroy(struct nnp_bo *bo);
int nnp_bo_mmap_with(struct drm_gem_object *obj, struct vm_area_struct *vma,
		     int (*remap)(struct nnp_bo *bo, struct vm_area_struct *vma));
int nnp_bo_publish(struct nnp_bo *bo, struct drm_file *file, u32 *handle);

/* nnp_gem_device.c, nnp_gem_host.c: the two kinds DRM_NNP_BO_CREATE makes. */
struct nnp_bo *nnp_bo_create_device(struct nnp_device *ndev,
				    struct nnp_file *nf, size_t size,
				    bool read_only);
struct nnp_bo *nnp_bo_create_host(struct nnp_device *ndev,
				  struct nnp_file *nf, size_t size,
				  bool read_only);

/* nnp_gem_pages.c: the page list of a host or userptr object. */
int nnp_bo_map_pages(struct nnp_device *ndev, struct nnp_bo *bo);
void nnp_bo_unmap_pages(struct nnp_device *ndev, struct nnp_bo *bo);
int nnp_bo_register_pages(struct nnp_device *ndev, struct nnp_bo *bo,
			  struct sg_table *sgt, u32 type, u32 ctx, u64 length);
struct sg_table *nnp_bo_get_sg_table(struct drm_gem_object *obj);

/* nnp_gem_export.c: device memory shared with other devices. */
struct dma_buf *nnp_device_bo_export(struct drm_gem_object *obj, int flags);
void nnp_device_bo_unexport(struct nnp_bo *bo);

#endif /* __NNP_BO_H__ */
