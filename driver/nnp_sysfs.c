// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko sysfs attributes on the PCI device, the basics of the info ioctl
 * for scripts: /sys/class/accel/accelN/device/{chip_id,...}.
 */
#include <linux/device.h>
#include <linux/sysfs.h>

#include "nnp_drv.h"

static struct nnp_device *dev_to_nnp(struct device *dev)
{
	return pci_get_drvdata(to_pci_dev(dev));
}

static ssize_t chip_id_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_to_nnp(dev)->id.chip_id);
}
static DEVICE_ATTR_RO(chip_id);

static ssize_t mem_size_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%llu\n", dev_to_nnp(dev)->id.mem_size);
}
static DEVICE_ATTR_RO(mem_size);

static ssize_t num_icl_ports_show(struct device *dev,
				  struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", dev_to_nnp(dev)->id.num_ports);
}
static DEVICE_ATTR_RO(num_icl_ports);

static ssize_t hw_version_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	u32 v = dev_to_nnp(dev)->id.hw_version;

	return sysfs_emit(buf, "%u.%u\n", v >> 16, v & 0xffff);
}
static DEVICE_ATTR_RO(hw_version);

static ssize_t fw_version_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	u32 v = dev_to_nnp(dev)->id.fw_version;

	return sysfs_emit(buf, "%u.%u.%u\n", NNP_FW_VERSION_MAJOR(v),
			  NNP_FW_VERSION_MINOR(v), NNP_FW_VERSION_PATCH(v));
}
static DEVICE_ATTR_RO(fw_version);

static ssize_t serial_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n", dev_to_nnp(dev)->id.serial);
}
static DEVICE_ATTR_RO(serial);

static ssize_t fw_heartbeat_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n",
			  nnp_rd(dev_to_nnp(dev), NNP_REG_FW_HEARTBEAT));
}
static DEVICE_ATTR_RO(fw_heartbeat);

static struct attribute *nnp_dev_attrs[] = {
	&dev_attr_chip_id.attr,
	&dev_attr_mem_size.attr,
	&dev_attr_num_icl_ports.attr,
	&dev_attr_hw_version.attr,
	&dev_attr_fw_version.attr,
	&dev_attr_serial.attr,
	&dev_attr_fw_heartbeat.attr,
	NULL,
};

static const struct attribute_group nnp_dev_group = {
	.attrs = nnp_dev_attrs,
};

const struct attribute_group *nnp_dev_groups[] = {
	&nnp_dev_group,
	NULL,
};
