// SPDX-License-Identifier: MIT
/* libnnp memory: device and host memory objects, registered user memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <xf86drm.h>
#include <nnp_accel.h>

#include "internal.h"

static nnp_result_t mem_new(nnp_device_t *dev, enum nnp_mem_kind kind,
			    size_t size, nnp_mem_t **mem)
{
	if (!dev || !mem || !size)
		return NNP_ERROR_INVALID_ARGUMENT;
	*mem = calloc(1, sizeof(**mem));
	if (!*mem)
		return NNP_ERROR_OUT_OF_MEMORY;
	(*mem)->dev = dev;
	(*mem)->kind = kind;
	(*mem)->size = size;
	return NNP_SUCCESS;
}

nnp_result_t nnp_mem_alloc(nnp_device_t *dev, enum nnp_mem_kind kind,
			   size_t size, unsigned int flags, nnp_mem_t **mem)
{
	struct drm_nnp_bo_create c = { .size = size };
	nnp_result_t r;

	if ((kind != NNP_MEM_DEVICE && kind != NNP_MEM_HOST) ||
	    (flags & ~NNP_MEM_READ_ONLY))
		return NNP_ERROR_INVALID_ARGUMENT;
	r = mem_new(dev, kind, size, mem);
	if (r != NNP_SUCCESS)
		return r;
	c.flags = (kind == NNP_MEM_DEVICE ? DRM_NNP_BO_DEVICE : DRM_NNP_BO_HOST) |
		  (flags & NNP_MEM_READ_ONLY ? DRM_NNP_BO_READ_ONLY : 0);
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_BO_CREATE, &c)) {
		int err = errno;

		free(*mem);
		*mem = NULL;
		if (err == ENOSPC)
			return NNP_ERROR_OUT_OF_DEVICE_MEMORY;
		return err == E2BIG ? NNP_ERROR_INVALID_ARGUMENT :
		       nnp_result_from_errno(err);
	}
	(*mem)->handle = c.handle;
	(*mem)->key = c.key;
	(*mem)->mmap_offset = c.mmap_offset;
	return NNP_SUCCESS;
}

nnp_result_t nnp_mem_register(nnp_device_t *dev, void *ptr, size_t size,
			      unsigned int flags, nnp_mem_t **mem)
{
	struct drm_nnp_bo_userptr u = {
		.user_ptr = (uintptr_t)ptr,
		.size = size,
		.flags = flags & NNP_MEM_READ_ONLY ? DRM_NNP_BO_READ_ONLY : 0,
	};
	nnp_result_t r;

	if (!ptr || (flags & ~NNP_MEM_READ_ONLY))
		return NNP_ERROR_INVALID_ARGUMENT;
	r = mem_new(dev, NNP_MEM_USER, size, mem);
	if (r != NNP_SUCCESS)
		return r;
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_BO_USERPTR, &u)) {
		int err = errno;

		free(*mem);
		*mem = NULL;
		return err == EFAULT || err == E2BIG ? NNP_ERROR_INVALID_ARGUMENT :
		       nnp_result_from_errno(err);
	}
	(*mem)->handle = u.handle;
	(*mem)->key = u.key;
	(*mem)->map = ptr;
	return NNP_SUCCESS;
}

void nnp_mem_free(nnp_mem_t *mem)
{
	struct drm_gem_close c;

	if (!mem)
		return;
	if (mem->map_len)
		munmap(mem->map, mem->map_len);
	c = (struct drm_gem_close){ .handle = mem->handle };
	drmIoctl(mem->dev->fd, DRM_IOCTL_GEM_CLOSE, &c);
	free(mem);
}

nnp_result_t nnp_mem_map(nnp_mem_t *mem, void **ptr)
{
	size_t len;
	void *p;

	if (!mem || !ptr)
		return NNP_ERROR_INVALID_ARGUMENT;
	if (!mem->map) {
		len = (mem->size + 4095) & ~(size_t)4095;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 mem->dev->fd, (off_t)mem->mmap_offset);
		if (p == MAP_FAILED)
			return nnp_result_from_errno(errno);
		mem->map = p;
		mem->map_len = len;
	}
	*ptr = mem->map;
	return NNP_SUCCESS;
}

size_t nnp_mem_size(const nnp_mem_t *mem)
{
	return mem ? mem->size : 0;
}

enum nnp_mem_kind nnp_mem_kind(const nnp_mem_t *mem)
{
	return mem->kind;
}
