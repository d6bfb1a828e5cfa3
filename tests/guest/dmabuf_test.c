// SPDX-License-Identifier: MIT
/*
 * dma-buf both ways (driver 1.13, libnnp 0.9), on the guest's two devices:
 * a udmabuf (memfd pages) imported, counted as shared in fdinfo, and
 * copied in and out at odd offsets, byte for byte, and a system dma-buf
 * heap's buffer the same way; device 0's device memory exported, imported
 * by device 1 and copied both ways by device 1's engine alone (device 0
 * runs no command and moves no byte; device 1 counts them as peer bytes,
 * hardware 1.24, none as host bytes), and device 0's host memory the same
 * way (as host bytes); the exporter's file closed before the copy, the
 * importer's before the exporter's; a read-only import refusing a write
 * (ACCESS_DENIED); device 0 reset under device 1's copies (each done or
 * DMA_ERROR, none hung; the import taken back by the reset, KEY_INVALID,
 * and the dma-buf imported again reaching the memory); the import
 * ioctl's errnos (unknown flags, a closed fd, a pipe, a memfd,
 * PRIME_FD_TO_HANDLE of a udmabuf, while PRIME_FD_TO_HANDLE of the
 * device's own export gives its object back; vgem's dma-buf, an exporter
 * nnp does not take: EOPNOTSUPP); an unbind of device 1
 * taking its exported memory back from device 0, whose next copy fails
 * (KEY_INVALID) and writes nothing into the memory device 1's next
 * binding hands out; rmmod refused while only a dma-buf of nnp is open,
 * done once it is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <linux/dma-buf.h>
#include <linux/dma-heap.h>
#include <linux/udmabuf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>
#include "nnp_hw.h"

#include "guest_env.h"
#include "pci_bind.h"
#include "kselftest_harness.h"

#define MIB	(1u << 20)

/* A udmabuf of @size bytes over a sealed memfd, mapped at *@map. */
static int udmabuf_new(size_t size, int *memfd, uint8_t **map)
{
	struct udmabuf_create c = { .size = size };
	int dev, buf;

	*memfd = memfd_create("nnp-dmabuf-test", MFD_ALLOW_SEALING);
	if (*memfd < 0 || ftruncate(*memfd, size) ||
	    fcntl(*memfd, F_ADD_SEALS, F_SEAL_SHRINK))
		return -1;
	*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *memfd, 0);
	if (*map == MAP_FAILED)
		return -1;
	dev = open("/dev/udmabuf", O_RDWR);
	if (dev < 0)
		return -1;
	c.memfd = *memfd;
	buf = ioctl(dev, UDMABUF_CREATE, &c);
	close(dev);
	return buf;
}

static struct nnp_device_counters counters(nnp_device_t *dev)
{
	struct nnp_device_counters c = { .size = sizeof(c) };

	if (nnp_device_get_counters(dev, &c))
		memset(&c, 0xff, sizeof(c));
	return c;
}

/* fdinfo's value of @key for the device file @fd; UINT64_MAX if none. */
static uint64_t fdinfo_value(int fd, const char *key)
{
	char path[64], line[256];
	uint64_t v = UINT64_MAX;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static uint16_t stream_status(nnp_stream_t *s)
{
	struct nnp_stream_error e = { .size = sizeof(e) };

	return nnp_stream_error(s, &e) == NNP_SUCCESS ? 0 : e.status;
}

FIXTURE(two) {
	nnp_device_t *dev[2];
	nnp_stream_t *s1;
};

FIXTURE_SETUP(two)
{
	ASSERT_EQ(2, GUEST_CHIPS);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &self->dev[0]));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(1, &self->dev[1]));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[1], &self->s1));
}

FIXTURE_TEARDOWN(two)
{
	nnp_stream_destroy(self->s1);
	nnp_device_close(self->dev[1]);
	if (self->dev[0])
		nnp_device_close(self->dev[0]);
}

