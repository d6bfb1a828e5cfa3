// SPDX-License-Identifier: GPL-2.0-only
/* nnp.ko DRM_IOCTL_NNP_QUERY: information blocks copied to user space. */
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "nnp_drv.h"
#include "nnp_accel.h"

static_assert(sizeof(struct drm_nnp_device_info) == DRM_NNP_DEVICE_INFO_SIZE_V2);
static_assert(sizeof(struct drm_nnp_counters) == DRM_NNP_COUNTERS_SIZE_V2);
static_assert(sizeof(struct drm_nnp_ports) == DRM_NNP_PORTS_SIZE_V1);
static_assert(sizeof(struct drm_nnp_port) == DRM_NNP_PORT_SIZE_V1);
static_assert(sizeof(struct drm_nnp_model) == DRM_NNP_MODEL_SIZE_V1);
static_assert(DRM_NNP_MAX_PORTS == NNP_HW_MAX_PORTS);

/*
 * Copy @len bytes of @blk to the caller, truncated to q->size; q->size == 0
 * asks for the size. @min_len is the size of the block's first version:
 * less than that cannot be a caller that knows the block.
 */
static int nnp_query_copy(struct drm_nnp_query *q, const void *blk, u32 len,
			  u32 min_len)
{
	u32 n;

	if (!q->size) {
		q->size = len;
		return 0;
	}
	if (q->size < min_len)
		return -ENOSPC;
	n = min(q->size, len);
	if (copy_to_user(u64_to_user_ptr(q->data), blk, n))
		return -EFAULT;
	q->size = n;
	return 0;
}

static u64 nnp_uapi_caps(u32 hw_caps)
{
	u64 caps = 0;

	if (hw_caps & NNP_CAP_ADMIN_QUEUE)
		caps |= DRM_NNP_CAP_ADMIN_QUEUE;
	if (hw_caps & NNP_CAP_USER_QUEUES)
		caps |= DRM_NNP_CAP_USER_QUEUES;
	if (hw_caps & NNP_CAP_ICL)
		caps |= DRM_NNP_CAP_ICL;
	if (hw_caps & NNP_CAP_COLLECTIVES)
		caps |= DRM_NNP_CAP_COLLECTIVES;
	return caps;
}

static int nnp_query_device_info(struct nnp_device *ndev,
				 struct drm_nnp_query *q)
{
	const struct nnp_identity *id = &ndev->id;
	struct drm_nnp_device_info info = {
		.chip_id = id->chip_id,
		.hw_version = id->hw_version,
		.fw_version = id->fw_version,
		.num_icl_ports = id->num_ports,
		.mem_size = id->mem_size,
		.caps = nnp_uapi_caps(id->caps),
		.num_queues = ndev->num_queues,
	};
	info.fw_heartbeat = nnp_rd(ndev, NNP_REG_FW_HEARTBEAT);
	info.reset_count = atomic_read(&ndev->resets);
	info.last_reset_reason = READ_ONCE(ndev->last_reset_reason);

	strscpy(info.serial, id->serial, sizeof(info.serial));
	strscpy(info.fw_build, id->fw_build, sizeof(info.fw_build));
	return nnp_query_copy(q, &info, sizeof(info),
			      DRM_NNP_DEVICE_INFO_SIZE_V1);
}

static int nnp_query_counters(struct nnp_device *ndev, struct drm_nnp_query *q)
{
	struct nnp_hw_counters hw = {};
	struct drm_nnp_counters c;
	u32 len;
	int ret;

	/* A device before 1.24 writes the 1.3 block: no peer bytes. */
	ret = nnp_admin_read(ndev, NNP_ADMIN_GET_COUNTERS, &hw, sizeof(hw), &len);
	if (ret)
		return ret;
	c = (struct drm_nnp_counters){
		.host_dma_bytes = le64_to_cpu(hw.host_dma_bytes),
		.local_bytes = le64_to_cpu(hw.local_bytes),
		.cmds_completed = le64_to_cpu(hw.cmds_completed),
		.cmds_failed = le64_to_cpu(hw.cmds_failed),
		.mem_objects = atomic64_read(&ndev->mem_objects),
	};
	if (len >= sizeof(hw))
		c.peer_dma_bytes = le64_to_cpu(hw.peer_dma_bytes);
	mutex_lock(&ndev->mm_lock);
	c.mem_used = ndev->mem_used;
	mutex_unlock(&ndev->mm_lock);
	return nnp_query_copy(q, &c, sizeof(c), DRM_NNP_COUNTERS_SIZE_V1);
}

