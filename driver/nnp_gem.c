// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko memory objects.
 *
 * Every object a process can name in a queue command is registered with
 * the firmware as a key of the process's context: device memory as a range
 * of BAR2 (allocated with drm_mm, scrubbed when freed), host memory and
 * pinned user memory as a list of page DMA addresses that only the kernel
 * and the firmware see. Freeing an object unregisters its key first; the
 * firmware answers only after every command using it has finished.
 *
 * What an object costs is charged to whoever made it: pinned user pages to
 * the caller's RLIMIT_MEMLOCK, host pages to its memory cgroup, and its key
 * to the file's max_keys_per_file, since the device's key table is shared.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_vma_manager.h>
#include <linux/dma-mapping.h>
#include <linux/highmem.h>
#include <linux/capability.h>
#include <linux/kmemleak.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "nnp_drv.h"
#include "nnp_bo.h"
#include "nnp_accel.h"

/*
 * Largest host or user object. The firmware takes a key's page list in one
 * coherent DMA block, 8 bytes a page, and the largest block the page
 * allocator makes (4 MiB) holds the list of 2 GiB. A queue's rings are one
 * such block too.
 */
#define NNP_BO_HOST_MAX		(2ull << 30)
static_assert(NNP_BO_HOST_MAX / PAGE_SIZE * sizeof(__le64) <=
	      PAGE_SIZE << MAX_PAGE_ORDER);
static_assert(NNP_BO_HOST_MAX <=
	      (u64)NNP_HW_HOST_KEY_MAX_PAGES * NNP_HW_PAGE_SIZE);
static_assert(NNP_HW_QUEUE_DEPTH_MAX * (sizeof(struct nnp_hw_queue_cmd) +
					sizeof(struct nnp_hw_cqe)) <=
	      PAGE_SIZE << MAX_PAGE_ORDER);

/*
 * Host pages and page arrays: charged to the caller's memory cgroup, and a
 * request the host cannot meet fails with -ENOMEM, without a warning and
 * without sending the OOM killer after somebody else.
 */
#define NNP_GFP_HOST	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

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

static unsigned int nnp_max_keys_per_file = 1024;
module_param_named(max_keys_per_file, nnp_max_keys_per_file, uint, 0644);
MODULE_PARM_DESC(max_keys_per_file,
		 "Memory objects one open file may hold at once (the device has "
		 __stringify(NNP_HW_MAX_KEYS) " keys for all)");

/*
 * Every object is gone by now, except those nnp_bo_free() leaked because
 * the device did not give their key back. The device was reset when it was
 * unbound, and the next probe resets it again (which zeroes its memory), so
 * their ranges go with the allocator rather than trip drm_mm's warning.
 */
static void nnp_mem_fini(struct drm_device *drm, void *data)
{
	struct nnp_device *ndev = data;
	struct drm_mm_node *node, *next;

	drm_mm_for_each_node_safe(node, next, &ndev->mm) {
		drm_info(&ndev->drm,
			 "dropping leaked device memory 0x%llx+0x%llx\n",
			 node->start, node->size);
		drm_mm_remove_node(node);
	}
	drm_mm_takedown(&ndev->mm);
}

int nnp_mem_init(struct nnp_device *ndev)
{
	struct pci_dev *pdev = ndev->pdev;
	int ret;

	ret = drmm_mutex_init(&ndev->drm, &ndev->mm_lock);
	if (ret)
		return ret;
	drm_mm_init(&ndev->mm, 0, ndev->id.mem_size);
	ret = drmm_add_action_or_reset(&ndev->drm, nnp_mem_fini, ndev);
	if (ret)
		return ret;
	ndev->mem = devm_ioremap_wc(&pdev->dev,
				    pci_resource_start(pdev, NNP_BAR_MEM),
				    ndev->id.mem_size);
	return ndev->mem ? 0 : -ENOMEM;
}

/*
 * Take the key back from the device; false if the device did not confirm
 * it is done with the memory (it does so only after the commands using it
 * have finished). ENOENT is fine: the context went first, keys and all;
 * so is ECANCELED: a reset dropped every key, and is over.
 */
