// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko hang detection, reset and recovery.
 *
 * A watchdog runs every watchdog_ms / 4: it resets the device when the
 * firmware heartbeat has not moved for watchdog_ms, the firmware reports
 * HALTED, the admin queue failed or timed out, or a user queue with work
 * made no progress for job_timeout_ms (while not waiting on a link for
 * another chip). Each tick also wakes every waiter, so a lost interrupt
 * costs one tick, not a hang. What the device was doing goes to a
 * coredump first (nnp_coredump.c).
 *
 * A reset (nnp_reset()) marks every open context lost, gets the waiters
 * out, resets the device and starts its admin queue again; the queues of
 * the lost contexts have their doorbell and ring mappings revoked. From
 * then on the lost files' ioctls and mmap() fail with -ECANCELED until they
 * are closed, and new opens work at once. Files close as usual. A PCI
 * function reset and a system sleep are resets too, in two halves around
 * them (nnp_err_handlers, nnp_pm_ops).
 */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_managed.h>
#include <linux/gfp.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/pm.h>

#include "nnp_drv.h"
#include "nnp_accel.h"

static unsigned int nnp_watchdog_ms = 1000;
module_param_named(watchdog_ms, nnp_watchdog_ms, uint, 0644);
MODULE_PARM_DESC(watchdog_ms,
		 "Reset a device whose firmware heartbeat stops for this long (ms, 0: no watchdog, default 1000)");

static unsigned int nnp_job_timeout_ms = 10000;
module_param_named(job_timeout_ms, nnp_job_timeout_ms, uint, 0644);
MODULE_PARM_DESC(job_timeout_ms,
		 "Reset a device one of whose queues has work but makes no progress for this long (ms, 0: never, default 10000)");

/* The watchdog's tick: a quarter of its bound, at least 10 ms. */
static unsigned long nnp_watchdog_period(void)
{
	return msecs_to_jiffies(max(READ_ONCE(nnp_watchdog_ms) / 4, 10u));
}

const char *nnp_reset_reason_name(u32 reason)
{
	switch (reason) {
	case DRM_NNP_RESET_NONE:
		return "none";
	case DRM_NNP_RESET_HEARTBEAT:
		return "heartbeat";
	case DRM_NNP_RESET_JOB_TIMEOUT:
		return "job-timeout";
	case DRM_NNP_RESET_ADMIN:
		return "admin";
	case DRM_NNP_RESET_FW_HALTED:
		return "fw-halted";
	case DRM_NNP_RESET_USER:
		return "user";
	case DRM_NNP_RESET_PCI:
		return "pci";
	case DRM_NNP_RESET_SUSPEND:
		return "suspend";
	}
	return "unknown";
}

/* The heartbeat bound starts over: after probe and after each reset. */
static void nnp_heartbeat_rearm(struct nnp_device *ndev)
{
	ndev->last_heartbeat = nnp_rd(ndev, NNP_REG_FW_HEARTBEAT);
	ndev->heartbeat_seen = jiffies;
}

static void nnp_reset_uevent(struct nnp_device *ndev, u32 reason, int count)
{
	char reason_env[48], count_env[32];
	char *envp[4];

	envp[0] = "NNP_RESET=1";
	envp[1] = reason_env;
	envp[2] = count_env;
	envp[3] = NULL;
	snprintf(reason_env, sizeof(reason_env), "NNP_RESET_REASON=%s",
		 nnp_reset_reason_name(reason));
	snprintf(count_env, sizeof(count_env), "NNP_RESET_COUNT=%d", count);
	kobject_uevent_env(&ndev->drm.accel->kdev->kobj, KOBJ_CHANGE, envp);
}

/*
 * A reset's first half, under reset_lock: every file open now is lost,
 * waiters leave, the device stops and the lost files' queues lose their
 * doorbells.
 */
