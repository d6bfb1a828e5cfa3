/* SPDX-License-Identifier: MIT */
/* libnnp internals shared between its source files. */
#ifndef NNP_INTERNAL_H
#define NNP_INTERNAL_H

#include "nnp/nnp.h"

#define NNP_ACCEL_DIR	"/dev/accel"
#define NNP_MAX_DEVICES	256

struct nnp_device {
	int fd;
	char path[64];
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
/* Queue @cmd (its cid is set here) on @s; no system call. */
struct nnp_hw_queue_cmd;
nnp_result_t nnp_stream_submit(nnp_stream_t *s, struct nnp_hw_queue_cmd *cmd);
/* @m is memory of @s's device and [@off, @off + @len) lies inside it. */
int nnp_stream_range_ok(const nnp_stream_t *s, const nnp_mem_t *m, size_t off,
			size_t len);
/* The text of a device status code (NNP_STATUS_*). */
const char *nnp_status_text(uint16_t status);

/* Paths of the nnp device nodes, in node order; returns their number. */
nnp_result_t nnp_enumerate(char (*paths)[64], int max, int *count);

#endif /* NNP_INTERNAL_H */