static bool nnp_bo_unregister(struct nnp_device *ndev, struct nnp_bo *bo)
{
	__le32 args[2] = { cpu_to_le32(bo->ctx), cpu_to_le32(bo->key) };
	int ret;

	ret = nnp_admin_run(ndev, NNP_ADMIN_KEY_UNREGISTER, args, sizeof(args),
			    0, 0, NULL);
	return !ret || ret == -ENOENT || ret == -ECANCELED;
}

static void nnp_bo_free_pages(struct nnp_device *ndev, struct nnp_bo *bo)
{
	struct device *dev = &ndev->pdev->dev;
	unsigned int i;

	for (i = 0; i < bo->npages && bo->dma; i++)
		if (bo->dma[i] && !dma_mapping_error(dev, bo->dma[i]))
			dma_unmap_page(dev, bo->dma[i], PAGE_SIZE,
				       DMA_BIDIRECTIONAL);
	if (bo->kind == NNP_BO_KIND_USERPTR) {
		unpin_user_pages_dirty_lock(bo->pages, bo->npages, !bo->read_only);
	} else {
		for (i = 0; i < bo->npages; i++)
			if (bo->pages[i])
				__free_page(bo->pages[i]);
	}
	kvfree(bo->dma);
	kvfree(bo->pages);
}

/*
 * Count @bo's key against @nf's max_keys_per_file: the device's key table
 * is shared by every process, so one file must not take all of it.
 */
static int nnp_bo_charge_key(struct nnp_bo *bo, struct nnp_file *nf)
{
	if (atomic_inc_return(&nf->keys) > READ_ONCE(nnp_max_keys_per_file)) {
		atomic_dec(&nf->keys);
		return -EMFILE;
	}
	kref_get(&nf->ref);
	bo->owner = nf;
	return 0;
}

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

/* Give back what nnp_bo_charge_key() and nnp_bo_charge_pin() took. */
static void nnp_bo_uncharge(struct nnp_bo *bo)
{
	if (bo->pin_mm) {
		atomic64_sub(bo->base.size >> PAGE_SHIFT, &bo->pin_mm->pinned_vm);
		mmdrop(bo->pin_mm);
	}
	if (bo->owner) {
		atomic_dec(&bo->owner->keys);
		nnp_file_put(bo->owner);
	}
}

static void nnp_bo_free(struct drm_gem_object *obj)
{
	struct nnp_device *ndev = to_nnp(obj->dev);
	struct nnp_bo *bo = to_nnp_bo(obj);
	int idx;

	if (drm_dev_enter(obj->dev, &idx)) {
		if (bo->key && !nnp_bo_unregister(ndev, bo)) {
			/*
			 * A device that does not answer may still write the
			 * memory: keep it out of circulation rather than
			 * hand it to someone else.
			 */
			drm_warn(&ndev->drm,
				 "key 0x%x not released by the device: leaking %zu bytes\n",
				 bo->key, obj->size);
			drm_dev_exit(idx);
			/*
			 * The object stays, with its pages, charges and
			 * drm_mm node (nnp_mem_fini() drops that). A leak on
			 * purpose: kmemleak is told, and finds what the
			 * object holds (its pages, its file) referenced.
			 */
			atomic64_dec(&ndev->mem_objects);
			drm_gem_object_release(obj);
			kmemleak_not_leak(bo);
			return;
		}
		/* Nothing of one context may reach the next owner. */
		if (bo->kind == NNP_BO_KIND_DEVICE &&
		    drm_mm_node_allocated(&bo->node))
			memset_io(ndev->mem + bo->node.start, 0, bo->node.size);
		drm_dev_exit(idx);
	}
	/*
	 * Once unbound, the device was reset, and is again at the next
	 * probe: a reset zeroes device memory, so no scrub is needed here.
	 */

	switch (bo->kind) {
	case NNP_BO_KIND_DEVICE:
		if (drm_mm_node_allocated(&bo->node)) {
			mutex_lock(&ndev->mm_lock);
			ndev->mem_used -= bo->node.size;
			drm_mm_remove_node(&bo->node);
			mutex_unlock(&ndev->mm_lock);
		}
		break;
	case NNP_BO_KIND_HOST:
	case NNP_BO_KIND_USERPTR:
		if (bo->pages)
			nnp_bo_free_pages(ndev, bo);
		break;
	case NNP_BO_KIND_RING:
		if (bo->vaddr)
			dma_free_coherent(&ndev->pdev->dev, obj->size, bo->vaddr,
					  bo->ring_dma);
		break;
	case NNP_BO_KIND_DOORBELL:
		break;
	}
	nnp_bo_uncharge(bo);
	atomic64_dec(&ndev->mem_objects);
	drm_gem_object_release(obj);
	kfree(bo);
}

