// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko user queues: rings in coherent DMA memory and a doorbell page,
 * both mapped by the owning process only, which then submits with no
 * system call. The kernel creates and destroys queues through the admin
 * queue, routes each queue's MSI-X vector to its waiters, and lets the
 * owner sleep until a completion arrives.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_vma_manager.h>
#include <linux/interrupt.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "nnp_drv.h"
#include "nnp_bo.h"
#include "nnp_coredump.h"
#include "nnp_accel.h"
#include "nnp_trace.h"

struct nnp_queue {
	struct kref ref;	/* the queue table's, and each waiter's */
	struct nnp_device *ndev;
	struct nnp_file *owner;
	struct drm_file *file;	/* the owner's, for revoking its mappings */
	u32 qid;
	u32 depth;
	u32 cq_offset;
	u32 shadow_offset;	/* of the shadow doorbell in @ring; 0: none */
	struct nnp_bo *ring;
	struct nnp_bo *doorbell;
	wait_queue_head_t wq;
	int irq;
	/* Complete: found by id only from then on. Under queue_lock. */
	bool ready;
	/* The firmware has (or may have) the queue: destroy it there first. */
	bool fw_owned;
	bool dead;		/* destroyed: waiters leave */
	/* The job timeout's view (watchdog only): SQ head, since when. */
	u32 wd_head;
	unsigned long wd_since;
};

static irqreturn_t nnp_queue_irq(int irq, void *data)
{
	struct nnp_queue *q = data;

	trace_nnp_queue_irq(q->ndev, q->qid);
	wake_up_all(&q->wq);
	return IRQ_HANDLED;
}

static bool nnp_has_irq_arm(struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 9;
}

static bool nnp_has_shadow(struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 11;
}

/*
 * The words the device reads before it raises a queue's vector, used from
 * hardware 1.9 on. Made before the admin queue: devres undoes in reverse,
 * so they are freed only after the unbind's reset has stopped the device,
 * which may still write them for the queues of files left open.
 */
int nnp_queues_init(struct nnp_device *ndev)
{
	ndev->irq_arm = dmam_alloc_coherent(&ndev->pdev->dev,
					    NNP_HW_MAX_QUEUES * sizeof(__le32),
					    &ndev->irq_arm_dma, GFP_KERNEL);
	return ndev->irq_arm ? 0 : -ENOMEM;
}

static const struct nnp_hw_cqe *nnp_queue_cq(struct nnp_queue *q)
{
	return q->ring->vaddr + q->cq_offset;
}

static bool nnp_queue_stopped(struct nnp_queue *q)
{
	u32 st = nnp_rd(q->ndev, NNP_DOORBELL(q->qid) + NNP_DB_STATUS);

	return st & NNP_QUEUE_STATUS_ERROR;
}

static void nnp_queue_free(struct kref *ref)
{
	struct nnp_queue *q = container_of(ref, struct nnp_queue, ref);

	if (q->doorbell)
		drm_gem_object_put(&q->doorbell->base);
	if (q->ring)
		drm_gem_object_put(&q->ring->base);
	kfree(q);
}

static void nnp_queue_put(struct nnp_queue *q)
{
	kref_put(&q->ref, nnp_queue_free);
}

/*
 * The doorbell page is mapped when it is first touched, not by mmap(): a
 * fault runs only on a mapping that drm_vma_node_unmap() can find, and
 * checks the page's revoked flag under queue_lock. So once a destroy has
 * set the flag and unmapped, no mapping of it rings anything again, even
 * one whose mmap() raced the destroy. A page a reset took, or any page
 * of an unplugged device, is the dummy page instead (nnp_bo_fault_dummy()):
 * the owner did nothing wrong; its calls say ECANCELED or ENODEV.
 */