static void nnp_reset_begin(struct nnp_device *ndev, u32 reason)
{
	int count;

	WRITE_ONCE(ndev->resetting, true);
	count = atomic_inc_return(&ndev->resets);
	WRITE_ONCE(ndev->last_reset_reason, reason);
	ndev->reset_start = jiffies;
	nnp_dbg(ndev, RESET, "reset %d (%s): waiters leave, the device resets\n",
		count, nnp_reset_reason_name(reason));
	wake_up_all(&ndev->aq.wq);
	nnp_queues_wake_all(ndev);
	nnp_admin_stop(ndev);
	nnp_queues_lost(ndev);
}

/*
 * The second half, under reset_lock: the device boots again and new files
 * may use it. Returns 0, or the errno of a device that did not come back
 * (its admin queue then stays broken: every command fails -EIO).
 */
static int nnp_reset_end(struct nnp_device *ndev)
{
	u32 reason = ndev->last_reset_reason;
	int count = atomic_read(&ndev->resets);
	int ret;

	ret = nnp_admin_restart(ndev);
	nnp_heartbeat_rearm(ndev);
	WRITE_ONCE(ndev->resetting, false);
	wake_up_all(&ndev->reset_wq);
	/*
	 * The memory the device's exports named was reset with it, and its
	 * files lost their contexts: every importer lets go, as at unbind.
	 * Not sooner: an importer of this device's own memory unregisters
	 * its key by an admin command, which waits out a reset.
	 */
	nnp_exports_revoke(ndev);

	if (ret)
		drm_err(&ndev->drm, "reset %d (%s) failed: %d\n", count,
			nnp_reset_reason_name(reason), ret);
	else
		drm_info(&ndev->drm, "reset %d (%s) done in %u ms\n", count,
			 nnp_reset_reason_name(reason),
			 jiffies_to_msecs(jiffies - ndev->reset_start));
	nnp_reset_uevent(ndev, reason, count);
	nnp_events_reset(ndev, reason, count);
	return ret;
}

/*
 * Reset the device for @reason and bring it up again; call inside
 * drm_dev_enter(). Returns 0, -EBUSY while a PCI reset or a system sleep
 * holds the device down, or the errno of a device that did not come back.
 */
int nnp_reset(struct nnp_device *ndev, u32 reason)
{
	int ret = -EBUSY;

	mutex_lock(&ndev->reset_lock);
	if (!ndev->reset_held) {
		nnp_reset_begin(ndev, reason);
		ret = nnp_reset_end(ndev);
	}
	mutex_unlock(&ndev->reset_lock);
	return ret;
}

/* What, if anything, calls for a reset now; for a job timeout, which queue. */
static u32 nnp_watchdog_check(struct nnp_device *ndev, int *qid)
{
	unsigned int job_ms = READ_ONCE(nnp_job_timeout_ms);
	u32 hb = nnp_rd(ndev, NNP_REG_FW_HEARTBEAT);

	if (nnp_rd(ndev, NNP_REG_FW_STATUS) == NNP_FW_STATUS_HALTED)
		return DRM_NNP_RESET_FW_HALTED;
	if (READ_ONCE(ndev->aq.broken) ||
	    (nnp_rd(ndev, NNP_REG_AQ_STATUS) & NNP_AQ_STATUS_ERROR))
		return DRM_NNP_RESET_ADMIN;
	if (hb != ndev->last_heartbeat) {
		ndev->last_heartbeat = hb;
		ndev->heartbeat_seen = jiffies;
	} else if (time_after(jiffies, ndev->heartbeat_seen +
			      msecs_to_jiffies(READ_ONCE(nnp_watchdog_ms)))) {
		return DRM_NNP_RESET_HEARTBEAT;
	}
	if (job_ms) {
		*qid = nnp_queues_find_stuck(ndev, msecs_to_jiffies(job_ms));
		if (*qid >= 0) {
			drm_err(&ndev->drm, "queue %d made no progress in %u ms\n",
				*qid, job_ms);
			return DRM_NNP_RESET_JOB_TIMEOUT;
		}
	}
	return DRM_NNP_RESET_NONE;
}

