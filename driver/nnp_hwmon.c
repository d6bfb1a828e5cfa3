// SPDX-License-Identifier: GPL-2.0-only
/*
 * nnp.ko hwmon: the chip's temperature and power, as the device's
 * telemetry registers give them (hw interface 1.6), for sensors(1) and
 * monitoring agents: /sys/class/hwmon/hwmonN/{name,temp1_input,power1_input}.
 */
#include <drm/drm_drv.h>
#include <linux/hwmon.h>

#include "nnp_drv.h"

static umode_t nnp_hwmon_is_visible(const void *data,
				    enum hwmon_sensor_types type, u32 attr,
				    int channel)
{
	if ((type == hwmon_temp && attr == hwmon_temp_input) ||
	    (type == hwmon_power && attr == hwmon_power_input))
		return 0444;
	return 0;
}

static int nnp_hwmon_read(struct device *dev, enum hwmon_sensor_types type,
			  u32 attr, int channel, long *val)
{
	struct nnp_device *ndev = dev_get_drvdata(dev);
	int idx;

	if (!drm_dev_enter(&ndev->drm, &idx))
		return -ENODEV;
	/* Millidegrees Celsius and microwatts, as the registers hold them. */
	*val = nnp_rd(ndev, type == hwmon_temp ? NNP_REG_TEMP : NNP_REG_POWER);
	drm_dev_exit(idx);
	return 0;
}

static const struct hwmon_ops nnp_hwmon_ops = {
	.is_visible = nnp_hwmon_is_visible,
	.read = nnp_hwmon_read,
};

static const struct hwmon_channel_info * const nnp_hwmon_info[] = {
	HWMON_CHANNEL_INFO(temp, HWMON_T_INPUT),
	HWMON_CHANNEL_INFO(power, HWMON_P_INPUT),
	NULL
};

static const struct hwmon_chip_info nnp_hwmon_chip = {
	.ops = &nnp_hwmon_ops,
	.info = nnp_hwmon_info,
};

/*
 * Register the sensors if the kernel has hwmon (the debug guest kernel
 * does not) and the device has telemetry; devm unregisters on unbind.
 */
int nnp_hwmon_init(struct nnp_device *ndev)
{
	struct device *hwmon;

	if (!IS_REACHABLE(CONFIG_HWMON) || !nnp_has_telemetry(ndev))
		return 0;
	hwmon = devm_hwmon_device_register_with_info(&ndev->pdev->dev, "nnp",
						     ndev, &nnp_hwmon_chip, NULL);
	/*
	 * Our chip description is fixed and valid, so what can fail is an
	 * allocation; 6.12's __hwmon_device_register() ignores a failed
	 * dev_set_name() and device_add() then says EINVAL for it.
	 */
	if (PTR_ERR_OR_ZERO(hwmon) == -EINVAL)
		return -ENOMEM;
	return PTR_ERR_OR_ZERO(hwmon);
}