static vm_fault_t nnp_doorbell_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct nnp_bo *bo = to_nnp_bo(vma->vm_private_data);
	struct nnp_device *ndev = to_nnp(bo->base.dev);
	vm_fault_t ret = VM_FAULT_SIGBUS;
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return nnp_bo_fault_dummy(vmf, ndev);
	mutex_lock(&ndev->queue_lock);
	if (bo->lost)
		ret = nnp_bo_fault_dummy(vmf, ndev);
	else if (!bo->revoked)
		ret = vmf_insert_pfn(vma, vma->vm_start,
				     (pci_resource_start(ndev->pdev, NNP_BAR_REGS) +
				      NNP_DOORBELL(bo->qid)) >> PAGE_SHIFT);
	mutex_unlock(&ndev->queue_lock);
	drm_dev_exit(idx);
	return ret;
}

const struct vm_operations_struct nnp_doorbell_vm_ops = {
	.fault = nnp_doorbell_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

int nnp_queue_doorbell_mmap(struct nnp_bo *bo, struct vm_area_struct *vma)
{
	/* One shared page: a private (copy-on-write) PFN map is a bug. */
	if (vma->vm_pgoff || vma->vm_end - vma->vm_start != PAGE_SIZE ||
	    !(vma->vm_flags & VM_SHARED)) {
		nnp_dbg(to_nnp(bo->base.dev), QUEUE,
			"doorbell mmap: %lu bytes at page %lu, %s: not one shared page at 0\n",
			vma->vm_end - vma->vm_start, vma->vm_pgoff,
			vma->vm_flags & VM_SHARED ? "shared" : "private");
		return -EINVAL;
	}
	vm_flags_set(vma, VM_IO | VM_PFNMAP);
	vma->vm_page_prot = pgprot_noncached(vm_get_page_prot(vma->vm_flags));
	return 0;
}

/*
 * Take @q's ring and doorbell out of reach: the owner can map neither
 * again, and its doorbell mappings ring nothing from now on.
 */
static void nnp_queue_revoke(struct nnp_queue *q)
{
	struct nnp_device *ndev = q->ndev;

	if (q->ring)
		drm_vma_node_revoke(&q->ring->base.vma_node, q->file);
	if (!q->doorbell)
		return;
	drm_vma_node_revoke(&q->doorbell->base.vma_node, q->file);
	mutex_lock(&ndev->queue_lock);
	q->doorbell->revoked = true;
	mutex_unlock(&ndev->queue_lock);
	drm_vma_node_unmap(&q->doorbell->base.vma_node,
			   ndev->drm.anon_inode->i_mapping);
}

/*
 * Destroy @q in the firmware; true once the device no longer reads or
 * writes its rings (QUEUE_DESTROY returns after its command in flight).
 * An unplugged device is reset by the unbind: wait for that.
 */
static bool nnp_queue_fw_release(struct nnp_queue *q)
{
	struct nnp_device *ndev = q->ndev;
	__le32 args[2] = { cpu_to_le32(q->owner->ctx), cpu_to_le32(q->qid) };
	int idx, ret;

	if (!q->fw_owned)
		return true;
	if (!drm_dev_enter(&ndev->drm, &idx)) {
		nnp_admin_wait_quiesced(ndev);
		return true;
	}
	ret = nnp_admin_run(ndev, NNP_ADMIN_QUEUE_DESTROY, args, sizeof(args),
			    0, 0, NULL);
	drm_dev_exit(idx);
	/* ECANCELED: a reset dropped it, and is over. */
	if (!ret || ret == -ENOENT || ret == -ECANCELED)
		return true;
	drm_err(&ndev->drm,
		"queue %u not released by the device (%d): keeping its rings and id\n",
		q->qid, ret);
	return false;
}

/*
 * Stop queue @q, already taken off the owner's reach (or never published):
 * its mappings are revoked, then the firmware lets go of it, then the
 * interrupt. A queue the device did not let go of keeps its rings and its
 * id for good: the device may still write there or ring that id.
 */
static void nnp_queue_destroy(struct nnp_queue *q)
{
	struct nnp_device *ndev = q->ndev;
	bool released;

	nnp_queue_revoke(q);
	released = nnp_queue_fw_release(q);
	WRITE_ONCE(q->dead, true);
	wake_up_all(&q->wq);
	mutex_lock(&ndev->queue_lock);
	if (q->irq > 0)
		free_irq(q->irq, q);
	q->irq = 0;
	if (released)
		ndev->queues[q->qid] = NULL;
	mutex_unlock(&ndev->queue_lock);
	nnp_user_uncharge(q->owner, NNP_LIMIT_QUEUES);
	if (released)
		nnp_queue_put(q);
}

static int nnp_queue_alloc_id(struct nnp_device *ndev, struct nnp_queue *q)
{
	unsigned int i;
	int ret = -EBUSY;

	mutex_lock(&ndev->queue_lock);
	for (i = 0; i < ndev->num_queues; i++) {
		if (!ndev->queues[i]) {
			ndev->queues[i] = q;
			q->qid = i;
			ret = 0;
			break;
		}
	}
	mutex_unlock(&ndev->queue_lock);
	return ret;
}

static int nnp_queue_setup(struct nnp_device *ndev, struct nnp_queue *q,
			   struct drm_file *file, struct drm_nnp_queue_create *args)
{
	struct nnp_hw_queue_args a = {
		.ctx = cpu_to_le32(q->owner->ctx),
		.qid = cpu_to_le32(q->qid),
		.depth = cpu_to_le32(q->depth),
		.vector = cpu_to_le32(NNP_VECTOR_QUEUE(q->qid)),
	};
	size_t sq_size = (size_t)q->depth * sizeof(struct nnp_hw_queue_cmd);
	size_t args_len = offsetof(struct nnp_hw_queue_args, irq_arm);
	size_t size, shadow_offset = 0;
	int ret;

	q->cq_offset = PAGE_ALIGN(sq_size);
	size = q->cq_offset + (size_t)q->depth * sizeof(struct nnp_hw_cqe);
	if ((args->flags & DRM_NNP_QUEUE_SHADOW_DOORBELL) && nnp_has_shadow(ndev)) {
		/* A cache line of its own after the CQ, which the device writes. */
		shadow_offset = ALIGN(size, SMP_CACHE_BYTES);
		size = shadow_offset + sizeof(struct nnp_hw_queue_shadow);
	}
	size = PAGE_ALIGN(size);
	q->ring = nnp_bo_create_ring(ndev, size);
	if (IS_ERR(q->ring)) {
		ret = PTR_ERR(q->ring);
		q->ring = NULL;
		return ret;
	}
	q->doorbell = nnp_bo_create_doorbell(ndev, q->qid);
	if (IS_ERR(q->doorbell)) {
		ret = PTR_ERR(q->doorbell);
		q->doorbell = NULL;
		return ret;
	}
	ret = nnp_bo_allow(q->ring, file, &args->ring_mmap_offset);
	if (!ret)
		ret = nnp_bo_allow(q->doorbell, file, &args->doorbell_mmap_offset);
	if (ret)
		return ret;

	q->irq = pci_irq_vector(ndev->pdev, NNP_VECTOR_QUEUE(q->qid));
	ret = request_irq(q->irq, nnp_queue_irq, 0, "nnp-queue", q);
	if (ret) {
		q->irq = 0;
		return ret;
	}

	a.sq_base = cpu_to_le64(q->ring->ring_dma);
	a.cq_base = cpu_to_le64(q->ring->ring_dma + q->cq_offset);
	if (nnp_has_irq_arm(ndev)) {
		/* A word an earlier queue of this id left set costs one irq. */
		WRITE_ONCE(ndev->irq_arm[q->qid], 0);
		a.irq_arm = cpu_to_le64(ndev->irq_arm_dma +
					q->qid * sizeof(__le32));
		args_len = sizeof(a);
	}
	ret = nnp_admin_run(ndev, NNP_ADMIN_QUEUE_CREATE, &a, args_len,
			    shadow_offset ? q->ring->ring_dma + shadow_offset : 0,
			    shadow_offset ? sizeof(struct nnp_hw_queue_shadow) : 0,
			    NULL);
	/* Unless the firmware refused it, it may hold the queue now. */
	q->fw_owned = ret == 0 || ret == -ETIMEDOUT || ret == -EIO;
	if (ret)
		return ret;
	args->qid = q->qid;
	args->cq_offset = q->cq_offset;
	args->ring_size = size;
	args->shadow_offset = shadow_offset;
	q->shadow_offset = shadow_offset;
	return 0;
}

int nnp_ioctl_queue_create(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct drm_nnp_queue_create *args = data;
	struct nnp_queue *q;
	int ret;

	if ((args->flags & ~DRM_NNP_QUEUE_SHADOW_DOORBELL) || args->qid ||
	    args->cq_offset || args->shadow_offset || args->pad) {
		nnp_dbg(ndev, QUEUE,
			"queue_create: flags 0x%x, qid %u, cq_offset %u, shadow_offset %u, pad %u: not all 0\n",
			args->flags, args->qid, args->cq_offset,
			args->shadow_offset, args->pad);
		return -EINVAL;
	}
	if (args->depth < NNP_HW_QUEUE_DEPTH_MIN ||
	    args->depth > NNP_HW_QUEUE_DEPTH_MAX || !is_power_of_2(args->depth)) {
		nnp_dbg(ndev, QUEUE,
			"queue_create: depth %u not a power of 2 in %u..%u\n",
			args->depth, NNP_HW_QUEUE_DEPTH_MIN,
			NNP_HW_QUEUE_DEPTH_MAX);
		return -EINVAL;
	}

	ret = nnp_user_charge(file->driver_priv, NNP_LIMIT_QUEUES);
	if (ret)
		return ret;
	q = kzalloc(sizeof(*q), GFP_KERNEL);
	if (!q) {
		nnp_user_uncharge(file->driver_priv, NNP_LIMIT_QUEUES);
		return -ENOMEM;
	}
	kref_init(&q->ref);
	q->ndev = ndev;
	q->owner = file->driver_priv;
	q->file = file;
	q->depth = args->depth;
	q->wd_since = jiffies;
	init_waitqueue_head(&q->wq);
	ret = nnp_queue_alloc_id(ndev, q);
	if (ret) {
		nnp_user_uncharge(q->owner, NNP_LIMIT_QUEUES);
		kfree(q);
		return ret;
	}
	/* The id is taken but the queue is not findable until it is complete. */
	ret = nnp_queue_setup(ndev, q, file, args);
	if (ret) {
		nnp_queue_destroy(q);
		return ret;
	}
	mutex_lock(&ndev->queue_lock);
	q->ready = true;
	mutex_unlock(&ndev->queue_lock);
	return 0;
}

/* @q if it is complete, alive and @nf's. Under queue_lock. */
static bool nnp_queue_is_owned(struct nnp_queue *q, struct nnp_file *nf)
{
	lockdep_assert_held(&nf->ndev->queue_lock);
	return q && q->ready && !q->dead && q->owner == nf;
}

/*
 * The queue @qid if @file owns it, with a reference; with @take it is also
 * taken out of the table so that nobody else finds it.
 */
static struct nnp_queue *nnp_queue_get(struct nnp_device *ndev,
				       struct drm_file *file, u32 qid, bool take)
{
	struct nnp_queue *q = NULL;

	mutex_lock(&ndev->queue_lock);
	if (qid < ndev->num_queues &&
	    nnp_queue_is_owned(ndev->queues[qid], file->driver_priv)) {
		q = ndev->queues[qid];
		if (take)
			q->dead = true;
		else
			kref_get(&q->ref);
	}
	mutex_unlock(&ndev->queue_lock);
	return q;
}

int nnp_ioctl_queue_destroy(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct drm_nnp_queue_op *args = data;
	struct nnp_queue *q;

	if (args->flags) {
		nnp_dbg(to_nnp(drm), QUEUE, "queue_destroy: flags 0x%x, not 0\n",
			args->flags);
		return -EINVAL;
	}
	q = nnp_queue_get(to_nnp(drm), file, args->qid, true);
	if (!q)
		return -ENOENT;
	nnp_queue_destroy(q);
	return 0;
}

int nnp_ioctl_queue_reset(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct drm_nnp_queue_op *args = data;
	struct nnp_queue *q;
	__le32 a[2];

	int ret;

	if (args->flags) {
		nnp_dbg(to_nnp(drm), QUEUE, "queue_reset: flags 0x%x, not 0\n",
			args->flags);
		return -EINVAL;
	}
	q = nnp_queue_get(to_nnp(drm), file, args->qid, false);
	if (!q)
		return -ENOENT;
	a[0] = cpu_to_le32(q->owner->ctx);
	a[1] = cpu_to_le32(q->qid);
	ret = nnp_admin_run(q->ndev, NNP_ADMIN_QUEUE_RESET, a, sizeof(a), 0, 0,
			    NULL);
	/* Old completions must not pass for new ones on the first pass. */
	if (!ret)
		memset(q->ring->vaddr + q->cq_offset, 0,
		       (size_t)q->depth * sizeof(struct nnp_hw_cqe));
	nnp_queue_put(q);
	return ret;
}

static bool nnp_queue_done(struct nnp_queue *q, u32 index, u32 phase)
{
	return (le16_to_cpu(READ_ONCE(nnp_queue_cq(q)[index].phase)) &
		NNP_CQE_PHASE) == phase;
}

/* Whatever ends a QUEUE_WAIT: the completion, or a reason it won't come. */
static bool nnp_queue_wait_over(struct nnp_queue *q,
				const struct drm_nnp_queue_wait *w)
{
	return nnp_queue_done(q, w->cq_index, w->phase) || nnp_queue_stopped(q) ||
	       READ_ONCE(q->dead) || READ_ONCE(q->ndev->unplugging) ||
	       nnp_file_lost(q->owner);
}

/*
 * The wait's condition, checked before each sleep: first ask the device
 * to interrupt on the next completions, then look. The barrier orders the
 * word's write before the ring's read, as the device orders its CQE's
 * write before the word's read: either the device sees the word set, or
 * this read sees its completion.
 */
static bool nnp_queue_armed_wait_over(struct nnp_queue *q,
				      const struct drm_nnp_queue_wait *w)
{
	if (nnp_has_irq_arm(q->ndev)) {
		WRITE_ONCE(q->ndev->irq_arm[q->qid], cpu_to_le32(1));
		/* The word's write before the CQ's read (see above). */
		mb();
	}
	return nnp_queue_wait_over(q, w);
}

int nnp_ioctl_queue_wait(struct drm_device *drm, void *data,
			 struct drm_file *file)
{
	struct drm_nnp_queue_wait *args = data;
	struct nnp_queue *q;
	long left, timeout;

	int ret;

	if (args->flags || args->phase > 1 || args->timeout_ns < 0) {
		nnp_dbg(to_nnp(drm), QUEUE,
			"queue_wait: flags 0x%x (want 0), phase %u (want 0 or 1), timeout %lld ns (want >= 0)\n",
			args->flags, args->phase, args->timeout_ns);
		return -EINVAL;
	}
	q = nnp_queue_get(to_nnp(drm), file, args->qid, false);
	if (!q)
		return -ENOENT;
	if (args->cq_index >= q->depth) {
		nnp_dbg(q->ndev, QUEUE,
			"queue_wait: cq_index %u past queue %u's depth %u\n",
			args->cq_index, q->qid, q->depth);
		nnp_queue_put(q);
		return -EINVAL;
	}

	timeout = min_t(u64, nsecs_to_jiffies64(args->timeout_ns),
			MAX_SCHEDULE_TIMEOUT - 1);
	trace_nnp_queue_wait_begin(q->ndev, q->qid, args->cq_index, args->phase,
				   args->timeout_ns);
	left = wait_event_interruptible_timeout(q->wq,
						nnp_queue_armed_wait_over(q, args),
						timeout);
	if (nnp_file_lost(q->owner))
		ret = -ECANCELED;
	else if (nnp_queue_done(q, args->cq_index, args->phase))
		ret = 0;
	else if (READ_ONCE(q->ndev->unplugging))
		ret = -ENODEV;
	else if (READ_ONCE(q->dead))
		ret = -ENOENT;
	else if (left < 0)
		ret = -EINTR;
	else if (nnp_queue_stopped(q))
		ret = -EIO;
	else
		ret = -ETIMEDOUT;
	trace_nnp_queue_wait_end(q->ndev, q->qid, args->cq_index, ret);
	nnp_queue_put(q);
	return ret;
}

/* Destroy every queue of @nf: its file is being closed. */
void nnp_queues_release(struct nnp_file *nf)
{
	struct nnp_device *ndev = nf->ndev;
	unsigned int i;

	for (i = 0; i < ndev->num_queues; i++) {
		struct nnp_queue *q = NULL;

		mutex_lock(&ndev->queue_lock);
		if (nnp_queue_is_owned(ndev->queues[i], nf)) {
			q = ndev->queues[i];
			q->dead = true;
		}
		mutex_unlock(&ndev->queue_lock);
		if (q)
			nnp_queue_destroy(q);
	}
}

/* remove(): get every waiter out before the device goes. */
void nnp_queues_wake_all(struct nnp_device *ndev)
{
	unsigned int i;

	mutex_lock(&ndev->queue_lock);
	for (i = 0; i < ndev->num_queues; i++)
		if (ndev->queues[i])
			wake_up_all(&ndev->queues[i]->wq);
	mutex_unlock(&ndev->queue_lock);
}

/*
 * A reset dropped every queue in the device: none is the firmware's any
 * more, and their owners (lost files) can map neither doorbell nor ring
 * again, and their doorbell mappings ring nothing (a dummy page); the
 * rings stay mapped, host memory the device no longer reads. Each queue
 * goes when its file is closed.
 */
void nnp_queues_lost(struct nnp_device *ndev)
{
	unsigned int i;

	for (i = 0; i < ndev->num_queues; i++) {
		struct nnp_queue *q;

		mutex_lock(&ndev->queue_lock);
		q = ndev->queues[i];
		if (q) {
			kref_get(&q->ref);
			q->fw_owned = false;
			if (q->doorbell)
				q->doorbell->lost = true;
		}
		mutex_unlock(&ndev->queue_lock);
		if (!q)
			continue;
		nnp_queue_revoke(q);
		wake_up_all(&q->wq);
		nnp_queue_put(q);
	}
}

/*
 * The device holds the queue's next command back only because its owner
 * has not taken the completions (CQ full: the CQ tail, which is the SQ
 * head, one behind CQ_HEAD) and runs nothing of it. The uapi lets CQ_HEAD
 * lag, and a stopped or debugged owner leaves it so: the owner's stall,
 * not a hung device.
 */
static bool nnp_queue_owner_stalled(struct nnp_queue *q, u32 head, u32 st)
{
	u32 cq_head = nnp_rd(q->ndev, NNP_DOORBELL(q->qid) + NNP_DB_CQ_HEAD);

	return !(st & NNP_QUEUE_STATUS_BUSY) && (head + 1) % q->depth == cq_head;
}

/*
 * The job timeout, from the watchdog: the first queue that has work (SQ
 * head behind the tail), is neither stopped, nor waiting on a link, nor
 * held back by its owner, and whose SQ head has not moved for @timeout;
 * -1 if none.
 */
int nnp_queues_find_stuck(struct nnp_device *ndev, unsigned long timeout)
{
	int stuck = -1;
	unsigned int i;

	mutex_lock(&ndev->queue_lock);
	for (i = 0; i < ndev->num_queues && stuck < 0; i++) {
		struct nnp_queue *q = ndev->queues[i];
		u32 db = NNP_DOORBELL(i), head, st;

		if (!q || !q->ready || !q->fw_owned)
			continue;
		head = nnp_rd(ndev, db + NNP_DB_SQ_HEAD);
		st = nnp_rd(ndev, db + NNP_DB_STATUS);
		if (head == nnp_rd(ndev, db + NNP_DB_SQ_TAIL) ||
		    head != q->wd_head || !(st & NNP_QUEUE_STATUS_ENABLED) ||
		    (st & (NNP_QUEUE_STATUS_ERROR | NNP_QUEUE_STATUS_WAITING)) ||
		    nnp_queue_owner_stalled(q, head, st)) {
			q->wd_head = head;
			q->wd_since = jiffies;
		} else if (time_after(jiffies, q->wd_since + timeout)) {
			stuck = i;
		}
	}
	mutex_unlock(&ndev->queue_lock);
	return stuck;
}

/*
 * The device is gone and was reset: the queues it never confirmed
 * destroyed (kept with their rings and ids) can go now, and must, since
 * their objects hold mmap offsets that the DRM core takes down next.
 */
void nnp_queues_fini(struct drm_device *drm, void *data)
{
	struct nnp_device *ndev = data;
	unsigned int i;

	for (i = 0; i < NNP_HW_MAX_QUEUES; i++) {
		if (ndev->queues[i])
			nnp_queue_put(ndev->queues[i]);
		ndev->queues[i] = NULL;
	}
}

/*
 * remove(), after unplugging: the MSI-X vectors go with the binding, so
 * queues whose files are still open give their interrupts back now.
 */
void nnp_queues_detach_irqs(struct nnp_device *ndev)
{
	unsigned int i;

	mutex_lock(&ndev->queue_lock);
	for (i = 0; i < ndev->num_queues; i++) {
		struct nnp_queue *q = ndev->queues[i];

		if (q && q->irq > 0) {
			free_irq(q->irq, q);
			q->irq = 0;
		}
	}
	mutex_unlock(&ndev->queue_lock);
}

/* For debugfs: one line per queue in the table, including half-made ones. */
void nnp_queues_show(struct nnp_device *ndev, struct seq_file *m)
{
	unsigned int i;

	mutex_lock(&ndev->queue_lock);
	for (i = 0; i < ndev->num_queues; i++) {
		struct nnp_queue *q = ndev->queues[i];

		if (!q)
			continue;
		seq_printf(m, "qid %u depth %u ready %u fw_owned %u dead %u",
			   q->qid, q->depth, q->ready, q->fw_owned, q->dead);
		/* A dead queue's owner may have closed and gone. */
		if (!q->dead)
			seq_printf(m, " ctx %u", q->owner->ctx);
		seq_putc(m, '\n');
	}
	mutex_unlock(&ndev->queue_lock);
}

/*
 * For the coredump: @q's commands around its SQ head, up to three done
 * before it, the one at it, up to four queued after it, as far as the
 * ring holds them. The ring is the owner's memory: what it wrote is
 * copied, never trusted for more than its numbers.
 */
static u32 nnp_queue_dump_cmds(struct nnp_queue *q, u32 head, u32 tail,
			       struct nnp_coredump_cmd *out)
{
	const struct nnp_hw_queue_cmd *sq = q->ring->vaddr;
	u32 queued = (tail + q->depth - head) % q->depth;
	u32 done = min(3u, q->depth - 1 - queued);
	u32 i, n = 0;

	for (i = 0; i < done + min(queued, 5u); i++) {
		u32 slot = (head + q->depth - done + i) % q->depth;
		struct nnp_coredump_cmd *c = &out[n];
		struct nnp_hw_queue_cmd cmd;

		memcpy(&cmd, &sq[slot], sizeof(cmd));
		/* A slot before the head that was never written. */
		if (i < done && !memchr_inv(&cmd, 0, sizeof(cmd)))
			continue;
		c->slot = slot;
		c->state = i < done ? NNP_COREDUMP_CMD_DONE :
			   i == done ? NNP_COREDUMP_CMD_RUNNING :
			   NNP_COREDUMP_CMD_QUEUED;
		c->opcode = cmd.opcode;
		c->flags = cmd.flags;
		c->cid = le16_to_cpu(cmd.cid);
		c->src_key = le32_to_cpu(cmd.src_key);
		c->dst_key = le32_to_cpu(cmd.dst_key);
		c->src_off = le64_to_cpu(cmd.src_off);
		c->dst_off = le64_to_cpu(cmd.dst_off);
		c->len = le64_to_cpu(cmd.len);
		/* A fill's value is its data. */
		c->value = cmd.opcode == NNP_CMD_FILL ? 0 : le64_to_cpu(cmd.value);
		n++;
	}
	return n;
}

/* The shadow doorbell's words, which the owner and the device write. */
static void nnp_queue_dump_shadow(struct nnp_queue *q,
				  struct nnp_coredump_queue *d)
{
	const struct nnp_hw_queue_shadow *sh;

	d->shadow_tail = NNP_COREDUMP_NONE;
	d->shadow_event = NNP_COREDUMP_NONE;
	if (!q->shadow_offset)
		return;
	sh = q->ring->vaddr + q->shadow_offset;
	d->shadow_tail = le32_to_cpu(READ_ONCE(sh->sq_tail));
	d->shadow_event = le32_to_cpu(READ_ONCE(sh->sq_event));
}

/*
 * The tail the device works to: the shadow's, which the owner may write
 * without ringing, else the doorbell's.
 */
static u32 nnp_queue_dump_tail(struct nnp_queue *q,
			       const struct nnp_coredump_queue *d)
{
	return q->shadow_offset ? d->shadow_tail : d->sq_tail;
}

/*
 * For the coredump: every queue of the table, its doorbell registers and
 * its last commands, into @out (room for NNP_HW_MAX_QUEUES); returns how
 * many.
 */
u32 nnp_queues_dump(struct nnp_device *ndev, struct nnp_coredump_queue *out)
{
	unsigned int i;
	u32 n = 0;

	mutex_lock(&ndev->queue_lock);
	for (i = 0; i < ndev->num_queues; i++) {
		struct nnp_queue *q = ndev->queues[i];
		struct nnp_coredump_queue *d = &out[n];
		u32 db = NNP_DOORBELL(i);

		if (!q || !q->ready)
			continue;
		d->qid = q->qid;
		d->depth = q->depth;
		d->sq_head = nnp_rd(ndev, db + NNP_DB_SQ_HEAD);
		d->sq_tail = nnp_rd(ndev, db + NNP_DB_SQ_TAIL);
		d->cq_head = nnp_rd(ndev, db + NNP_DB_CQ_HEAD);
		d->status = nnp_rd(ndev, db + NNP_DB_STATUS);
		nnp_queue_dump_shadow(q, d);
		if (d->sq_head != nnp_queue_dump_tail(q, d))
			d->idle_ms = jiffies_to_msecs(jiffies - q->wd_since);
		/* A dead queue's owner may have closed and gone. */
		if (!q->dead) {
			d->ctx = q->owner->ctx;
			d->pid = nnp_file_owner(q->file, &init_pid_ns, d->task,
						sizeof(d->task));
		}
		if (d->sq_head < q->depth && nnp_queue_dump_tail(q, d) < q->depth)
			d->num_cmds = nnp_queue_dump_cmds(q, d->sq_head,
							  nnp_queue_dump_tail(q, d),
							  d->cmds);
		n++;
	}
	mutex_unlock(&ndev->queue_lock);
	return n;
}