static void nnp_watchdog_work(struct work_struct *work)
{
	struct nnp_device *ndev = container_of(to_delayed_work(work),
					       struct nnp_device, watchdog);
	int idx, qid = -1;
	u32 reason;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return;
	if (READ_ONCE(nnp_watchdog_ms)) {
		/* An interrupt the device lost must not leave anyone asleep. */
		wake_up_all(&ndev->aq.wq);
		nnp_queues_wake_all(ndev);
		reason = nnp_watchdog_check(ndev, &qid);
		if (reason) {
			drm_err(&ndev->drm, "%s: resetting the device\n",
				nnp_reset_reason_name(reason));
			nnp_coredump(ndev, reason, qid);
			nnp_reset(ndev, reason);
		}
	} else {
		nnp_heartbeat_rearm(ndev);
	}
	schedule_delayed_work(&ndev->watchdog, nnp_watchdog_period());
	drm_dev_exit(idx);
}

static void nnp_dummy_page_free(struct drm_device *drm, void *data)
{
	__free_page(data);
}

int nnp_reset_init(struct nnp_device *ndev)
{
	init_waitqueue_head(&ndev->reset_wq);
	INIT_DELAYED_WORK(&ndev->watchdog, nnp_watchdog_work);
	ndev->dummy_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!ndev->dummy_page)
		return -ENOMEM;
	/* Mappings hold the device: the page goes with the last of them. */
	if (drmm_add_action_or_reset(&ndev->drm, nnp_dummy_page_free,
				     ndev->dummy_page))
		return -ENOMEM;
	return drmm_mutex_init(&ndev->drm, &ndev->reset_lock);
}

/* Probe is done: the watchdog starts. */
void nnp_reset_start(struct nnp_device *ndev)
{
	nnp_heartbeat_rearm(ndev);
	schedule_delayed_work(&ndev->watchdog, nnp_watchdog_period());
}

/*
 * The PCI core's reset of the function (an FLR: sysfs "reset", VFIO) and
 * system sleep: the first half of a reset before, the second after, so that
 * they look to user space like any other reset. In between the device is
 * held down: no watchdog, nnp_reset() refused. The halves may run in
 * different threads (suspend and resume do), so no lock is held across.
 */
static void nnp_reset_hold(struct nnp_device *ndev, u32 reason)
{
	cancel_delayed_work_sync(&ndev->watchdog);
	mutex_lock(&ndev->reset_lock);
	ndev->reset_held = true;
	nnp_reset_begin(ndev, reason);
	mutex_unlock(&ndev->reset_lock);
}

static int nnp_reset_release(struct nnp_device *ndev)
{
	int ret;

	mutex_lock(&ndev->reset_lock);
	ret = nnp_reset_end(ndev);
	ndev->reset_held = false;
	mutex_unlock(&ndev->reset_lock);
	nnp_reset_start(ndev);
	return ret;
}

static void nnp_pci_reset_prepare(struct pci_dev *pdev)
{
	nnp_reset_hold(pci_get_drvdata(pdev), DRM_NNP_RESET_PCI);
}

static void nnp_pci_reset_done(struct pci_dev *pdev)
{
	nnp_reset_release(pci_get_drvdata(pdev));
}

const struct pci_error_handlers nnp_err_handlers = {
	.reset_prepare = nnp_pci_reset_prepare,
	.reset_done = nnp_pci_reset_done,
};

/*
 * Device memory does not survive a sleep (a device in D3cold loses it),
 * so neither do the contexts that use it: suspend stops the device and
 * resume boots it, as a reset for reason "suspend".
 */
static int nnp_pm_suspend(struct device *dev)
{
	nnp_reset_hold(dev_get_drvdata(dev), DRM_NNP_RESET_SUSPEND);
	return 0;
}

static int nnp_pm_resume(struct device *dev)
{
	return nnp_reset_release(dev_get_drvdata(dev));
}

DEFINE_SIMPLE_DEV_PM_OPS(nnp_pm_ops, nnp_pm_suspend, nnp_pm_resume);

/* remove(), once unplugged: the watchdog stops for good. */
void nnp_reset_fini(struct nnp_device *ndev)
{
	cancel_delayed_work_sync(&ndev->watchdog);
}
