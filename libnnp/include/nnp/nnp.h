/* SPDX-License-Identifier: MIT */
/*
 * libnnp: user-space access to nnp accelerators.
 *
 * Devices are numbered 0..count-1 in the order of their /dev/accel nodes.
 * Every call returns an nnp_result_t; nnp_strerror() turns one into text.
 * Handles are not shared between threads without the caller's own locking.
 */
#ifndef NNP_NNP_H
#define NNP_NNP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum nnp_result {
	NNP_SUCCESS = 0,
	NNP_ERROR_INVALID_ARGUMENT,	/* a bad argument to a libnnp call */
	NNP_ERROR_NO_DRIVER,		/* the nnp kernel module is not loaded */
	NNP_ERROR_NO_DEVICE,		/* no such nnp device */
	NNP_ERROR_PERMISSION,		/* the device node is not accessible */
	NNP_ERROR_OUT_OF_MEMORY,
	NNP_ERROR_NOT_SUPPORTED,	/* the driver lacks the feature */
	NNP_ERROR_DEVICE_LOST,		/* the device was removed or reset */
	NNP_ERROR_IO,			/* any other failure of the system */
} nnp_result_t;

/* A static, human-readable description of @result (never NULL). */
const char *nnp_strerror(nnp_result_t result);

typedef struct nnp_device nnp_device_t;

/* Device capability bits (struct nnp_device_info.caps) */
#define NNP_CAP_ADMIN_QUEUE	(1ull << 0)
#define NNP_CAP_USER_QUEUES	(1ull << 1)
#define NNP_CAP_ICL		(1ull << 2)
#define NNP_CAP_COLLECTIVES	(1ull << 3)

struct nnp_device_info {
	char path[64];		/* device node, e.g. /dev/accel/accel0 */
	uint32_t chip_id;
	uint32_t hw_version;	/* major << 16 | minor */
	uint32_t fw_version;	/* major << 16 | minor << 8 | patch */
	uint32_t num_icl_ports;
	uint64_t mem_size;	/* bytes of device memory */
	uint64_t caps;		/* NNP_CAP_* */
	uint32_t num_queues;
	uint32_t fw_heartbeat;
	char serial[16];
	char fw_build[32];
};

/*
 * Number of nnp devices. NNP_ERROR_NO_DRIVER if the module is not loaded,
 * NNP_ERROR_NO_DEVICE if it is but no device is present.
 */
nnp_result_t nnp_device_count(int *count);

/* Open device @index (0..count-1), or the device node at @path. */
nnp_result_t nnp_device_open(int index, nnp_device_t **dev);
nnp_result_t nnp_device_open_path(const char *path, nnp_device_t **dev);
void nnp_device_close(nnp_device_t *dev);

nnp_result_t nnp_device_get_info(nnp_device_t *dev,
				 struct nnp_device_info *info);

/* The device's file descriptor, for poll() and for the driver's ioctls. */
int nnp_device_fd(const nnp_device_t *dev);

#define NNP_VERSION_MAJOR(v)	(((v) >> 16) & 0xffff)
#define NNP_VERSION_MINOR(v)	(((v) >> 8) & 0xff)
#define NNP_VERSION_PATCH(v)	((v) & 0xff)

#ifdef __cplusplus
}
#endif

#endif /* NNP_NNP_H */