static int nnp_bo_remap(struct nnp_bo *bo, struct vm_area_struct *vma)
{
	struct nnp_device *ndev = to_nnp(bo->base.dev);
	struct pci_dev *pdev = ndev->pdev;
	unsigned long len = vma->vm_end - vma->vm_start;
	phys_addr_t phys;

	switch (bo->kind) {
	case NNP_BO_KIND_DEVICE:
		phys = pci_resource_start(pdev, NNP_BAR_MEM) + bo->node.start;
		vm_flags_set(vma, VM_IO | VM_PFNMAP);
		vma->vm_page_prot = pgprot_writecombine(vm_get_page_prot(vma->vm_flags));
		return io_remap_pfn_range(vma, vma->vm_start,
					  (phys >> PAGE_SHIFT) + vma->vm_pgoff,
					  len, vma->vm_page_prot);
	case NNP_BO_KIND_HOST:
		return vm_map_pages(vma, bo->pages, bo->npages);
	case NNP_BO_KIND_RING:
		return dma_mmap_coherent(&pdev->dev, vma, bo->vaddr, bo->ring_dma,
					 bo->base.size);
	case NNP_BO_KIND_DOORBELL:
		return nnp_queue_doorbell_mmap(bo, vma);
	case NNP_BO_KIND_USERPTR:
		break;
	}
	nnp_dbg(ndev, GEM,
		"mmap: a user pointer object has no mapping of its own\n");
	return -EINVAL;
}