/* A udmabuf: in from it at an odd offset, back out to another, exact. */
TEST_F(two, udmabuf_copied_in_and_out)
{
	size_t size = 4 * MIB + 3 * 4096, len = 3 * MIB + 1234;
	uint8_t *map, *want = malloc(len), *dmap;
	nnp_mem_t *buf, *d;
	int memfd, fd;

	fd = udmabuf_new(size, &memfd, &map);
	ASSERT_LE(0, fd);
	guest_pattern(map + 77, len, 1);
	memcpy(want, map + 77, len);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[1], fd, 0, &buf));
	close(fd);
	EXPECT_EQ(size, nnp_mem_size(buf));
	EXPECT_EQ(NNP_MEM_IMPORTED, nnp_mem_kind(buf));
	/* Shared with its exporter, as DRM counts an import. */
	EXPECT_EQ(size, fdinfo_value(nnp_device_fd(self->dev[1]), "drm-shared-host"));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[1], NNP_MEM_DEVICE,
					     4 * MIB, 0, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, d, 5, buf, 77, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, buf, size - len - 3,
						d, 5, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s1));
	EXPECT_EQ(0, memcmp(want, map + size - len - 3, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(d, (void **)&dmap));
	EXPECT_EQ(0, memcmp(want, dmap + 5, len));
	/* Imported memory is mapped through its dma-buf, not here. */
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_mem_map(buf, (void **)&dmap));
	nnp_mem_free(d);
	nnp_mem_free(buf);
	munmap(map, size);
	close(memfd);
	free(want);
}

/*
 * A third exporter, the system dma-buf heap (Debian's kernel has one; the
 * debug kernel has none, and skips): its buffer imported and copied in and
 * out exactly, the CPU's accesses bracketed by DMA_BUF_IOCTL_SYNC.
 */
TEST_F(two, system_heap_buffer_copied_in_and_out)
{
	struct dma_heap_allocation_data a = {
		.len = MIB, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	struct dma_buf_sync sync = { .flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_RW };
	int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	uint8_t *map, *want = malloc(MIB);
	nnp_mem_t *buf, *d;

	if (heap < 0)
		SKIP(return, "no system dma-buf heap (the debug kernel has none)");
	ASSERT_EQ(0, ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &a));
	close(heap);
	map = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, a.fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, ioctl(a.fd, DMA_BUF_IOCTL_SYNC, &sync));
	guest_pattern(map, MIB, 7);
	memcpy(want, map, MIB);
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_RW;
	ASSERT_EQ(0, ioctl(a.fd, DMA_BUF_IOCTL_SYNC, &sync));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[1], a.fd, 0, &buf));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[1], NNP_MEM_DEVICE,
					     MIB, 0, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, d, 0, buf, 0, MIB / 2));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, buf, MIB / 2, d, 0,
						MIB / 2));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s1));
	sync.flags = DMA_BUF_SYNC_START | DMA_BUF_SYNC_READ;
	ASSERT_EQ(0, ioctl(a.fd, DMA_BUF_IOCTL_SYNC, &sync));
	EXPECT_EQ(0, memcmp(map + MIB / 2, want, MIB / 2));
	EXPECT_EQ(0, memcmp(map, want, MIB / 2));
	sync.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ;
	ASSERT_EQ(0, ioctl(a.fd, DMA_BUF_IOCTL_SYNC, &sync));
	nnp_mem_free(d);
	nnp_mem_free(buf);
	munmap(map, MIB);
	close(a.fd);
	free(want);
}

/*
 * Device 0's memory of @kind, exported and imported by device 1, copied
 * both ways by device 1 alone: device 0 completes no command and moves no
 * host byte.
 */
static void peer_copies(struct __test_metadata *_metadata,
			FIXTURE_DATA(two) *self, enum nnp_mem_kind kind)
{
	size_t size = 8 * MIB, len = 8 * MIB - 4096 - 9;
	uint8_t *want = malloc(size), *p0, *p1;
	struct nnp_device_counters c0, c1, now;
	nnp_mem_t *spacer, *m0, *peer, *d1;
	int fd;

	/* Not at the start of the device's memory or the first host pages. */
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[0], kind, MIB, 0, &spacer));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[0], kind, size, 0, &m0));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(m0, (void **)&p0));
	guest_pattern(want, size, kind + 2);
	memcpy(p0, want, size);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_export(m0, &fd));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[1], fd, 0, &peer));
	close(fd);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[1], NNP_MEM_DEVICE,
					     size, 0, &d1));
	c0 = counters(self->dev[0]);
	c1 = counters(self->dev[1]);
	/* In from the peer at an odd offset, then back to it at another. */
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, d1, 3, peer, 9, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, peer, 4096, d1, 3, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s1));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(d1, (void **)&p1));
	EXPECT_EQ(0, memcmp(p1 + 3, want + 9, len));
	EXPECT_EQ(0, memcmp(p0 + 4096, want + 9, len));
	EXPECT_EQ(0, memcmp(p0, want, 4096));
	/* Device 0 did nothing; device 1 moved 2 x len over the bus. */
	now = counters(self->dev[0]);
	EXPECT_EQ(c0.host_dma_bytes, now.host_dma_bytes);
	EXPECT_EQ(c0.peer_dma_bytes, now.peer_dma_bytes);
	EXPECT_EQ(c0.cmds_completed, now.cmds_completed);
	now = counters(self->dev[1]);
	/* Another device's memory is peer bytes, host pages host bytes. */
	EXPECT_EQ(c1.host_dma_bytes + (kind == NNP_MEM_HOST ? 2 * len : 0),
		  now.host_dma_bytes);
	EXPECT_EQ(c1.peer_dma_bytes + (kind == NNP_MEM_DEVICE ? 2 * len : 0),
		  now.peer_dma_bytes);
	nnp_mem_free(d1);
	nnp_mem_free(peer);
	nnp_mem_free(m0);
	nnp_mem_free(spacer);
	free(want);
}