static int nnp_query_ports(struct nnp_device *ndev, struct drm_nnp_query *q)
{
	u32 n = min_t(u32, ndev->id.num_ports, DRM_NNP_MAX_PORTS);
	struct nnp_hw_port_info *hw;
	struct drm_nnp_ports *p;
	int ret;
	u32 i;

	hw = kcalloc(DRM_NNP_MAX_PORTS, sizeof(*hw), GFP_KERNEL);
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	ret = hw && p ? 0 : -ENOMEM;
	if (!ret)
		ret = nnp_admin_get_ports(ndev, hw, n);
	if (!ret) {
		p->num_ports = n;
		p->entry_size = sizeof(p->port[0]);
		for (i = 0; i < n; i++) {
			struct drm_nnp_port *o = &p->port[i];
			u32 state = le32_to_cpu(hw[i].state);
			u32 peer = le32_to_cpu(hw[i].peer);

			o->state = (state & NNP_PORT_WIRED ? DRM_NNP_PORT_WIRED : 0) |
				   (state & NNP_PORT_UP ? DRM_NNP_PORT_UP : 0);
			o->peer_chip = NNP_PORT_PEER_CHIP(peer);
			o->peer_port = NNP_PORT_PEER_PORT(peer);
			o->tx_bytes = le64_to_cpu(hw[i].tx_bytes);
			o->rx_bytes = le64_to_cpu(hw[i].rx_bytes);
			o->tx_packets = le64_to_cpu(hw[i].tx_packets);
			o->rx_packets = le64_to_cpu(hw[i].rx_packets);
			o->errors = le64_to_cpu(hw[i].errors);
		}
		ret = nnp_query_copy(q, p, sizeof(*p), DRM_NNP_PORTS_SIZE_V1);
	}
	kfree(p);
	kfree(hw);
	return ret;
}

/* GET_MODEL: hardware interface 1.8 on; a 1.7 device lacks the opcode. */
static int nnp_query_comms(struct nnp_device *ndev, struct drm_nnp_query *q)
{
	struct drm_nnp_comms *v;
	int ret;

	if (!q->size)
		return nnp_query_copy(q, NULL, sizeof(*v), DRM_NNP_COMMS_SIZE_V1);
	if (q->size < DRM_NNP_COMMS_SIZE_V1)
		return -ENOSPC;
	v = kvzalloc(sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	ret = nnp_comms_view(ndev, v);
	if (!ret)
		ret = nnp_query_copy(q, v, sizeof(*v), DRM_NNP_COMMS_SIZE_V1);
	kvfree(v);
	return ret;
}

static bool nnp_has_model(const struct nnp_device *ndev)
{
	return (ndev->id.hw_version & 0xffff) >= 8;
}

static int nnp_query_model(struct nnp_device *ndev, struct drm_nnp_query *q)
{
	struct drm_nnp_model m = { 0 };
	struct nnp_hw_model hw;
	int ret;
	u32 i;

	if (!nnp_has_model(ndev)) {
		nnp_dbg(ndev, QUERY, "query MODEL: hw interface 0x%x before 1.8\n",
			ndev->id.hw_version);
		return -EOPNOTSUPP;
	}
	ret = nnp_admin_read(ndev, NNP_ADMIN_GET_MODEL, &hw, sizeof(hw), NULL);
	if (ret)
		return ret;
	m.now_ns = le64_to_cpu(hw.now_ns);
	m.commands = le64_to_cpu(hw.commands);
	m.hbm_busy_ns = le64_to_cpu(hw.hbm_busy_ns);
	m.pcie_busy_ns = le64_to_cpu(hw.pcie_busy_ns);
	m.num_ports = min_t(u32, ndev->id.num_ports, DRM_NNP_MAX_PORTS);
	for (i = 0; i < m.num_ports; i++)
		m.port_tx_busy_ns[i] = le64_to_cpu(hw.port_tx_busy_ns[i]);
	return nnp_query_copy(q, &m, sizeof(m), DRM_NNP_MODEL_SIZE_V1);
}

int nnp_ioctl_query(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_nnp_query *q = data;

	if (q->flags || q->reserved) {
		nnp_dbg(to_nnp(drm), QUERY, "query: flags 0x%x, reserved 0x%x: not 0\n",
			q->flags, q->reserved);
		return -EINVAL;
	}

	switch (q->query) {
	case DRM_NNP_QUERY_DEVICE_INFO:
		return nnp_query_device_info(to_nnp(drm), q);
	case DRM_NNP_QUERY_COUNTERS:
		return nnp_query_counters(to_nnp(drm), q);
	case DRM_NNP_QUERY_PORTS:
		return nnp_query_ports(to_nnp(drm), q);
	case DRM_NNP_QUERY_MODEL:
		return nnp_query_model(to_nnp(drm), q);
	case DRM_NNP_QUERY_COMMS:
		return nnp_query_comms(to_nnp(drm), q);
	default:
		return -EOPNOTSUPP;
	}
}
