/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR MIT) */
/*
 * nnp accelerator: user-space interface of nnp.ko (/dev/accel/accelN).
 *
 * Rules every ioctl here follows (see Documentation/process/botching-up-ioctls.rst):
 * structures have no implicit padding and are laid out for 32- and 64-bit
 * user space alike; every flag or reserved field not defined must be zero
 * and is rejected otherwise; each invalid input has one documented errno.
 */
#ifndef _UAPI_NNP_ACCEL_H_
#define _UAPI_NNP_ACCEL_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_NNP_DRIVER_NAME		"nnp"
#define DRM_NNP_DRIVER_MAJOR		1
#define DRM_NNP_DRIVER_MINOR		0

#define DRM_NNP_QUERY			0x00

#define DRM_IOCTL_NNP_QUERY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_NNP_QUERY, struct drm_nnp_query)

/*
 * DRM_NNP_QUERY_DEVICE_INFO - identity and basics of the device,
 * as struct drm_nnp_device_info.
 */
#define DRM_NNP_QUERY_DEVICE_INFO	1

/**
 * struct drm_nnp_query - read one block of information about the device
 *
 * The kernel copies its structure for @query to @data, truncated to @size,
 * and sets @size to the number of bytes it wrote. Fields are only ever
 * appended to a query's structure, so an older caller gets the fields it
 * knows and a newer caller learns from @size which fields were filled.
 *
 * Errors (returned by ioctl() in errno):
 *
 * - %EINVAL: @flags or @reserved is not zero.
 * - %EOPNOTSUPP: @query is not a query this kernel knows.
 * - %ENOSPC: @size is not zero but smaller than the query's first version.
 * - %EFAULT: @data cannot be written for @size bytes.
 * - %ENODEV: the device was removed (for example by unbinding the driver).
 */
struct drm_nnp_query {
	/** @query: in: which block, DRM_NNP_QUERY_*. */
	__u32 query;
	/** @flags: in: none defined, must be zero. */
	__u32 flags;
	/**
	 * @size: in: bytes available at @data, or 0 to ask for the size.
	 * out: bytes written, or with 0 in, the full size of the structure.
	 */
	__u32 size;
	/** @reserved: must be zero. */
	__u32 reserved;
	/** @data: in: user pointer to the buffer that receives the block. */
	__u64 data;
};

/* Capability bits of struct drm_nnp_device_info.caps */
#define DRM_NNP_CAP_ADMIN_QUEUE		(1ull << 0)
#define DRM_NNP_CAP_USER_QUEUES		(1ull << 1)
#define DRM_NNP_CAP_ICL			(1ull << 2)
#define DRM_NNP_CAP_COLLECTIVES		(1ull << 3)

/**
 * struct drm_nnp_device_info - answer to DRM_NNP_QUERY_DEVICE_INFO
 *
 * Version 1 is DRM_NNP_DEVICE_INFO_SIZE_V1 bytes.
 */
struct drm_nnp_device_info {
	/** @chip_id: the chip's id within its fabric. */
	__u32 chip_id;
	/** @hw_version: hardware interface version, major << 16 | minor. */
	__u32 hw_version;
	/**
	 * @fw_version: firmware version, major << 16 | minor << 8 | patch.
	 */
	__u32 fw_version;
	/** @num_icl_ports: number of inter-chip link ports. */
	__u32 num_icl_ports;
	/** @mem_size: device memory in bytes. */
	__u64 mem_size;
	/** @caps: DRM_NNP_CAP_* bits. */
	__u64 caps;
	/** @num_queues: user queues the device offers. */
	__u32 num_queues;
	/** @fw_heartbeat: firmware heartbeat count, read at the query. */
	__u32 fw_heartbeat;
	/** @serial: the device's serial number, NUL-terminated. */
	char serial[16];
	/** @fw_build: the firmware's build string, NUL-terminated. */
	char fw_build[32];
};

#define DRM_NNP_DEVICE_INFO_SIZE_V1	88

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_NNP_ACCEL_H_ */
