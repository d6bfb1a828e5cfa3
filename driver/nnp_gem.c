// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko memory objects: what every kind shares.
 *
 * Every object a process can name in a queue command is registered with
 * the firmware as a key of the process's context: device memory as a range
 * of BAR2 (allocated with drm_mm, scrubbed when freed), host memory and
 * pinned user memory as a list of page DMA addresses that only the kernel
 * and the firmware see. Freeing an object unregisters its key first; the
 * firmware answers only after every command using it has finished.
 *
 * What an object costs is charged to whoever made it: pinned user pages to
 * the caller's RLIMIT_MEMLOCK, host pages to its memory cgroup, its key to
 * the file's max_keys_per_file and the user's max_keys_per_user, and device
 * memory to the user's max_device_mem_per_user (nnp_limits.c), since the
 * device's key table and memory are shared.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>
#include <drm/drm_vma_manager.h>
#include <linux/kmemleak.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/pfn_t.h>
#include <linux/slab.h>

#include "nnp_drv.h"
#include "nnp_bo.h"
#include "nnp_accel.h"

static unsigned int nnp_max_keys_per_file = 1024;
module_param_named(max_keys_per_file, nnp_max_keys_per_file, uint, 0644);
MODULE_PARM_DESC(max_keys_per_file,
		 "Memory objects one open file may hold at once (the device has "
		 __stringify(NNP_HW_MAX_KEYS) " keys for all)");

/*
 * Every object is gone by now, except those whose key the device did not
 * give back (nnp_bo_release_key()). The device was reset when it was
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
bool nnp_bo_unregister(struct nnp_device *ndev, struct nnp_bo *bo)
{
	__le32 args[2] = { cpu_to_le32(bo->ctx), cpu_to_le32(bo->key) };
	int ret;

	ret = nnp_admin_run(ndev, NNP_ADMIN_KEY_UNREGISTER, args, sizeof(args),
			    0, 0, NULL);
	return !ret || ret == -ENOENT || ret == -ECANCELED;
}

/*
 * The first step of every kind's free: take @bo's key back. False if the
 * device kept it: then @bo is leaked here, on purpose, and the caller must
 * not touch it again.
 */
bool nnp_bo_release_key(struct nnp_bo *bo)
{
	struct drm_gem_object *obj = &bo->base;
	struct nnp_device *ndev = to_nnp(obj->dev);
	int idx;

	/*
	 * Once unbound, the device was reset, and is again at the next
	 * probe: every key is gone with it.
	 */
	if (!bo->key || !drm_dev_enter(obj->dev, &idx))
		return true;
	if (nnp_bo_unregister(ndev, bo)) {
		drm_dev_exit(idx);
		return true;
	}
	/*
	 * A device that does not answer may still write the memory: keep it
	 * out of circulation rather than hand it to someone else.
	 */
	drm_warn(&ndev->drm,
		 "key 0x%x not released by the device: leaking %zu bytes\n",
		 bo->key, obj->size);
	drm_dev_exit(idx);
	/*
	 * The object stays, with its pages, charges and drm_mm node
	 * (nnp_mem_fini() drops that). A leak on purpose: kmemleak is told,
	 * and finds what the object holds (its pages, its file) referenced.
	 */
	atomic64_dec(&ndev->mem_objects);
	drm_gem_object_release(obj);
	kmemleak_not_leak(bo);
	return false;
}

/* The last step of every kind's free, once its memory is given back. */
void nnp_bo_destroy(struct nnp_bo *bo)
{
	struct nnp_device *ndev = to_nnp(bo->base.dev);

	if (bo->owner) {
		atomic_dec(&bo->owner->keys);
		nnp_user_uncharge(bo->owner, NNP_LIMIT_KEYS);
		nnp_file_put(bo->owner);
	}
	atomic64_dec(&ndev->mem_objects);
	drm_gem_object_release(&bo->base);
	kfree(bo);
}

/*
 * Every kind's mmap: @remap maps @bo into @vma, which it sees indexed from
 * the object's start.
 */
int nnp_bo_mmap_with(struct drm_gem_object *obj, struct vm_area_struct *vma,
		     int (*remap)(struct nnp_bo *bo, struct vm_area_struct *vma))
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
	ret = remap(to_nnp_bo(obj), vma);
	vma->vm_pgoff = fake;
	drm_dev_exit(idx);
	return ret;
}

/*
 * Map the device's dummy page at @vmf: what a mapping of an unplugged
 * device's memory, or a doorbell a reset took, shows from then on. DRM's
 * unplug and reset contract (Documentation/gpu/drm-uapi.rst) wants their
 * loads and stores to complete, never SIGBUS: the user did nothing wrong.
 * The page lives as long as the drm_device, which the mapping's file (or
 * dma-buf) holds.
 */
