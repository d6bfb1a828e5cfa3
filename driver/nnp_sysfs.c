// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko sysfs attributes on the PCI device, the basics of the info ioctl
 * for scripts: /sys/class/accel/accelN/device/{chip_id,...}.
 */
#include <drm/drm_drv.h>
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/sysfs.h>

#include "nnp_drv.h"
#include "nnp_accel.h"

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

static ssize_t mem_used_show(struct device *dev, struct device_attribute *attr,
			     char *buf)
{
	struct nnp_device *ndev = dev_to_nnp(dev);
	u64 used;

	mutex_lock(&ndev->mm_lock);
	used = ndev->mem_used;
	mutex_unlock(&ndev->mm_lock);
	return sysfs_emit(buf, "%llu\n", used);
}
static DEVICE_ATTR_RO(mem_used);

/* The 64-bit count: HI, LO, HI again until HI holds still. */
static ssize_t busy_ns_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	struct nnp_device *ndev = dev_to_nnp(dev);
	u32 hi, lo, again;
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	again = nnp_rd(ndev, NNP_REG_BUSY_NS_HI);
	do {
		hi = again;
		lo = nnp_rd(ndev, NNP_REG_BUSY_NS_LO);
		again = nnp_rd(ndev, NNP_REG_BUSY_NS_HI);
	} while (again != hi);
	drm_dev_exit(idx);
	return sysfs_emit(buf, "%llu\n", (u64)hi << 32 | lo);
}
static DEVICE_ATTR_RO(busy_ns);

static ssize_t reset_count_show(struct device *dev,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&dev_to_nnp(dev)->resets));
}
static DEVICE_ATTR_RO(reset_count);

static ssize_t last_reset_reason_show(struct device *dev,
				      struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  nnp_reset_reason_name(READ_ONCE(dev_to_nnp(dev)->last_reset_reason)));
}
static DEVICE_ATTR_RO(last_reset_reason);

/* Writing 1 resets the device (root: CAP_SYS_ADMIN); returns once it is up. */
static ssize_t reset_device_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct nnp_device *ndev = dev_to_nnp(dev);
	bool yes;
	int idx, ret;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	ret = kstrtobool(buf, &yes);
	if (ret || !yes)
		return -EINVAL;
	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	ret = nnp_reset(ndev, DRM_NNP_RESET_USER);
	drm_dev_exit(idx);
	return ret ? ret : count;
}
static DEVICE_ATTR_WO(reset_device);

static struct attribute *nnp_dev_attrs[] = {
	&dev_attr_chip_id.attr,
	&dev_attr_mem_size.attr,
	&dev_attr_num_icl_ports.attr,
	&dev_attr_hw_version.attr,
	&dev_attr_fw_version.attr,
	&dev_attr_serial.attr,
	&dev_attr_fw_heartbeat.attr,
	&dev_attr_mem_used.attr,
	&dev_attr_busy_ns.attr,
	&dev_attr_reset_count.attr,
	&dev_attr_last_reset_reason.attr,
	&dev_attr_reset_device.attr,
	NULL,
};

/* busy_ns needs the telemetry registers (hw interface 1.6). */
static umode_t nnp_dev_attr_visible(struct kobject *kobj, struct attribute *a,
				    int n)
{
	struct nnp_device *ndev = dev_to_nnp(kobj_to_dev(kobj));

	if (a == &dev_attr_busy_ns.attr && !nnp_has_telemetry(ndev))
		return 0;
	return a->mode;
}

static const struct attribute_group nnp_dev_group = {
	.attrs = nnp_dev_attrs,
	.is_visible = nnp_dev_attr_visible,
};

const struct attribute_group *nnp_dev_groups[] = {
	&nnp_dev_group,
	NULL,
};