TEST_F(two, device_memory_copied_by_the_peer)
{
	peer_copies(_metadata, self, NNP_MEM_DEVICE);
}

TEST_F(two, host_memory_copied_by_the_peer)
{
	peer_copies(_metadata, self, NNP_MEM_HOST);
}

/*
 * The exporter's object, handle and device closed before the importer
 * copies: the dma-buf holds the memory, whose bytes are still there.
 */
TEST_F(two, exporter_closed_first)
{
	nnp_mem_t *m0, *peer, *h1;
	uint8_t *p;
	int fd;

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[0], NNP_MEM_DEVICE,
					     MIB, 0, &m0));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(m0, (void **)&p));
	memset(p, 0x5c, MIB);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_export(m0, &fd));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[1], fd, 0, &peer));
	close(fd);
	nnp_mem_free(m0);
	nnp_device_close(self->dev[0]);
	self->dev[0] = NULL;
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[1], NNP_MEM_HOST,
					     MIB, 0, &h1));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, h1, 0, peer, 0, MIB));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s1));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h1, (void **)&p));
	EXPECT_EQ(0x5c, p[0]);
	EXPECT_EQ(0x5c, p[MIB - 1]);
	nnp_mem_free(h1);
	nnp_mem_free(peer);
}

/* The importer gone first: the exporter's object and dma-buf still work. */
TEST_F(two, importer_closed_first)
{
	nnp_mem_t *m0, *peer, *again;
	nnp_stream_t *s0;
	uint8_t *p;
	int fd;

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[0], NNP_MEM_DEVICE,
					     MIB, 0, &m0));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_export(m0, &fd));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[1], fd, 0, &peer));
	nnp_mem_free(peer);
	/* Device 0 imports its own export: its own BAR, through the bus. */
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[0], fd, 0, &again));
	close(fd);
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev[0], &s0));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(s0, again, 1, 0x3e, MIB - 2));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(s0));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(m0, (void **)&p));
	EXPECT_EQ(0, p[0]);
	EXPECT_EQ(0x3e, p[1]);
	EXPECT_EQ(0x3e, p[MIB - 2]);
	EXPECT_EQ(0, p[MIB - 1]);
	nnp_stream_destroy(s0);
	nnp_mem_free(again);
	nnp_mem_free(m0);
}

/* READ_ONLY: the device reads the import and may not write it. */
TEST_F(two, read_only_import_refuses_writes)
{
	nnp_mem_t *buf, *d;
	uint8_t *map;
	int memfd, fd;

	fd = udmabuf_new(MIB, &memfd, &map);
	ASSERT_LE(0, fd);
	memset(map, 0x11, MIB);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[1], fd,
					      NNP_MEM_READ_ONLY, &buf));
	close(fd);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[1], NNP_MEM_DEVICE,
					     MIB, 0, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, d, 0, buf, 0, MIB));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s1));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s1, buf, 0, 0x22, 16));
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_synchronize(self->s1));
	EXPECT_EQ(NNP_STATUS_ACCESS_DENIED, stream_status(self->s1));
	EXPECT_EQ(0x11, map[0]);
	EXPECT_EQ(NNP_SUCCESS, nnp_stream_reset(self->s1));
	nnp_mem_free(d);
	nnp_mem_free(buf);
	munmap(map, MIB);
	close(memfd);
}