vm_fault_t nnp_bo_fault_dummy(struct vm_fault *vmf, struct nnp_device *ndev)
{
	return vmf_insert_pfn(vmf->vma, vmf->address,
			      page_to_pfn(ndev->dummy_page));
}

/*
 * The fault of every kind mapped whole at mmap(): one comes only after
 * drm_dev_unplug() zapped every mapping of the device. Memory in the host
 * is mapped again as it was (@pfn_at gives the frame of the object's page
 * @i); the device's own memory (@pfn_at NULL) is gone, and the dummy page
 * stands in. With the device still there, it is a revoked mapping.
 */
vm_fault_t nnp_bo_fault_unplugged(struct vm_fault *vmf,
				  unsigned long (*pfn_at)(struct nnp_bo *bo,
							  pgoff_t i))
{
	struct vm_area_struct *vma = vmf->vma;
	struct nnp_bo *bo = to_nnp_bo(vma->vm_private_data);
	pgoff_t i = vmf->pgoff - drm_vma_node_start(&bo->base.vma_node);
	unsigned long pfn;
	int idx;

	if (drm_dev_enter(bo->base.dev, &idx)) {
		drm_dev_exit(idx);
		return VM_FAULT_SIGBUS;
	}
	if (!pfn_at)
		return nnp_bo_fault_dummy(vmf, to_nnp(bo->base.dev));
	if (i >= bo->base.size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;
	pfn = pfn_at(bo, i);
	if (vma->vm_flags & VM_PFNMAP)
		return vmf_insert_pfn(vma, vmf->address, pfn);
	return vmf_insert_mixed(vma, vmf->address, pfn_to_pfn_t(pfn));
}

const struct vm_operations_struct nnp_bo_vm_ops = {
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

struct nnp_bo *nnp_bo_alloc(struct nnp_device *ndev,
			    const struct drm_gem_object_funcs *funcs,
			    size_t size, bool read_only)
{
	struct nnp_bo *bo = kzalloc(sizeof(*bo), GFP_KERNEL);

	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->base.funcs = funcs;
	bo->read_only = read_only;
	INIT_LIST_HEAD(&bo->export_link);
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

/*
 * Count @bo's key against @nf's max_keys_per_file and its user's
 * max_keys_per_user: the device's key table is shared by every process,
 * so neither one file nor one user must take all of it.
 */
int nnp_bo_charge_key(struct nnp_bo *bo, struct nnp_file *nf)
{
	int ret;

	if (atomic_inc_return(&nf->keys) > READ_ONCE(nnp_max_keys_per_file)) {
		atomic_dec(&nf->keys);
		return -EMFILE;
	}
	ret = nnp_user_charge(nf, NNP_LIMIT_KEYS);
	if (ret) {
		atomic_dec(&nf->keys);
		return ret;
	}
	kref_get(&nf->ref);
	bo->owner = nf;
	return 0;
}

/*
 * Register @bo as a key of context @ctx; @a says where its memory is, and
 * for host pages, @list_dma holds their list.
 */
int nnp_bo_register(struct nnp_device *ndev, struct nnp_bo *bo, u32 ctx,
		    struct nnp_hw_key_args *a, dma_addr_t list_dma,
		    size_t list_len)
{
	int ret;

	a->ctx = cpu_to_le32(ctx);
	a->rights = cpu_to_le32(NNP_KEY_READ |
				(bo->read_only ? 0 : NNP_KEY_WRITE));
	ret = nnp_admin_run(ndev, NNP_ADMIN_KEY_REGISTER, a,
			    offsetof(struct nnp_hw_key_args, rsvd), list_dma,
			    list_len, &bo->key);
	if (ret) {
		bo->key = 0;
		return ret;
	}
	bo->ctx = ctx;
	return 0;
}

/* Hand @bo to @file as a handle; drops the creation reference. */
int nnp_bo_publish(struct nnp_bo *bo, struct drm_file *file, u32 *handle)
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
	bool read_only = args->flags & DRM_NNP_BO_READ_ONLY;
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

	if (place == DRM_NNP_BO_DEVICE)
		bo = nnp_bo_create_device(ndev, nf, size, read_only);
	else
		bo = nnp_bo_create_host(ndev, nf, size, read_only);
	if (IS_ERR(bo))
		return PTR_ERR(bo);
	/* The handle lets @file map it (and revokes that when closed). */
	ret = drm_gem_create_mmap_offset(&bo->base);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ret;
	}
	args->mmap_offset = drm_vma_node_offset_addr(&bo->base.vma_node);
	args->key = bo->key;
	return nnp_bo_publish(bo, file, &args->handle);
}