static int nnp_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	unsigned long fake = vma->vm_pgoff;
	int ret, idx;

	/*
	 * An exported dma-buf outlives the binding that made the object, and
	 * after an unbind and rebind its range of BAR2 belongs to objects of
	 * the new binding. drm_gem_mmap() checks for this on the device node,
	 * but mmap() of the dma-buf comes here directly. The unbind waits for
	 * a mapping made here, then zaps it with every other.
	 */
	if (!drm_dev_enter(obj->dev, &idx))
		return -ENODEV;
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	/*
	 * The remap helpers want the page offset within the object, but the
	 * mapping must stay indexed at the fake offset, where
	 * drm_vma_node_unmap() looks for it when a queue's doorbell is
	 * revoked or the device goes away.
	 */
	vma->vm_pgoff -= drm_vma_node_start(&obj->vma_node);
	ret = nnp_bo_remap(to_nnp_bo(obj), vma);
	vma->vm_pgoff = fake;
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct nnp_bo_vm_ops = {
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

static const struct drm_gem_object_funcs nnp_bo_funcs = {
	.free = nnp_bo_free,
	.mmap = nnp_bo_mmap,
	.vm_ops = &nnp_bo_vm_ops,
};

static struct nnp_bo *nnp_bo_alloc(struct nnp_device *ndev,
				   enum nnp_bo_kind kind, size_t size)
{
	struct nnp_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->kind = kind;
	bo->base.funcs = &nnp_bo_funcs;
	drm_gem_private_object_init(&ndev->drm, &bo->base, size);
	atomic64_inc(&ndev->mem_objects);
	return bo;
}

/*
 * Let @file (and no other) mmap @bo, an object with no handle (a queue's
 * ring or doorbell): returns the offset to map at. The queue revokes it.
 */
int nnp_bo_allow(struct nnp_bo *bo, struct drm_file *file, u64 *mmap_offset)
{
	int ret = drm_gem_create_mmap_offset(&bo->base);

	if (ret)
		return ret;
	ret = drm_vma_node_allow(&bo->base.vma_node, file);
	if (ret)
		return ret;
	*mmap_offset = drm_vma_node_offset_addr(&bo->base.vma_node);
	return 0;
}

struct nnp_bo *nnp_bo_create_ring(struct nnp_device *ndev, size_t size)
{
	struct nnp_bo *bo = nnp_bo_alloc(ndev, NNP_BO_KIND_RING, size);

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

struct nnp_bo *nnp_bo_create_doorbell(struct nnp_device *ndev, u32 qid)
{
	struct nnp_bo *bo = nnp_bo_alloc(ndev, NNP_BO_KIND_DOORBELL, PAGE_SIZE);

	if (!IS_ERR(bo))
		bo->qid = qid;
	return bo;
}

/* Map every page for the device, as the firmware's page list needs. */
static int nnp_bo_map_pages(struct nnp_device *ndev, struct nnp_bo *bo)
{
	struct device *dev = &ndev->pdev->dev;
	unsigned int i;

	bo->dma = kvcalloc(bo->npages, sizeof(*bo->dma), NNP_GFP_HOST);
	if (!bo->dma)
		return -ENOMEM;
	for (i = 0; i < bo->npages; i++) {
		bo->dma[i] = dma_map_page(dev, bo->pages[i], 0, PAGE_SIZE,
					  DMA_BIDIRECTIONAL);
		if (dma_mapping_error(dev, bo->dma[i]))
			return -ENOMEM;
	}
	return 0;
}

static int nnp_bo_register(struct nnp_device *ndev, struct nnp_bo *bo,
			   u32 ctx, u64 length)
{
	struct nnp_hw_key_args a = {
		.ctx = cpu_to_le32(ctx),
		.rights = cpu_to_le32(NNP_KEY_READ |
				      (bo->read_only ? 0 : NNP_KEY_WRITE)),
		.length = cpu_to_le64(length),
	};
	struct device *dev = &ndev->pdev->dev;
	dma_addr_t list_dma = 0;
	__le64 *list = NULL;
	size_t list_len = 0;
	unsigned int i;
	int ret;

	if (bo->kind == NNP_BO_KIND_DEVICE) {
		a.type = cpu_to_le32(NNP_KEY_TYPE_DEVICE);
		a.dev_base = cpu_to_le64(bo->node.start);
	} else {
		a.type = cpu_to_le32(NNP_KEY_TYPE_HOST);
		a.page_offset = cpu_to_le32(bo->page_offset);
		list_len = bo->npages * sizeof(*list);
		list = dma_alloc_coherent(dev, list_len, &list_dma,
					  GFP_KERNEL | __GFP_NOWARN);
		if (!list)
			return -ENOMEM;
		for (i = 0; i < bo->npages; i++)
			list[i] = cpu_to_le64(bo->dma[i]);
	}
	ret = nnp_admin_run(ndev, NNP_ADMIN_KEY_REGISTER, &a,
			    offsetof(struct nnp_hw_key_args, rsvd), list_dma,
			    list_len, &bo->key);
	if (list)
		dma_free_coherent(dev, list_len, list, list_dma);
	if (ret) {
		bo->key = 0;
		return ret;
	}
	bo->ctx = ctx;
	return 0;
}

static int nnp_bo_alloc_device(struct nnp_device *ndev, struct nnp_bo *bo)
{
	int ret;

	mutex_lock(&ndev->mm_lock);
	ret = drm_mm_insert_node(&ndev->mm, &bo->node, bo->base.size);
	if (!ret)
		ndev->mem_used += bo->node.size;
	mutex_unlock(&ndev->mm_lock);
	return ret;
}

/*
 * Each run is split into single pages, so that mmap, DMA mapping and
 * freeing go page by page as for any page; an order that failed once is
 * not asked for again for this object.
 */
static int nnp_bo_alloc_host(struct nnp_device *ndev, struct nnp_bo *bo)
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
	return nnp_bo_map_pages(ndev, bo);
}

/* Hand @bo to @file as a handle; drops the creation reference. */
static int nnp_bo_publish(struct nnp_bo *bo, struct drm_file *file, u32 *handle)
{
	int ret = drm_gem_handle_create(file, &bo->base, handle);

	drm_gem_object_put(&bo->base);
	return ret;
}

int nnp_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_bo_create *args = data;
	u32 place = args->flags & (DRM_NNP_BO_DEVICE | DRM_NNP_BO_HOST);
	u64 size = PAGE_ALIGN(args->size);
	struct nnp_bo *bo;
	int ret;

	if (args->reserved) {
		nnp_dbg(ndev, GEM, "bo_create: reserved is 0x%x, not 0\n",
			args->reserved);
		return -EINVAL;
	}
	if (!args->size) {
		nnp_dbg(ndev, GEM, "bo_create: size 0\n");
		return -EINVAL;
	}
	if (args->flags & ~(DRM_NNP_BO_DEVICE | DRM_NNP_BO_HOST |
			    DRM_NNP_BO_READ_ONLY)) {
		nnp_dbg(ndev, GEM, "bo_create: unknown flags 0x%x\n",
			args->flags);
		return -EINVAL;
	}
	if (place != DRM_NNP_BO_DEVICE && place != DRM_NNP_BO_HOST) {
		nnp_dbg(ndev, GEM,
			"bo_create: flags 0x%x name not exactly one of DEVICE and HOST\n",
			args->flags);
		return -EINVAL;
	}
	if (size < args->size ||
	    size > (place == DRM_NNP_BO_DEVICE ? ndev->id.mem_size : NNP_BO_HOST_MAX))
		return -E2BIG;

	bo = nnp_bo_alloc(ndev, place == DRM_NNP_BO_DEVICE ?
			  NNP_BO_KIND_DEVICE : NNP_BO_KIND_HOST, size);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	bo->read_only = args->flags & DRM_NNP_BO_READ_ONLY;
	ret = nnp_bo_charge_key(bo, nf);
	if (!ret && place == DRM_NNP_BO_DEVICE)
		ret = nnp_bo_alloc_device(ndev, bo);
	else if (!ret)
		ret = nnp_bo_alloc_host(ndev, bo);
	if (!ret)
		ret = nnp_bo_register(ndev, bo, nf->ctx, size);
	/* The handle lets @file map it (and revokes that when closed). */
	if (!ret)
		ret = drm_gem_create_mmap_offset(&bo->base);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ret;
	}
	args->mmap_offset = drm_vma_node_offset_addr(&bo->base.vma_node);
	args->key = bo->key;
	return nnp_bo_publish(bo, file, &args->handle);
}