/*
 * Device 0 reset while device 1 copies from and to its exported memory:
 * device 1's copies end, each done or failed as DMA_ERROR (the memory is
 * out of reach while the device resets), never hung. The reset takes the
 * memory back from the importer, whose next copy fails as for an unknown
 * key; the dma-buf imported again reaches it, there and back.
 */
TEST_F(two, exporter_reset_while_copying)
{
	size_t size = 32 * MIB, i, wrong;
	nnp_event_t end = NNP_EVENT_INIT;
	nnp_mem_t *m0, *peer, *d1;
	nnp_result_t r;
	uint16_t st;
	bool busy;
	uint8_t *p;
	int fd, k;

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[0], NNP_MEM_DEVICE,
					     size, 0, &m0));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(m0, (void **)&p));
	memset(p, 0xa7, size);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_export(m0, &fd));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[1], fd, 0, &peer));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev[1], NNP_MEM_DEVICE,
					     size, 0, &d1));
	for (k = 0; k < 16; k++)
		ASSERT_EQ(NNP_SUCCESS, k % 2 ?
			  nnp_memcpy_async(self->s1, peer, 0, d1, 0, size) :
			  nnp_memcpy_async(self->s1, d1, 0, peer, 0, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_event_record(self->s1, &end));
	ASSERT_EQ(0, system("nnptool reset 0 >/dev/null"));
	/* Copies still queued once the reset is over: they ran across it. */
	busy = nnp_event_query(&end) == NNP_ERROR_NOT_READY;
	r = nnp_stream_synchronize(self->s1);
	st = stream_status(self->s1);
	TH_LOG("copies %s the reset: %s, status 0x%x",
	       busy ? "across" : "before", r == NNP_SUCCESS ? "done" : "failed", st);
	/*
	 * DMA_ERROR for a copy the reset met, KEY_INVALID for one still
	 * queued when the reset, at its end, took the memory back.
	 */
	if (r != NNP_SUCCESS) {
		EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, r);
		EXPECT_TRUE(st == NNP_STATUS_DMA_ERROR || st == NNP_STATUS_KEY_INVALID);
		EXPECT_EQ(NNP_SUCCESS, nnp_stream_reset(self->s1));
	}
	/* After the reset: taken back... */
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, d1, 0, peer, 0, size));
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_synchronize(self->s1));
	EXPECT_EQ(NNP_STATUS_KEY_INVALID, stream_status(self->s1));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_reset(self->s1));
	/* ...and imported again: there and back by device 1 alone. */
	nnp_mem_free(peer);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(self->dev[1], fd, 0, &peer));
	close(fd);
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s1, d1, 0, 0x5a, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, peer, 0, d1, 0, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s1, d1, 0, 0, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s1, d1, 0, peer, 0, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s1));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(d1, (void **)&p));
	for (i = 0, wrong = 0; i < size; i++)
		wrong += p[i] != 0x5a;
	EXPECT_EQ(0, wrong);
	nnp_mem_free(d1);
	nnp_mem_free(peer);
	nnp_mem_free(m0);
}

static int import_errno(int fd, int dmabuf, uint32_t flags)
{
	struct drm_nnp_bo_import im = { .fd = dmabuf, .flags = flags };

	return ioctl(fd, DRM_IOCTL_NNP_BO_IMPORT, &im) ? errno : 0;
}

