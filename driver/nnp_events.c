// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko events: what a runtime would otherwise learn only at its next
 * call or by polling, delivered on the file as DRM events (read() and
 * poll() of the accel node): a reset of the device, a communicator of
 * the file failing, a link going down or up. The device queues its own
 * (hardware interface 1.17, GET_EVENTS) and raises FW_EVENT; a work item
 * takes them and hands each to the files it concerns. A file that does
 * not read keeps the newest that fit in DRM's event space, the oldest
 * kept counting those dropped before it.
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>

#include "nnp_drv.h"
#include "nnp_accel.h"
#include "nnp_admin.h"

/* GET_EVENTS takes this many at a time. */
#define NNP_EVENTS_BATCH	16

struct nnp_event {
	struct drm_pending_event base;	/* first: DRM frees it as such */
	struct drm_nnp_event ev;
};

static_assert(DRM_NNP_EVENTS_MAX == 4096 / sizeof(struct drm_nnp_event));

/* GET_EVENTS: hardware interface 1.17 on. */
bool nnp_has_events(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 17;
}

/*
 * Room for @len bytes more in @file's event space, with drm.event_lock
 * held: the oldest unread go, and the next oldest counts them.
 */
static void nnp_events_make_room(struct drm_file *file, u32 len)
{
	while (file->event_space < len && !list_empty(&file->event_list)) {
		struct nnp_event *old = list_first_entry(&file->event_list,
							 struct nnp_event,
							 base.link);
		u32 lost = old->ev.lost + 1;

		list_del(&old->base.link);
		file->event_space += old->ev.base.length;
		kfree(old);
		if (list_empty(&file->event_list))
			((struct nnp_file *)file->driver_priv)->events_lost += lost;
		else
			list_first_entry(&file->event_list, struct nnp_event,
					 base.link)->ev.lost += lost;
	}
}

/* A copy of @tmpl to @file; from process context. */
static void nnp_event_send(struct drm_file *file,
			   const struct drm_nnp_event *tmpl)
{
	struct drm_device *drm = file->minor->dev;
	struct nnp_file *nf = file->driver_priv;
	struct nnp_event *e = kzalloc(sizeof(*e), GFP_KERNEL);
	unsigned long flags;

	spin_lock_irqsave(&drm->event_lock, flags);
	if (!e) {
		nf->events_lost++;
		goto out;
	}
	e->ev = *tmpl;
	e->ev.base.length = sizeof(e->ev);
	nnp_events_make_room(file, sizeof(e->ev));
	if (drm_event_reserve_init_locked(drm, file, &e->base, &e->ev.base)) {
		kfree(e);
		nf->events_lost++;
		goto out;
	}
	/* What went with no event left to count it on. */
	e->ev.lost += nf->events_lost;
	nf->events_lost = 0;
	drm_send_event_locked(drm, &e->base);
out:
	spin_unlock_irqrestore(&drm->event_lock, flags);
}

/*
 * @tmpl to every open file, or (COMM_FAILED) to the one of context @ctx
 * that has the communicator.
 */
static void nnp_events_deliver(struct nnp_device *ndev,
			       struct drm_nnp_event *tmpl, u32 ctx)
{
	struct drm_file *file;

	mutex_lock(&ndev->drm.filelist_mutex);
	list_for_each_entry(file, &ndev->drm.filelist, lhead) {
		struct nnp_file *nf = file->driver_priv;

		if (tmpl->base.type == DRM_NNP_EVENT_COMM_FAILED &&
		    (nf->ctx != ctx || !test_bit(tmpl->comm, nf->comms)))
			continue;
		nnp_event_send(file, tmpl);
	}
	mutex_unlock(&ndev->drm.filelist_mutex);
}

/*
 * The reset is done: every file open learns of it, then of what the
 * device queued since (the links the reset took down and booting brought
 * up), whose FW_EVENT restarting the admin queue cleared.
 */
