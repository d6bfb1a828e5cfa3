// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko communicators: a file makes its chip one rank of a ring over the
 * inter-chip links; the firmware runs collectives on it.
 */
#include <linux/dma-mapping.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include <drm/drm_file.h>

#include "nnp_drv.h"
#include "nnp_accel.h"
#include "nnp_coredump.h"

/*
 * Whether the device knows interface 1.4's communicator words (timeout,
 * abort, status): before it, it takes them for reserved ones.
 */
static bool nnp_comm_v14(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 4;
}

/*
 * Run COMM_CREATE with the ring order, copied from user space into memory
 * the device reads (the device checks it is a permutation of the ranks).
 */
static int nnp_comm_create_ring(struct nnp_device *ndev,
				const struct nnp_hw_comm_args *a, u64 ring)
{
	struct device *dev = &ndev->pdev->dev;
	u32 len = le32_to_cpu(a->nranks) * sizeof(u32);
	dma_addr_t dma;
	void *buf;
	int ret;

	if (!ring)
		return nnp_admin_run(ndev, NNP_ADMIN_COMM_CREATE, a, sizeof(*a),
				     0, 0, NULL);
	buf = dma_alloc_coherent(dev, len, &dma, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (copy_from_user(buf, u64_to_user_ptr(ring), len))
		ret = -EFAULT;
	else
		ret = nnp_admin_run(ndev, NNP_ADMIN_COMM_CREATE, a, sizeof(*a),
				    dma, len, NULL);
	dma_free_coherent(dev, len, buf, dma);
	return ret;
}

/* Whether the device knows interface 1.22's transit communicators. */
static bool nnp_comm_v122(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 22;
}

/*
 * Whether a transit's words are wrong (the device checks them again): it
 * is no rank, has no ring order and passes between two ports.
 */
static bool nnp_comm_transit_bad(const struct drm_nnp_comm_create *args)
{
	return args->rank || args->ring || args->nranks < 2 ||
	       args->send_port == args->recv_port;
}

/* What fdinfo says of a communicator. */
struct nnp_comm_label {
	u32 rank, nranks;
	char name[DRM_NNP_COMM_NAME_MAX];
};

/*
 * A name fdinfo may print to anyone who reads it: ASCII letters, digits,
 * '.', '-' and '_' up to a NUL within its bytes, so no terminal control,
 * no newline to fake another key, nothing to mistake for a separator
 * (isalnum() would pass Latin-1 letters too).
 */
static bool nnp_comm_name_ok(const char *name)
{
	size_t i;

	for (i = 0; i < DRM_NNP_COMM_NAME_MAX && name[i]; i++) {
		char c = name[i];

		if (!(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') &&
		    !(c >= '0' && c <= '9') && c != '.' && c != '-' && c != '_')
			return false;
	}
	return i < DRM_NNP_COMM_NAME_MAX;
}

static struct nnp_comm_label *nnp_comm_label_new(const struct drm_nnp_comm_create *args)
{
	struct nnp_comm_label *l = kzalloc(sizeof(*l), GFP_KERNEL);

	if (l) {
		l->rank = args->flags & DRM_NNP_COMM_CREATE_TRANSIT ?
			  DRM_NNP_COMM_NONE : args->rank;
		l->nranks = args->nranks;
		memcpy(l->name, args->name, sizeof(l->name));
	}
	return l;
}

static void nnp_comm_label_set(struct nnp_file *nf, unsigned int id,
			       struct nnp_comm_label *l)
{
	mutex_lock(&nf->comm_lock);
	kfree(nf->comm_labels[id]);
	nf->comm_labels[id] = l;
	mutex_unlock(&nf->comm_lock);
}

int nnp_ioctl_comm_create(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_comm_create *args = data;
	struct nnp_hw_comm_args a = {
		.ctx = cpu_to_le32(nf->ctx),
		.nranks = cpu_to_le32(args->nranks),
		.rank = cpu_to_le32(args->rank),
		.send_port = cpu_to_le32(args->send_port),
		.recv_port = cpu_to_le32(args->recv_port),
		.epoch = cpu_to_le64(args->epoch),
		.timeout_ms = cpu_to_le32(args->timeout_ms),
		.flags = cpu_to_le32(args->flags),
	};
	bool transit = args->flags & DRM_NNP_COMM_CREATE_TRANSIT;
	struct nnp_comm_label *label;
	int id, ret;

	if ((args->flags & ~DRM_NNP_COMM_CREATE_TRANSIT) || args->pad ||
	    args->comm) {
		nnp_dbg(ndev, COMM,
			"comm_create: flags 0x%x, pad 0x%x, comm %u: unknown or not 0\n",
			args->flags, args->pad, args->comm);
		return -EINVAL;
	}
	if (transit && nnp_comm_transit_bad(args)) {
		nnp_dbg(ndev, COMM,
			"comm_create: a transit of rank %u, ring %s, %u ranks, ports %u and %u\n",
			args->rank, args->ring ? "given" : "none", args->nranks,
			args->send_port, args->recv_port);
		return -EINVAL;
	}
	if (!args->nranks || args->nranks > NNP_HW_MAX_RANKS) {
		nnp_dbg(ndev, COMM, "comm_create: nranks %u not in 1..%u\n",
			args->nranks, NNP_HW_MAX_RANKS);
		return -EINVAL;
	}
	if (args->rank >= args->nranks) {
		nnp_dbg(ndev, COMM, "comm_create: rank %u of only %u ranks\n",
			args->rank, args->nranks);
		return -EINVAL;
	}
	if (args->nranks > 1 && (args->send_port >= ndev->id.num_ports ||
				 args->recv_port >= ndev->id.num_ports)) {
		nnp_dbg(ndev, COMM,
			"comm_create: send port %u or receive port %u of only %u ports\n",
			args->send_port, args->recv_port, ndev->id.num_ports);
		return -EINVAL;
	}
	if (!nnp_comm_name_ok(args->name)) {
		nnp_dbg(ndev, COMM, "comm_create: a name of other bytes, or no NUL\n");
		return -EINVAL;
	}
	if ((args->timeout_ms && !nnp_comm_v14(ndev)) ||
	    (transit && !nnp_comm_v122(ndev)))
		return -EOPNOTSUPP;
	label = nnp_comm_label_new(args);
	if (!label)
		return -ENOMEM;
	ret = nnp_user_charge(nf, NNP_LIMIT_COMMS);
	if (ret)
		goto err_label;
	id = ida_alloc_range(&ndev->comm_ida, 1, NNP_HW_MAX_COMMS - 1, GFP_KERNEL);
	if (id < 0) {
		ret = id;
		goto err_charge;
	}
	a.comm = cpu_to_le32(id);
	ret = nnp_comm_create_ring(ndev, &a, args->ring);
	if (ret)
		goto err_id;
	nnp_comm_label_set(nf, id, label);
	set_bit(id, nf->comms);
	args->comm = id;
	return 0;
err_id:
	ida_free(&ndev->comm_ida, id);
err_charge:
	nnp_user_uncharge(nf, NNP_LIMIT_COMMS);
err_label:
	kfree(label);
	return ret;
}

int nnp_ioctl_comm_destroy(struct drm_device *drm, void *data,
			   struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_comm_destroy *args = data;
	__le32 a[3] = { cpu_to_le32(nf->ctx), cpu_to_le32(args->comm), 0 };

	if (args->flags & ~DRM_NNP_COMM_DESTROY_ABORT) {
		nnp_dbg(ndev, COMM, "comm_destroy: unknown flags 0x%x\n",
			args->flags);
		return -EINVAL;
	}
	if (args->flags && !nnp_comm_v14(ndev))
		return -EOPNOTSUPP;
	if (args->flags & DRM_NNP_COMM_DESTROY_ABORT)
		a[2] = cpu_to_le32(NNP_HW_COMM_DESTROY_ABORT);
	if (args->comm >= NNP_HW_MAX_COMMS ||
	    !test_and_clear_bit(args->comm, nf->comms))
		return -ENOENT;
	nnp_admin_run(ndev, NNP_ADMIN_COMM_DESTROY, a, sizeof(a), 0, 0, NULL);
	nnp_comm_label_set(nf, args->comm, NULL);
	ida_free(&ndev->comm_ida, args->comm);
	nnp_user_uncharge(nf, NNP_LIMIT_COMMS);
	return 0;
}

/*
 * The firmware's status of communicator @comm of context @ctx: its first
 * failed command's NNP_STATUS_*, 0 if none.
 */
int nnp_comm_status(struct nnp_device *ndev, u32 ctx, u32 comm, u32 *status)
{
	__le32 a[2] = { cpu_to_le32(ctx), cpu_to_le32(comm) };

	if (!nnp_comm_v14(ndev))
		return -EOPNOTSUPP;
	return nnp_admin_run(ndev, NNP_ADMIN_COMM_STATUS, a, sizeof(a), 0, 0,
			     status);
}

int nnp_ioctl_comm_status(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_comm_status *args = data;

	if (args->flags || args->pad) {
		nnp_dbg(ndev, COMM, "comm_status: flags 0x%x, pad 0x%x: not 0\n",
			args->flags, args->pad);
		return -EINVAL;
	}
	if (args->comm >= NNP_HW_MAX_COMMS || !test_bit(args->comm, nf->comms))
		return -ENOENT;
	return nnp_comm_status(ndev, nf->ctx, args->comm, &args->status);
}

/* COMM_TOPOLOGY: hardware interface 1.7 on; a 1.6 device lacks the opcode. */
static bool nnp_comm_v17(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 7;
}

/*
 * A ring dimension the device may be given, in its byte order; false (and
 * why, at dbg_mask COMM) if a field is one the device would refuse.
 */
static bool nnp_comm_dim(struct nnp_device *ndev, unsigned int i,
			 const struct drm_nnp_ring_dim *d,
			 struct nnp_hw_ring_dim *h)
{
	unsigned int k;

	if (d->pad) {
		nnp_dbg(ndev, COMM, "comm_topology: dim[%u] pad 0x%x: not 0\n",
			i, d->pad);
		return false;
	}
	if (d->n && (d->n > NNP_HW_MAX_RANKS || d->pos >= d->n ||
		     !d->pairs || d->pairs > ARRAY_SIZE(d->next_port))) {
		nnp_dbg(ndev, COMM,
			"comm_topology: dim[%u] n %u, pos %u, pairs %u: want pos < n <= %u, 1 or 2 pairs\n",
			i, d->n, d->pos, d->pairs, NNP_HW_MAX_RANKS);
		return false;
	}
	h->n = cpu_to_le32(d->n);
	h->pos = cpu_to_le32(d->pos);
	h->pairs = cpu_to_le32(d->pairs);
	for (k = 0; k < ARRAY_SIZE(d->next_port); k++) {
		/* Ports of pairs it does not have: the device reads none. */
		bool used = d->n && k < d->pairs;

		if (used && (d->next_port[k] >= ndev->id.num_ports ||
			     d->prev_port[k] >= ndev->id.num_ports)) {
			nnp_dbg(ndev, COMM,
				"comm_topology: dim[%u] pair %u ports %u, %u of only %u ports\n",
				i, k, d->next_port[k], d->prev_port[k],
				ndev->id.num_ports);
			return false;
		}
		h->next_port[k] = cpu_to_le32(used ? d->next_port[k] : 0);
		h->prev_port[k] = cpu_to_le32(used ? d->prev_port[k] : 0);
	}
	return true;
}

/*
 * COMM_TOPOLOGY names the communicator by (context, id), like COMM_STATUS:
 * a COMM_DESTROY racing it from another thread of the file makes the
 * device answer NOT_FOUND (ENOENT), and an id made again meanwhile is this
 * file's own communicator. Nothing here outlives the call.
 */
int nnp_ioctl_comm_topology(struct drm_device *drm, void *data,
			    struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_comm_topology *args = data;
	__le32 a[2] = { cpu_to_le32(nf->ctx), cpu_to_le32(args->comm) };
	struct device *dev = &ndev->pdev->dev;
	struct nnp_hw_comm_topology h = { .algo = cpu_to_le32(args->algo) };
	struct nnp_hw_comm_topology *t;
	unsigned int i;
	dma_addr_t dma;
	int ret;

	if (args->flags || args->pad) {
		nnp_dbg(ndev, COMM, "comm_topology: flags 0x%x, pad 0x%x: not 0\n",
			args->flags, args->pad);
		return -EINVAL;
	}
	if (args->algo > DRM_NNP_ALGO_TORUS) {
		nnp_dbg(ndev, COMM, "comm_topology: unknown algorithm %u\n",
			args->algo);
		return -EINVAL;
	}
	if (!args->dim[0].n && args->dim[1].n) {
		nnp_dbg(ndev, COMM, "comm_topology: dim[1] without dim[0]\n");
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(args->dim); i++)
		if (!nnp_comm_dim(ndev, i, &args->dim[i], &h.dim[i]))
			return -EINVAL;
	if (args->comm >= NNP_HW_MAX_COMMS || !test_bit(args->comm, nf->comms))
		return -ENOENT;
	if (!nnp_comm_v17(ndev))
		return -EOPNOTSUPP;
	t = dma_alloc_coherent(dev, sizeof(*t), &dma, GFP_KERNEL);
	if (!t)
		return -ENOMEM;
	*t = h;
	ret = nnp_admin_run(ndev, NNP_ADMIN_COMM_TOPOLOGY, a, sizeof(a), dma,
			    sizeof(*t), NULL);
	/* A device that did not answer may still read @t: keep it. */
	if (ret != -ETIMEDOUT)
		dma_free_coherent(dev, sizeof(*t), t, dma);
	return ret;
}

/* COMM_ROUTES: hardware interface 1.12 on. */
static bool nnp_comm_v112(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 12;
}

/* Whether each of the @n routes at @r names a port of the chip, or none. */
static bool nnp_routes_ok(struct nnp_device *ndev, const u8 *r, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (r[i] != DRM_NNP_ROUTE_NONE && r[i] >= ndev->id.num_ports) {
			nnp_dbg(ndev, COMM,
				"comm_routes: rank %u's port %u of only %u ports\n",
				i, r[i], ndev->id.num_ports);
			return false;
		}
	}
	return true;
}

/*
 * COMM_ROUTES names the communicator by (context, id), as COMM_TOPOLOGY
 * does; the table is copied into a buffer the device reads, and checked
 * there, so that a thread changing it meanwhile changes nothing checked.
 */
int nnp_ioctl_comm_routes(struct drm_device *drm, void *data,
			  struct drm_file *file)
{
	struct nnp_device *ndev = to_nnp(drm);
	struct nnp_file *nf = file->driver_priv;
	struct drm_nnp_comm_routes *args = data;
	__le32 a[2] = { cpu_to_le32(nf->ctx), cpu_to_le32(args->comm) };
	struct device *dev = &ndev->pdev->dev;
	dma_addr_t dma;
	int ret;
	u8 *r;

	if (args->flags || args->pad) {
		nnp_dbg(ndev, COMM, "comm_routes: flags 0x%x, pad 0x%x: not 0\n",
			args->flags, args->pad);
		return -EINVAL;
	}
	if (!args->nranks || args->nranks > NNP_HW_MAX_RANKS) {
		nnp_dbg(ndev, COMM, "comm_routes: nranks %u: want 1 to %u\n",
			args->nranks, NNP_HW_MAX_RANKS);
		return -EINVAL;
	}
	if (args->comm >= NNP_HW_MAX_COMMS || !test_bit(args->comm, nf->comms))
		return -ENOENT;
	if (!nnp_comm_v112(ndev))
		return -EOPNOTSUPP;
	r = dma_alloc_coherent(dev, args->nranks, &dma, GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	if (copy_from_user(r, u64_to_user_ptr(args->routes), args->nranks))
		ret = -EFAULT;
	else if (!nnp_routes_ok(ndev, r, args->nranks))
		ret = -EINVAL;
	else
		ret = nnp_admin_run(ndev, NNP_ADMIN_COMM_ROUTES, a, sizeof(a),
				    dma, args->nranks, NULL);
	/* A device that did not answer may still read @r: keep it. */
	if (ret != -ETIMEDOUT)
		dma_free_coherent(dev, args->nranks, r, dma);
	return ret;
}

/* The file is closing: the firmware drops its communicators with its context. */
void nnp_comms_release(struct nnp_file *nf)
{
	unsigned int id;

	for_each_set_bit(id, nf->comms, NNP_HW_MAX_COMMS) {
		nnp_comm_label_set(nf, id, NULL);
		ida_free(&nf->ndev->comm_ida, id);
		nnp_user_uncharge(nf, NNP_LIMIT_COMMS);
	}
}

/*
 * For fdinfo: a key for each communicator of @nf, its id in the key,
 * "rank/nranks" ("-/nranks" for a transit, no rank) and its name, if
 * any, as the value.
 */
void nnp_comms_fdinfo(struct nnp_file *nf, struct drm_printer *p)
{
	unsigned int id;

	mutex_lock(&nf->comm_lock);
	for (id = 0; id < NNP_HW_MAX_COMMS; id++) {
		const struct nnp_comm_label *l = nf->comm_labels[id];

		if (l && l->rank == DRM_NNP_COMM_NONE)
			drm_printf(p, "nnp-comm-%u:\t-/%u%s%s\n", id, l->nranks,
				   l->name[0] ? " " : "", l->name);
		else if (l)
			drm_printf(p, "nnp-comm-%u:\t%u/%u%s%s\n", id, l->rank,
				   l->nranks, l->name[0] ? " " : "", l->name);
	}
	mutex_unlock(&nf->comm_lock);
}

/*
 * For the coredump: @nf's communicators into @out, @room at most, made by
 * process @pid; their status is left to ask. Returns how many.
 */
u32 nnp_comms_dump(struct nnp_file *nf, u32 pid, struct nnp_coredump_comm *out,
		   u32 room)
{
	unsigned int id;
	u32 n = 0;

	mutex_lock(&nf->comm_lock);
	for (id = 0; id < NNP_HW_MAX_COMMS && n < room; id++) {
		const struct nnp_comm_label *l = nf->comm_labels[id];
		struct nnp_coredump_comm *c = &out[n];

		if (!l)
			continue;
		c->id = id;
		c->ctx = nf->ctx;
		c->rank = l->rank;
		c->nranks = l->nranks;
		c->status = NNP_COREDUMP_NONE;
		c->pid = pid;
		memcpy(c->name, l->name, min(sizeof(c->name), sizeof(l->name)));
		n++;
	}
	mutex_unlock(&nf->comm_lock);
	return n;
}

/* For debugfs: one line per communicator of @nf. */
void nnp_comms_show(struct nnp_file *nf, struct seq_file *m)
{
	unsigned int id;

	for_each_set_bit(id, nf->comms, NNP_HW_MAX_COMMS)
		seq_printf(m, "comm %u ctx %u\n", id, nf->ctx);
}
