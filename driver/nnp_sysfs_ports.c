// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko sysfs: one directory per inter-chip link port on the PCI device,
 * /sys/class/accel/accelN/device/portP/{state,peer,tx_bytes,...}, read
 * from the device (GET_PORTS) at each read. The number of ports is the
 * device's, so the groups are made at probe.
 */
#include <drm/drm_drv.h>
#include <linux/device.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "nnp_drv.h"

enum nnp_port_field {
	NNP_PORT_STATE,
	NNP_PORT_PEER_NAME,
	NNP_PORT_TX_BYTES,
	NNP_PORT_RX_BYTES,
	NNP_PORT_TX_PACKETS,
	NNP_PORT_RX_PACKETS,
	NNP_PORT_ERRORS,
	NNP_PORT_FIELDS
};

static const char * const nnp_port_field_names[NNP_PORT_FIELDS] = {
	"state", "peer", "tx_bytes", "rx_bytes", "tx_packets", "rx_packets",
	"errors",
};

struct nnp_port_attr {
	struct device_attribute dattr;
	u32 port;
	enum nnp_port_field field;
};

struct nnp_port_group {
	struct attribute_group group;
	struct attribute *attrs[NNP_PORT_FIELDS + 1];
	struct nnp_port_attr pattrs[NNP_PORT_FIELDS];
	char name[8];
};

static ssize_t nnp_port_emit(char *buf, const struct nnp_hw_port_info *p,
			     enum nnp_port_field field)
{
	u32 state = le32_to_cpu(p->state);
	u32 peer = le32_to_cpu(p->peer);

	switch (field) {
	case NNP_PORT_STATE:
		if (!(state & NNP_PORT_WIRED))
			return sysfs_emit(buf, "unwired\n");
		return sysfs_emit(buf, "%s\n", state & NNP_PORT_UP ? "up" : "down");
	case NNP_PORT_PEER_NAME:
		if (!(state & NNP_PORT_WIRED))
			return sysfs_emit(buf, "none\n");
		return sysfs_emit(buf, "%u.%u\n", NNP_PORT_PEER_CHIP(peer),
				  NNP_PORT_PEER_PORT(peer));
	case NNP_PORT_TX_BYTES:
		return sysfs_emit(buf, "%llu\n", le64_to_cpu(p->tx_bytes));
	case NNP_PORT_RX_BYTES:
		return sysfs_emit(buf, "%llu\n", le64_to_cpu(p->rx_bytes));
	case NNP_PORT_TX_PACKETS:
		return sysfs_emit(buf, "%llu\n", le64_to_cpu(p->tx_packets));
	case NNP_PORT_RX_PACKETS:
		return sysfs_emit(buf, "%llu\n", le64_to_cpu(p->rx_packets));
	case NNP_PORT_ERRORS:
		return sysfs_emit(buf, "%llu\n", le64_to_cpu(p->errors));
	default:
		return -EINVAL;
	}
}

static ssize_t nnp_port_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct nnp_port_attr *pa = container_of(attr, struct nnp_port_attr, dattr);
	struct nnp_device *ndev = pci_get_drvdata(to_pci_dev(dev));
	u32 n = ndev->id.num_ports;
	struct nnp_hw_port_info *info;
	ssize_t ret;
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	info = kcalloc(n, sizeof(*info), GFP_KERNEL);
	ret = info ? nnp_admin_get_ports(ndev, info, n) : -ENOMEM;
	if (!ret)
		ret = nnp_port_emit(buf, &info[pa->port], pa->field);
	kfree(info);
	drm_dev_exit(idx);
	return ret;
}

/* Add port0 .. portN-1 to the PCI device; devm removes them on unbind. */
int nnp_sysfs_ports_init(struct nnp_device *ndev)
{
	struct device *dev = &ndev->pdev->dev;
	struct nnp_port_group *groups;
	u32 p, f;
	int ret;

	groups = devm_kcalloc(dev, ndev->id.num_ports, sizeof(*groups),
			      GFP_KERNEL);
	if (!groups && ndev->id.num_ports)
		return -ENOMEM;
	for (p = 0; p < ndev->id.num_ports; p++) {
		struct nnp_port_group *g = &groups[p];

		snprintf(g->name, sizeof(g->name), "port%u", p);
		for (f = 0; f < NNP_PORT_FIELDS; f++) {
			struct nnp_port_attr *pa = &g->pattrs[f];

			sysfs_attr_init(&pa->dattr.attr);
			pa->dattr.attr.name = nnp_port_field_names[f];
			pa->dattr.attr.mode = 0444;
			pa->dattr.show = nnp_port_show;
			pa->port = p;
			pa->field = f;
			g->attrs[f] = &pa->dattr.attr;
		}
		g->group.name = g->name;
		g->group.attrs = g->attrs;
		ret = devm_device_add_group(dev, &g->group);
		if (ret)
			return ret;
	}
	return 0;
}