void nnp_events_reset(struct nnp_device *ndev, u32 reason, int count)
{
	struct drm_nnp_event ev = {
		.base.type = DRM_NNP_EVENT_RESET,
		.time_ns = ktime_get_ns(),
		.reason = reason,
		.count = count,
	};

	nnp_events_deliver(ndev, &ev, 0);
	nnp_events_irq(ndev);
}

/*
 * One of the device's, in its byte order. What the device dropped before
 * it, every file may have missed: each file's copy counts it.
 */
static void nnp_events_from_device(struct nnp_device *ndev,
				   const struct nnp_hw_event *h)
{
	struct drm_nnp_event ev = {
		.time_ns = ktime_get_ns(),
		.lost = le32_to_cpu(h->lost),
		.port = le16_to_cpu(h->port),
	};

	switch (le16_to_cpu(h->kind)) {
	case NNP_HW_EVENT_COMM_FAILED:
		ev.base.type = DRM_NNP_EVENT_COMM_FAILED;
		ev.reason = le16_to_cpu(h->status);
		ev.comm = le32_to_cpu(h->comm);
		if (ev.comm >= NNP_HW_MAX_COMMS)
			return;
		break;
	case NNP_HW_EVENT_LINK:
		ev.base.type = DRM_NNP_EVENT_LINK;
		ev.state = le16_to_cpu(h->state);
		break;
	default:
		return;
	}
	nnp_events_deliver(ndev, &ev, le32_to_cpu(h->ctx));
}

/* Take every event the device holds; hand each on if @deliver. */
static void nnp_events_take(struct nnp_device *ndev, bool deliver)
{
	struct nnp_hw_event *h = kcalloc(NNP_EVENTS_BATCH, sizeof(*h),
					 GFP_KERNEL);
	u32 result, i;

	while (h) {
		result = 0;
		if (nnp_admin_read(ndev, NNP_ADMIN_GET_EVENTS, h,
				   NNP_EVENTS_BATCH * sizeof(*h), &result) ||
		    !result)
			break;
		for (i = 0; deliver && i < result / sizeof(*h); i++)
			nnp_events_from_device(ndev, &h[i]);
	}
	kfree(h);
}

/*
 * Take and hand on what the device holds, one taker at a time: the events
 * work, or a closing file whose context is gone from the device. That one
 * waits for a delivery under way and takes what the device queued before
 * (its communicators' failures; it is no longer among the receivers), so
 * that its context and communicator ids, once a new file's, are not told
 * of a failure that is not that file's.
 */
void nnp_events_drain(struct nnp_device *ndev)
{
	if (!nnp_has_events(ndev))
		return;
	mutex_lock(&ndev->events_lock);
	nnp_events_take(ndev, true);
	mutex_unlock(&ndev->events_lock);
}

static void nnp_events_work(struct work_struct *work)
{
	struct nnp_device *ndev = container_of(work, struct nnp_device,
					       events_work);
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return;
	nnp_events_drain(ndev);
	drm_dev_exit(idx);
}

/*
 * At probe, once IDENTIFY told the version: what the device queued
 * before (its links coming up at boot, or anything a driver bound before
 * left) is no news to the files to come.
 */
void nnp_events_start(struct nnp_device *ndev)
{
	if (nnp_has_events(ndev))
		nnp_events_take(ndev, false);
}

/* From the admin vector's handler: the device has events to take. */
void nnp_events_irq(struct nnp_device *ndev)
{
	if (nnp_has_events(ndev))
		schedule_work(&ndev->events_work);
}

void nnp_events_init(struct nnp_device *ndev)
{
	INIT_WORK(&ndev->events_work, nnp_events_work);
	mutex_init(&ndev->events_lock);
}

/* remove(), once unplugged. */
void nnp_events_fini(struct nnp_device *ndev)
{
	cancel_work_sync(&ndev->events_work);
	mutex_destroy(&ndev->events_lock);
}
