// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko communicators: a file makes its chip one rank of a ring over the
 * inter-chip links; the firmware runs collectives on it.
 */
#include <drm/drm_file.h>

#include "nnp_drv.h"
#include "nnp_accel.h"

int nnp_ioctl_comm_create(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_comm_create *args = data;
	struct nnp_hw_comm_args a = {
		.ctx = nf->ctx,
		.nranks = args->nranks,
		.rank = args->rank,
		.send_port = args->send_port,
		.recv_port = args->recv_port,
		.epoch = args->epoch,
	};
	int id, ret;

	if (args->flags || args->reserved || args->comm || !args->nranks ||
	    args->nranks > 0xffff || args->rank >= args->nranks ||
	    (args->nranks > 1 && (args->send_port >= ndev->id.num_ports ||
				  args->recv_port >= ndev->id.num_ports)))
		return -EINVAL;
	id = ida_alloc_range(&ndev->comm_ida, 1, NNP_HW_MAX_COMMS - 1, GFP_KERNEL);
	if (id < 0)
		return id;
	a.comm = id;
	ret = nnp_admin_run(ndev, NNP_ADMIN_COMM_CREATE, &a,
			    offsetof(struct nnp_hw_comm_args, rsvd), 0, 0, NULL);
	if (ret) {
		ida_free(&ndev->comm_ida, id);
		return ret;
	}
	set_bit(id, nf->comms);
	args->comm = id;
	return 0;
}

int nnp_ioctl_comm_destroy(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_comm_destroy *args = data;
	u32 a[2] = { nf->ctx, args->comm };

	if (args->flags)
		return -EINVAL;
	if (args->comm >= NNP_HW_MAX_COMMS ||
	    !test_and_clear_bit(args->comm, nf->comms))
		return -ENOENT;
	nnp_admin_run(ndev, NNP_ADMIN_COMM_DESTROY, a, sizeof(a), 0, 0, NULL);
	ida_free(&ndev->comm_ida, args->comm);
	return 0;
}

/* The file is closing: the firmware drops its communicators with its context. */
void nnp_comms_release(struct nnp_file *nf)
{
	unsigned int id;

	for_each_set_bit(id, nf->comms, NNP_HW_MAX_COMMS)
		ida_free(&nf->ndev->comm_ida, id);
}
