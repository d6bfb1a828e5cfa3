// SPDX-License-Identifier: GPL-2.0-only
/*
 * The view of every communicator on the device (DRM_NNP_QUERY_COMMS), for
 * a user whose job hangs: whose it is, and where it stands, which only the
 * firmware knows (COMM_STATE, hardware interface 1.18): the collective it
 * is in, and the port and rank it waits for. A caller sees the files
 * opened under its own effective uid, as it may read its own processes'
 * fdinfo; with CAP_SYS_ADMIN every file's. Others' are only counted.
 */
#include <drm/drm_file.h>
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uidgid.h>

#include "nnp_drv.h"
#include "nnp_accel.h"
#include "nnp_coredump.h"

static_assert(sizeof(struct drm_nnp_comm_info) == DRM_NNP_COMM_INFO_SIZE_V1);
static_assert(sizeof(struct drm_nnp_comms) == DRM_NNP_COMMS_SIZE_V1);
static_assert(DRM_NNP_MAX_COMMS == NNP_HW_MAX_COMMS);
static_assert(NNP_HW_COMM_NO_RANK == DRM_NNP_COMM_NONE);
static_assert(NNP_HW_COMM_NO_PORT == DRM_NNP_COMM_NONE);

/* COMM_STATE: hardware interface 1.18 on. */
static bool nnp_has_comm_state(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 18;
}

/* What the firmware says of communicator @c->comm of context @ctx. */
static void nnp_comm_view_state(struct nnp_device *ndev, u32 ctx,
				struct drm_nnp_comm_info *c)
{
	__le32 args[2] = { cpu_to_le32(ctx), cpu_to_le32(c->comm) };
	struct nnp_hw_comm_state s;

	if (!nnp_has_comm_state(ndev) ||
	    nnp_admin_read_args(ndev, NNP_ADMIN_COMM_STATE, args, sizeof(args),
				&s, sizeof(s), NULL))
		return;
	c->flags |= DRM_NNP_COMM_INFO_STATE;
	c->epoch = le64_to_cpu(s.epoch);
	c->status = le32_to_cpu(s.status);
	c->calls = le32_to_cpu(s.calls);
	c->calls_done = le32_to_cpu(s.calls_done);
	c->messages = le32_to_cpu(s.messages);
	c->bytes = le64_to_cpu(s.bytes);
	c->opcode = s.opcode;
	c->dtype = s.dtype;
	c->op = s.op;
	c->peer = le32_to_cpu(s.peer);
	c->count = le64_to_cpu(s.count);
	c->wait_port = le32_to_cpu(s.wait_port);
	c->wait_rank = le32_to_cpu(s.wait_rank);
	c->wait_ns = le64_to_cpu(s.wait_ns);
}

/*
 * @file's communicators as the caller sees them, into @v->comm from
 * @v->num_comms on, and their contexts into @ctx alike; or counted in
 * @v->hidden.
 */
static void nnp_comm_view_file(struct drm_file *file, bool all,
			       struct drm_nnp_comms *v,
			       struct nnp_coredump_comm *tmp, u32 *ctx)
{
	const struct cred *cred = file->filp ? file->filp->f_cred : NULL;
	char task[TASK_COMM_LEN];
	u32 i, n, pid;

	n = nnp_comms_dump(file->driver_priv, 0, tmp,
			   DRM_NNP_MAX_COMMS - v->num_comms);
	if (!cred || (!all && !uid_eq(cred->euid, current_euid()))) {
		v->hidden += n;
		return;
	}
	pid = nnp_file_owner(file, task_active_pid_ns(current), task,
			     sizeof(task));
	for (i = 0; i < n; i++) {
		struct drm_nnp_comm_info *c = &v->comm[v->num_comms];

		ctx[v->num_comms++] = tmp[i].ctx;
		c->comm = tmp[i].id;
		c->pid = pid;
		c->uid = from_kuid_munged(current_user_ns(), cred->euid);
		strscpy(c->task, task, sizeof(c->task));
		memcpy(c->name, tmp[i].name, sizeof(c->name));
		c->rank = tmp[i].rank;
		c->nranks = tmp[i].nranks;
		c->peer = DRM_NNP_COMM_NONE;
		c->wait_port = DRM_NNP_COMM_NONE;
		c->wait_rank = DRM_NNP_COMM_NONE;
	}
}

/*
 * Fill @v (zeroed by the caller). The files are listed under the DRM
 * file list's lock, the firmware asked after it: no admin command waits
 * under it.
 */
int nnp_comms_view(struct nnp_device *ndev, struct drm_nnp_comms *v)
{
	struct nnp_coredump_comm *tmp;
	struct drm_file *file;
	bool all = capable(CAP_SYS_ADMIN);
	u32 ctx[DRM_NNP_MAX_COMMS], i;

	tmp = kcalloc(DRM_NNP_MAX_COMMS, sizeof(*tmp), GFP_KERNEL);
	if (!tmp)
		return -ENOMEM;
	v->entry_size = sizeof(v->comm[0]);
	mutex_lock(&ndev->drm.filelist_mutex);
	list_for_each_entry(file, &ndev->drm.filelist, lhead)
		nnp_comm_view_file(file, all, v, tmp, ctx);
	mutex_unlock(&ndev->drm.filelist_mutex);
	kfree(tmp);
	for (i = 0; i < v->num_comms; i++)
		nnp_comm_view_state(ndev, ctx[i], &v->comm[i]);
	return 0;
}
