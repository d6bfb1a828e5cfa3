// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko debugfs, in the accel minor's directory
 * (/sys/kernel/debug/accel/<minor>/): the admin ring, the queue table and
 * the communicators, as text (docs/debugging.md).
 */
#include <drm/drm_debugfs.h>
#include <drm/drm_file.h>
#include <linux/seq_file.h>

#include "nnp_drv.h"

static struct nnp_device *nnp_debugfs_dev(struct seq_file *m)
{
	struct drm_debugfs_entry *entry = m->private;

	return to_nnp(entry->dev);
}

/* Waits for the admin command in flight, if any: the ring is then idle. */
static int nnp_debugfs_admin_ring(struct seq_file *m, void *data)
{
	struct nnp_admin_queue *aq = &nnp_debugfs_dev(m)->aq;
	int ret;

	ret = mutex_lock_interruptible(&aq->lock);
	if (ret)
		return ret;
	seq_printf(m, "sq_tail %u\ncq_head %u\nphase %u\nnext_cid %u\nbroken %u\n",
		   aq->sq_tail, aq->cq_head, aq->phase, aq->next_cid, aq->broken);
	mutex_unlock(&aq->lock);
	return 0;
}

static int nnp_debugfs_queues(struct seq_file *m, void *data)
{
	nnp_queues_show(nnp_debugfs_dev(m), m);
	return 0;
}

static int nnp_debugfs_comms(struct seq_file *m, void *data)
{
	struct drm_device *drm = &nnp_debugfs_dev(m)->drm;
	struct drm_file *file;

	/* A file is on the list only between its open() and its close. */
	mutex_lock(&drm->filelist_mutex);
	list_for_each_entry(file, &drm->filelist, lhead)
		nnp_comms_show(file->driver_priv, m);
	mutex_unlock(&drm->filelist_mutex);
	return 0;
}

static const struct drm_debugfs_info nnp_debugfs_files[] = {
	{ "admin_ring", nnp_debugfs_admin_ring },
	{ "queues", nnp_debugfs_queues },
	{ "comms", nnp_debugfs_comms },
};

/* Before drm_dev_register(), which creates the files. */
void nnp_debugfs_init(struct nnp_device *ndev)
{
	drm_debugfs_add_files(&ndev->drm, nnp_debugfs_files,
			      ARRAY_SIZE(nnp_debugfs_files));
}