int nnp_ioctl_bo_userptr(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_bo_userptr *args = data;
	unsigned long start = args->user_ptr & PAGE_MASK;
	u32 offset = args->user_ptr & ~PAGE_MASK;
	unsigned int gup = FOLL_LONGTERM;
	struct nnp_bo *bo;
	u64 span;
	int ret, pinned;

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

	bo = nnp_bo_alloc(ndev, NNP_BO_KIND_USERPTR, span);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	bo->read_only = args->flags & DRM_NNP_BO_READ_ONLY;
	bo->page_offset = offset;
	ret = nnp_bo_charge_key(bo, nf);
	if (!ret)
		ret = nnp_bo_charge_pin(bo, span >> PAGE_SHIFT);
	if (ret)
		goto err;
	bo->pages = kvcalloc(span >> PAGE_SHIFT, sizeof(*bo->pages), NNP_GFP_HOST);
	if (!bo->pages) {
		ret = -ENOMEM;
		goto err;
	}
	if (!bo->read_only)
		gup |= FOLL_WRITE;
	pinned = pin_user_pages_fast(start, span >> PAGE_SHIFT, gup, bo->pages);
	if (pinned > 0)
		bo->npages = pinned;
	if (pinned != span >> PAGE_SHIFT) {
		ret = pinned < 0 ? pinned : -EFAULT;
		goto err;
	}
	ret = nnp_bo_map_pages(ndev, bo);
	if (!ret)
		ret = nnp_bo_register(ndev, bo, nf->ctx, args->size);
	if (ret)
		goto err;
	args->key = bo->key;
	return nnp_bo_publish(bo, file, &args->handle);
err:
	drm_gem_object_put(&bo->base);
	return ret;
}
