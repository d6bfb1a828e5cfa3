// SPDX-License-Identifier: MIT
/*
 * libnnp device resets: how many the driver did and why (the info query),
 * and a reset on demand through the device's sysfs "reset_device" file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "internal.h"
#include "log.h"
#include "names.h"
#include "nnp_accel.h"

nnp_result_t nnp_device_get_resets(nnp_device_t *dev, uint32_t *count,
				   const char **last_reason)
{
	struct drm_nnp_device_info di;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_DEVICE_INFO,
		.size = sizeof(di),
		.data = (uintptr_t)&di,
	};

	if (!dev || !count || !last_reason)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_device_get_resets: no device, count or last_reason");
	memset(&di, 0, sizeof(di));
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q))
		return nnp_ioctl_failed(dev, "the device info query", errno);
	/* A driver older than the counter has none to tell. */
	if (q.size < DRM_NNP_DEVICE_INFO_SIZE_V2)
		return nnp_fail(NNP_ERROR_NOT_SUPPORTED,
				"%s: the driver does not count resets", dev->path);
	*count = di.reset_count;
	*last_reason = nnp_reset_reason_name(di.last_reset_reason);
	if (!*last_reason)
		*last_reason = "unknown";
	return NNP_SUCCESS;
}

nnp_result_t nnp_device_reset(nnp_device_t *dev)
{
	const char *node;
	char path[128];
	int fd, err = 0;

	if (!dev)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_device_reset: dev is NULL");
	node = strrchr(dev->path, '/');
	snprintf(path, sizeof(path), "/sys/class/accel/%s/device/reset_device",
		 node ? node + 1 : dev->path);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		err = errno;
	else if (write(fd, "1", 1) != 1)
		err = errno;
	if (fd >= 0)
		close(fd);
	if (err)
		return nnp_fail(nnp_result_from_errno(err), "cannot reset %s through %s: %s",
				dev->path, path, strerror(err));
	return NNP_SUCCESS;
}
