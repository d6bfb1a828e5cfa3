/* SPDX-License-Identifier: MIT */
/* libnnp internals shared between its source files. */
#ifndef NNP_INTERNAL_H
#define NNP_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "nnp/nnp.h"

#define NNP_ACCEL_DIR	"/dev/accel"
#define NNP_SYSFS_DIR	"/sys"
#define NNP_MAX_DEVICES	256

/*
 * The driver interface libnnp speaks: DRM_NNP_DRIVER_MAJOR exactly, and
 * at least this minor (docs/uapi.md: a minor only adds). Raise it when
 * libnnp starts to rely on an addition it cannot do without.
 */
#define NNP_DRIVER_MINOR_NEEDED	0

struct nnp_device {
	int fd;
	/* DRM_NNP_DRIVER_MINOR of the driver: the ioctls it has (uapi.md). */
	int driver_minor;
	char path[64];
	/* The hardware interface's major << 16 | minor; 0: not asked yet. */
	uint32_t hw_version;
};

struct nnp_mem {
	nnp_device_t *dev;
	enum nnp_mem_kind kind;
	size_t size;
	uint32_t handle;
	uint32_t key;
	uint64_t mmap_offset;
	void *map;		/* CPU mapping, once made */
	size_t map_len;
};

nnp_result_t nnp_result_from_errno(int err);

struct drm_nnp_comm_info;
/*
 * Communicator @id of this process on @dev, as the driver lists it, into
 * @out (device_comms.c); false if the list has it not.
 */
bool nnp_device_comm_info(nnp_device_t *dev, uint32_t id,
			  struct drm_nnp_comm_info *out);
/* The driver's entry @c as libnnp's struct, the size of this build's. */
void nnp_comm_state_from_driver(const struct drm_nnp_comm_info *c,
				struct nnp_comm_state *s);

/* The bytes from @type's start to the end of its @member. */
#define NNP_END_OF(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))

/*
 * Whether @size, a caller's size of a struct that starts with one, is a
 * size of it this libnnp knows: from @first (the struct as it was when it
 * gained its size member) to @full (its sizeof now). If not
 * NNP_ERROR_INVALID_ARGUMENT, the last error naming @what ("nnp_device_get_info:
 * info").
 */
nnp_result_t nnp_size_check(size_t size, size_t first, size_t full,
			    const char *what);
/*
 * @dev's ioctl @what failed with @err: its result, with the device, @what
 * and @err in the last error.
 */
nnp_result_t nnp_ioctl_failed(const nnp_device_t *dev, const char *what, int err);
/* Queue @cmd (its cid is set here) on @s; no system call. */
struct nnp_hw_queue_cmd;
nnp_result_t nnp_stream_submit(nnp_stream_t *s, struct nnp_hw_queue_cmd *cmd);
/* Submit @n commands (at most the ring's depth - 1) with one doorbell. */
nnp_result_t nnp_stream_submit_n(nnp_stream_t *s, struct nnp_hw_queue_cmd *cmds,
				 uint32_t n);
/*
 * A COPY of @len bytes for @s into *@c, checked as nnp_memcpy_async()
 * does; the last error names @what.
 */
nnp_result_t nnp_copy_cmd(const char *what, const nnp_stream_t *s,
			  nnp_mem_t *dst, size_t dst_off, nnp_mem_t *src,
			  size_t src_off, size_t len, struct nnp_hw_queue_cmd *c);
/* @m is memory of @s's device and [@off, @off + @len) lies inside it. */
int nnp_stream_range_ok(const nnp_stream_t *s, const nnp_mem_t *m, size_t off,
			size_t len);
/* The text of a device status code (NNP_STATUS_*). */
const char *nnp_status_text(uint16_t status);

/*
 * Paths of the nnp device nodes as the caller sees them: in node order,
 * then as NNP_VISIBLE_DEVICES picks and orders them.
 */
nnp_result_t nnp_enumerate(char (*paths)[64], int max, int *count);
/*
 * The same, from sysfs at @sysfs and nodes under @devdir (the tests'
 * fake trees; nnp_enumerate() passes "/sys" and "/dev/accel").
 */
nnp_result_t nnp_enumerate_at(const char *sysfs, const char *devdir,
			      char (*paths)[64], int max, int *count);
/*
 * May libnnp use the driver at @path that calls its interface
 * @major.@minor? NNP_ERROR_VERSION (and why) if not.
 */
nnp_result_t nnp_check_driver_version(const char *path, int major, int minor);

/* The CPU's page size: what the driver maps and rounds objects to. */
size_t nnp_page_size(void);
/* The minor version of @dev's hardware interface; 0 if unknown. */
uint32_t nnp_device_hw_minor(nnp_device_t *dev);
/* An element's bytes; 0 for a type libnnp does not know. */
size_t nnp_dtype_size(nnp_dtype_t t);
/* CLOCK_MONOTONIC in ns. */
int64_t nnp_now_ns(void);

#endif /* NNP_INTERNAL_H */