TEST(import_errnos)
{
	int fd = guest_open_fd(0), other = guest_open_fd(0);
	int memfd, buf, pipes[2], own, i;
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC };
	struct drm_nnp_bo_create c;
	uint8_t *map;

	ASSERT_LE(0, fd);
	ASSERT_LE(0, other);
	buf = udmabuf_new(MIB, &memfd, &map);
	ASSERT_LE(0, buf);
	ASSERT_EQ(0, pipe(pipes));
	EXPECT_EQ(EINVAL, import_errno(fd, buf, 1u << 5));
	EXPECT_EQ(EINVAL, import_errno(fd, buf, DRM_NNP_BO_DEVICE));
	EXPECT_EQ(EBADF, import_errno(fd, -1, 0));
	EXPECT_EQ(EBADF, import_errno(fd, 4095, 0));
	EXPECT_EQ(EINVAL, import_errno(fd, pipes[0], 0));
	EXPECT_EQ(EINVAL, import_errno(fd, memfd, 0));
	/* DRM's own import gives no key: refused, the way to go named. */
	prime.fd = buf;
	EXPECT_EQ(-1, ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, import_errno(fd, buf, 0));
	/*
	 * ...but takes the device's own objects back, device memory too: in
	 * the exporting file its handle, in another file of the device a
	 * handle of the same object.
	 */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, guest_bo_create(fd, i ? DRM_NNP_BO_HOST :
					     DRM_NNP_BO_DEVICE, MIB, &c));
		prime = (struct drm_prime_handle){
			.handle = c.handle, .flags = DRM_CLOEXEC,
		};
		ASSERT_EQ(0, ioctl(fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
		own = prime.fd;
		prime = (struct drm_prime_handle){ .fd = own };
		EXPECT_EQ(0, ioctl(fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
		EXPECT_EQ(c.handle, prime.handle);
		prime = (struct drm_prime_handle){ .fd = own };
		EXPECT_EQ(0, ioctl(other, DRM_IOCTL_PRIME_FD_TO_HANDLE, &prime));
		EXPECT_NE(0, prime.handle);
		close(own);
	}
	close(other);
	close(pipes[0]);
	close(pipes[1]);
	close(buf);
	munmap(map, MIB);
	close(memfd);
	close(fd);
}

/*
 * vgem's dma-buf (a dumb buffer of shmem pages): an exporter nnp has not
 * been tested with is refused, EOPNOTSUPP, and nothing of it stays.
 */
/*
 * Two threads of one file, as a hostile user races them: one imports the
 * same udmabuf 200 times, the other closes every handle it can guess
 * meanwhile. Each import succeeds (a close frees its key as it goes);
 * once every handle is closed, the file holds no memory.
 */
struct import_race {
	int fd, buf, imported;
	atomic_bool done;
};

static void *import_many(void *arg)
{
	struct import_race *r = arg;
	int i;

	for (i = 0; i < 200; i++)
		r->imported += !import_errno(r->fd, r->buf, 0);
	atomic_store(&r->done, true);
	return NULL;
}

static void *close_guessed(void *arg)
{
	struct import_race *r = arg;
	uint32_t h;

	while (!atomic_load(&r->done))
		for (h = 1; h < 256; h++)
			guest_gem_close(r->fd, h);
	return NULL;
}

TEST(import_raced_with_close)
{
	struct import_race r = { .fd = guest_open_fd(0) };
	pthread_t importer, closer;
	uint8_t *map;
	uint32_t h;
	int memfd;

	ASSERT_LE(0, r.fd);
	r.buf = udmabuf_new(MIB, &memfd, &map);
	ASSERT_LE(0, r.buf);
	ASSERT_EQ(0, pthread_create(&closer, NULL, close_guessed, &r));
	ASSERT_EQ(0, pthread_create(&importer, NULL, import_many, &r));
	pthread_join(importer, NULL);
	pthread_join(closer, NULL);
	EXPECT_EQ(200, r.imported);
	for (h = 1; h < 1024; h++)
		guest_gem_close(r.fd, h);
	EXPECT_EQ(0, fdinfo_value(r.fd, "drm-total-host"));
	close(r.buf);
	munmap(map, MIB);
	close(memfd);
	close(r.fd);
}

TEST_F(two, other_exporter_refused)
{
	struct drm_mode_create_dumb dumb = { .width = 256, .height = 1024, .bpp = 32 };
	struct drm_prime_handle prime = { .flags = DRM_CLOEXEC };
	int fd = nnp_device_fd(self->dev[0]), vgem = -1, i;
	struct drm_version v;
	char path[32], name[16];
	nnp_mem_t *mem = NULL;

	if (system("for m in $(cat /etc/nnp-vgem-modules); do "
		   "insmod /lib/modules/$m.ko 2>/dev/null; done; "
		   "grep -q '^vgem ' /proc/modules"))
		SKIP(return, "no vgem module (the debug kernel has none)");
	for (i = 0; i < 8 && vgem < 0; i++) {
		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		vgem = open(path, O_RDWR | O_CLOEXEC);
		if (vgem < 0)
			continue;
		v = (struct drm_version){ .name = name, .name_len = sizeof(name) - 1 };
		memset(name, 0, sizeof(name));
		if (ioctl(vgem, DRM_IOCTL_VERSION, &v) || strcmp(name, "vgem")) {
			close(vgem);
			vgem = -1;
		}
	}
	ASSERT_LE(0, vgem);
	ASSERT_EQ(0, ioctl(vgem, DRM_IOCTL_MODE_CREATE_DUMB, &dumb));
	prime.handle = dumb.handle;
	ASSERT_EQ(0, ioctl(vgem, DRM_IOCTL_PRIME_HANDLE_TO_FD, &prime));
	EXPECT_EQ(MIB, lseek(prime.fd, 0, SEEK_END));
	EXPECT_EQ(EOPNOTSUPP, import_errno(fd, prime.fd, 0));
	EXPECT_EQ(NNP_ERROR_NOT_SUPPORTED, nnp_mem_import(self->dev[0], prime.fd, 0, &mem));
	EXPECT_EQ(NULL, mem);
	EXPECT_NE(NULL, strstr(nnp_get_last_error(), "exporter is not one nnp takes"));
	EXPECT_EQ(0, fdinfo_value(fd, "drm-total-host"));
	close(prime.fd);
	close(vgem);
}

/*
 * Unbinding device 1 takes its exported memory back from device 0: the
 * next copy through the import fails as for an unknown key, and nothing
 * reaches the memory device 1's next binding hands out. Device 1, the
 * last, as mem_limits_test unbinds: device 0 keeps its node for the tests
 * after this one.
 */
TEST(unbind_revokes_the_import)
{
	nnp_mem_t *m1, *peer, *h0, *fresh;
	nnp_device_t *dev0, *dev1;
	char addr[32], again[32];
	nnp_stream_t *s0;
	size_t i, hit;
	uint8_t *p;
	int fd;

	ASSERT_EQ(2, GUEST_CHIPS);
	pci_addr_of(1, addr, sizeof(addr));
	ASSERT_NE(0, addr[0]);
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev0));
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(1, &dev1));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev1, NNP_MEM_DEVICE, MIB, 0, &m1));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_export(m1, &fd));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_import(dev0, fd, 0, &peer));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev0, NNP_MEM_HOST, MIB, 0, &h0));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h0, (void **)&p));
	memset(p, 0x77, MIB);
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev0, &s0));
	nnp_mem_free(m1);
	nnp_device_close(dev1);
	ASSERT_EQ(0, unbind(addr));
	ASSERT_EQ(0, rebind(addr));
	/* Device 1's whole memory, as its next binding hands it out. */
	for (i = 0; i < 2; i++) {
		pci_addr_of(i, again, sizeof(again));
		if (!strcmp(addr, again))
			break;
	}
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(i, &dev1));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev1, NNP_MEM_DEVICE,
					     GUEST_MEM_SIZE, 0, &fresh));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s0, peer, 0, h0, 0, MIB));
	EXPECT_EQ(NNP_ERROR_COMMAND_FAILED, nnp_stream_synchronize(s0));
	EXPECT_EQ(NNP_STATUS_KEY_INVALID, stream_status(s0));
	/* Nothing of 0x77 anywhere in device 1's memory. */
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(fresh, (void **)&p));
	for (i = 0, hit = 0; i < GUEST_MEM_SIZE; i += 4096)
		hit += p[i] == 0x77 && p[i + 4095] == 0x77;
	EXPECT_EQ(0, hit);
	nnp_mem_free(fresh);
	nnp_device_close(dev1);
	close(fd);
	nnp_stream_destroy(s0);
	nnp_mem_free(h0);
	nnp_mem_free(peer);
	nnp_device_close(dev0);
}

/*
 * A dma-buf of nnp holds the module: with every file of the devices
 * closed, rmmod is refused while the dma-buf is open and works once it is
 * closed; the module is then loaded again for the tests after this one.
 */
TEST(rmmod_refused_while_a_dma_buf_is_open)
{
	nnp_device_t *dev;
	nnp_mem_t *m;
	int fd, count;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, MIB, 0, &m));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_export(m, &fd));
	nnp_mem_free(m);
	nnp_device_close(dev);
	EXPECT_NE(0, system("rmmod nnp 2>/dev/null"));
	close(fd);
	ASSERT_EQ(0, system("rmmod nnp"));
	ASSERT_EQ(0, system("nnp-load"));
	ASSERT_EQ(0, devices_back());
	ASSERT_EQ(NNP_SUCCESS, nnp_device_count(&count));
	EXPECT_EQ(GUEST_CHIPS, count);
}

TEST_HARNESS_MAIN
