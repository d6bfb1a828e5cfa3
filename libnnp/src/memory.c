// SPDX-License-Identifier: MIT
/* libnnp memory: device and host memory objects, registered user memory. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>
#include <nnp_accel.h>

#include "internal.h"
#include "log.h"

size_t nnp_page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

static nnp_result_t mem_new(nnp_device_t *dev, enum nnp_mem_kind kind,
			    size_t size, nnp_mem_t **mem)
{
	if (!dev || !mem || !size)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"memory of %zu bytes, no device or nowhere to put it", size);
	*mem = calloc(1, sizeof(**mem));
	if (!*mem)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no host memory for a handle");
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
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_mem_alloc: kind %d or flags %#x unknown", (int)kind, flags);
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
			return nnp_fail(NNP_ERROR_OUT_OF_DEVICE_MEMORY,
					"%s: no free range of %zu bytes of %s memory",
					dev->path, size, kind == NNP_MEM_DEVICE ? "device" : "host");
		return err == E2BIG ?
		       nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "%s: %zu bytes is more than one object may hold",
				dev->path, size) :
		       nnp_ioctl_failed(dev, "allocating memory", err);
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
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_mem_register: no memory, or flags %#x unknown", flags);
	r = mem_new(dev, NNP_MEM_USER, size, mem);
	if (r != NNP_SUCCESS)
		return r;
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_BO_USERPTR, &u)) {
		int err = errno;

		free(*mem);
		*mem = NULL;
		return err == EFAULT || err == E2BIG ?
		       nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%s: cannot register %zu bytes at %p: %s", dev->path,
				size, ptr, strerror(err)) :
		       nnp_ioctl_failed(dev, "registering memory", err);
	}
	(*mem)->handle = u.handle;
	(*mem)->key = u.key;
	(*mem)->map = ptr;
	return NNP_SUCCESS;
}

nnp_result_t nnp_mem_import(nnp_device_t *dev, int fd, unsigned int flags,
			    nnp_mem_t **mem)
{
	struct drm_nnp_bo_import im = {
		.fd = fd,
		.flags = flags & NNP_MEM_READ_ONLY ? DRM_NNP_BO_READ_ONLY : 0,
	};
	nnp_result_t r;

	if (flags & ~NNP_MEM_READ_ONLY)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_mem_import: flags %#x unknown", flags);
	/* The size comes from the dma-buf; 1 stands in until it is known. */
	r = mem_new(dev, NNP_MEM_IMPORTED, 1, mem);
	if (r != NNP_SUCCESS)
		return r;
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_BO_IMPORT, &im)) {
		int err = errno;

		free(*mem);
		*mem = NULL;
		if (err == EBADF || err == EINVAL || err == E2BIG)
			return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
					"%s: cannot import fd %d: %s", dev->path, fd,
					err == E2BIG ? "a dma-buf over 2 GiB" :
					err == EBADF ? "not an open file" :
					"not a dma-buf, or not in whole pages");
		if (err == EOPNOTSUPP)
			return nnp_fail(NNP_ERROR_NOT_SUPPORTED,
					"%s: cannot import fd %d: its exporter is not one nnp takes "
					"(nnp, udmabuf, the system dma-buf heap)", dev->path, fd);
		return nnp_ioctl_failed(dev, "importing a dma-buf", err);
	}
	(*mem)->handle = im.handle;
	(*mem)->key = im.key;
	(*mem)->size = im.size;
	return NNP_SUCCESS;
}

nnp_result_t nnp_mem_export(nnp_mem_t *mem, int *fd)
{
	if (!mem || !fd)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_mem_export: no memory or no fd");
	if (drmPrimeHandleToFD(mem->dev->fd, mem->handle, DRM_CLOEXEC | DRM_RDWR, fd))
		return nnp_ioctl_failed(mem->dev, "exporting memory", errno);
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
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT, "nnp_mem_map: no memory or no pointer");
	if (mem->kind == NNP_MEM_IMPORTED)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_mem_map: imported memory is mapped through its dma-buf");
	if (!mem->map) {
		size_t page = nnp_page_size();

		len = (mem->size + page - 1) / page * page;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 mem->dev->fd, (off_t)mem->mmap_offset);
		if (p == MAP_FAILED)
			return nnp_ioctl_failed(mem->dev, "mapping memory", errno);
		mem->map = p;
		mem->map_len = len;
	}
	*ptr = mem->map;
	return NNP_SUCCESS;
}

nnp_result_t nnp_mem_get_info(nnp_device_t *dev, uint64_t *free_bytes,
			      uint64_t *total_bytes)
{
	struct drm_nnp_device_info di = { 0 };
	struct drm_nnp_counters c = { 0 };
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_DEVICE_INFO, .size = sizeof(di),
		.data = (uintptr_t)&di,
	};

	if (!dev || !free_bytes || !total_bytes)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"nnp_mem_get_info: no device, free or total");
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q))
		return nnp_ioctl_failed(dev, "the device info query", errno);
	q = (struct drm_nnp_query){
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uintptr_t)&c,
	};
	if (drmIoctl(dev->fd, DRM_IOCTL_NNP_QUERY, &q))
		return nnp_ioctl_failed(dev, "the counters query", errno);
	*total_bytes = di.mem_size;
	*free_bytes = c.mem_used < di.mem_size ? di.mem_size - c.mem_used : 0;
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
