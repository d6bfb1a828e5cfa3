// SPDX-License-Identifier: MIT
/*
 * Memory objects and DMA queues against nnp.ko and the device: byte-exact
 * copies and fills in every direction, every documented errno, isolation
 * enforced by the device (raw commands that bypass libnnp), a second
 * process locked out, the wait ioctl, and cleanup after kill -9.
 *
 * In detail (docs/testing.md has the summary):
 * copies in all nine directions between device, host and user memory from 1
 * byte to 256 MiB at odd offsets with guard bytes, fills, events, a host
 * object of 8 MiB + 3 pages taking its pages in physically contiguous runs
 * (a run of 512 pages at least, read from `/proc/self/pagemap`; no page
 * twice; zero when new; copied there and back byte for byte), user memory
 * on 64 physically scattered pages (no frame beside the previous one's,
 * from `/proc/self/pagemap`; one sg segment each) registered at an odd
 * start: copied both ways byte for byte with 100 guard bytes either side
 * untouched, 256 kB in `VmPin` until freed and 0 after, the same range then
 * registered again whole and copied with its new bytes; one thread creating
 * and closing device and host objects while another thread of the same file
 * maps and writes each (400 rounds): every refused mmap EACCES or EINVAL,
 * at least one mapping made, and no write ever seen in the object a second
 * file makes right after each close, 3 x 256 + 7 commands twice over
 * without a synchronize (lazy CQ_HEAD, a full completion ring; spinning and
 * with `NNP_SPIN_US=0`) landing in order, every memory and queue ioctl
 * errno, raw commands breaking each isolation rule, a second process locked
 * out, wait timeout/wake/EINTR, polled completions taking no interrupt
 * (`/proc/interrupts` unchanged) and two threads asleep on one completion
 * both woken, with exactly one interrupt, 40 times (hardware 1.9), a
 * shadow doorbell only when asked for, cleared, its event index set where
 * the device stopped, a tail past the depth there stopping the queue and a
 * reset clearing it (hardware 1.11), revoked doorbells, kill -9 mid-DMA
 * giving all memory back
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nnp/nnp.h>
#include <nnp_accel.h>
#include "nnp_hw.h"

#include "guest_env.h"
#include "kselftest_harness.h"

#define GUARD 0xa5

static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static struct drm_nnp_counters counters(int fd)
{
	struct drm_nnp_counters c;
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uintptr_t)&c,
	};

	memset(&c, 0xff, sizeof(c));
	if (ioctl(fd, DRM_IOCTL_NNP_QUERY, &q))
		memset(&c, 0xee, sizeof(c));
	return c;
}

static size_t first_diff(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i;

	if (!memcmp(a, b, n))
		return n;
	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			break;
	return i;
}

static size_t first_not(const uint8_t *p, size_t n, uint8_t v)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return i;
	return n;
}

FIXTURE(lib) {
	nnp_device_t *dev;
	nnp_stream_t *s;
};

FIXTURE_SETUP(lib)
{
	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &self->dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(self->dev, &self->s));
}

FIXTURE_TEARDOWN(lib)
{
	nnp_stream_destroy(self->s);
	nnp_device_close(self->dev);
}

/*
 * Every direction between device, host and registered user memory, for
 * sizes from 1 byte up, at odd offsets, with guard bytes around each
 * destination range checked untouched.
 */
TEST_F(lib, copies_are_byte_exact_in_every_direction)
{
	static const size_t sizes[] = { 1, 3, 4095, 4097, 65537, (1 << 20) + 13,
					16 << 20 };
	const size_t cap = (16 << 20) + 8192;
	enum nnp_mem_kind kinds[] = { NNP_MEM_DEVICE, NNP_MEM_HOST, NNP_MEM_USER };
	nnp_mem_t *m[3][2];
	uint8_t *p[3][2], *user[2];
	unsigned int si, a, b, k;

	for (k = 0; k < 3; k++) {
		for (a = 0; a < 2; a++) {
			if (kinds[k] == NNP_MEM_USER) {
				user[a] = mmap(NULL, cap, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				ASSERT_NE(MAP_FAILED, user[a]);
				/* Registered at an odd address on purpose. */
				ASSERT_EQ(NNP_SUCCESS,
					  nnp_mem_register(self->dev, user[a] + 5,
							   cap - 5, 0, &m[k][a]));
				p[k][a] = user[a] + 5;
			} else {
				ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, kinds[k],
								     cap, 0, &m[k][a]));
				ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(m[k][a],
								   (void **)&p[k][a]));
			}
		}
	}

	for (si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
		size_t len = sizes[si], soff = 7 + si, doff = 4093 - si;

		for (a = 0; a < 3; a++) {
			for (b = 0; b < 3; b++) {
				uint8_t *src = p[a][0], *dst = p[b][1];
				size_t at;

				guest_pattern(src + soff, len, si * 9 + a * 3 + b);
				memset(dst, GUARD, doff + len + 64);
				ASSERT_EQ(NNP_SUCCESS,
					  nnp_memcpy_async(self->s, m[b][1], doff,
							   m[a][0], soff, len));
				ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
				at = first_diff(dst + doff, src + soff, len);
				ASSERT_EQ(len, at)
					TH_LOG("%zu bytes %u->%u differ at %zu", len, a, b, at);
				ASSERT_EQ(doff, first_not(dst, doff, GUARD));
				ASSERT_EQ(64, first_not(dst + doff + len, 64, GUARD));
			}
		}
	}
	for (k = 0; k < 3; k++)
		for (a = 0; a < 2; a++)
			nnp_mem_free(m[k][a]);
	munmap(user[0], cap);
	munmap(user[1], cap);
}

/* TCG runs the guest's own pattern and check at a few hundred MB/s. */
TEST_F_TIMEOUT(lib, big_copies_256mib, 180)
{
	const size_t len = 256u << 20;
	nnp_mem_t *h, *d, *back;
	uint8_t *hp, *bp;

	if (GUEST_MEM_SIZE < 2 * len)
		SKIP(return, "needs 512 MiB of device memory");
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_HOST, len, 0, &h));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, 2 * len, 0, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_HOST, len, 0, &back));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h, (void **)&hp));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(back, (void **)&bp));
	guest_pattern(hp, len, 77);
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, d, 0, h, 0, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, d, len, d, 0, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, back, 0, d, len, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(len, first_diff(bp, hp, len));
	nnp_mem_free(h);
	nnp_mem_free(d);
	nnp_mem_free(back);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Page frame of the page at @p, from /proc/self/pagemap (root); 0 if none. */
static uint64_t pfn_of(int pagemap, const void *p)
{
	uint64_t e = 0;
	off_t at = (off_t)((uintptr_t)p / 4096 * sizeof(e));

	if (pread(pagemap, &e, sizeof(e), at) != sizeof(e) || !(e >> 63))
		return 0;
	return e & ((1ull << 55) - 1);
}

/*
 * A host object of 8 MiB and 3 pages takes its pages in contiguous runs
 * (the driver asks for 2 MiB ones, and a test VM has them free): at least
 * one run of 512 pages, and no page twice. It is zero when new, and copies
 * through the runs and back byte for byte.
 */
TEST_F(lib, host_memory_comes_in_contiguous_runs)
{
	const size_t pages = 2048 + 3, len = pages * 4096;
	size_t i, run = 1, longest = 1;
	nnp_mem_t *h, *d, *back;
	uint8_t *hp, *bp;
	uint64_t *pfn;
	int pagemap;

	pfn = calloc(pages, sizeof(*pfn));
	ASSERT_NE(NULL, pfn);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_HOST, len, 0, &h));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, len, 0, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_HOST, len, 0, &back));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h, (void **)&hp));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(back, (void **)&bp));
	ASSERT_EQ(len, first_not(hp, len, 0));
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, pagemap);
	for (i = 0; i < pages; i++) {
		pfn[i] = pfn_of(pagemap, hp + i * 4096);
		ASSERT_NE(0, pfn[i]) TH_LOG("page %zu", i);
		run = i && pfn[i] == pfn[i - 1] + 1 ? run + 1 : 1;
		if (run > longest)
			longest = run;
	}
	close(pagemap);
	EXPECT_LE(512, longest);
	qsort(pfn, pages, sizeof(*pfn), cmp_u64);
	for (i = 1; i < pages; i++)
		ASSERT_NE(pfn[i - 1], pfn[i]);
	guest_pattern(hp, len, 91);
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, d, 0, h, 0, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, back, 0, d, 0, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(len, first_diff(bp, hp, len));
	nnp_mem_free(h);
	nnp_mem_free(d);
	nnp_mem_free(back);
	free(pfn);
}

/*
 * User memory whose pages are physically apart: pages of a pool, each
 * chosen so that its frame is not beside the previous one's, moved under
 * one range with mremap(). Each page is then a segment of its own for the
 * driver. Registered at an odd start,
 * it copies to the device and back byte for byte, takes the device's
 * writes with the bytes around them untouched, and shows as pinned until
 * freed; the same range then registers again, whole, and copies its new
 * contents.
 */
TEST_F(lib, user_memory_on_scattered_pages_then_range_reused)
{
	const size_t pages = 64, len = pages * 4096, n = len - 200;
	size_t i, k, adjacent = 0;
	uint64_t pfn[64], pool_pfn[3 * 64];
	nnp_mem_t *u, *d, *h;
	uint8_t *pool, *buf, *hp;
	int pagemap;

	pool = mmap(NULL, 3 * len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, pool);
	ASSERT_NE(MAP_FAILED, buf);
	memset(pool, 1, 3 * len);
	pagemap = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_LE(0, pagemap);
	for (k = 0; k < 3 * pages; k++)
		pool_pfn[k] = pfn_of(pagemap, pool + k * 4096);
	/* No page's frame beside its left neighbour's: no two share a segment. */
	for (i = 0; i < pages; i++) {
		for (k = 0; k < 3 * pages; k++)
			if (pool_pfn[k] && (!i || (pool_pfn[k] != pfn[i - 1] + 1 &&
						   pool_pfn[k] + 1 != pfn[i - 1])))
				break;
		ASSERT_GT(3 * pages, k) TH_LOG("no page for %zu", i);
		ASSERT_EQ(buf + i * 4096,
			  mremap(pool + k * 4096, 4096, 4096,
				 MREMAP_MAYMOVE | MREMAP_FIXED, buf + i * 4096));
		pfn[i] = pool_pfn[k];
		pool_pfn[k] = 0;
	}
	for (i = 0; i < pages; i++) {
		pfn[i] = pfn_of(pagemap, buf + i * 4096);
		ASSERT_NE(0, pfn[i]) TH_LOG("page %zu", i);
		adjacent += i && pfn[i] == pfn[i - 1] + 1;
	}
	close(pagemap);
	ASSERT_EQ(0, adjacent);

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, len, 0, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_HOST, len, 0, &h));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h, (void **)&hp));
	ASSERT_EQ(0, status_kb("VmPin"));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_register(self->dev, buf + 100, n, 0, &u));
	EXPECT_EQ(pages * 4, status_kb("VmPin"));
	/* User to device to host. */
	guest_pattern(buf + 100, n, 5);
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, d, 0, u, 0, n));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, h, 0, d, 0, n));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(n, first_diff(hp, buf + 100, n));
	/* Host to device to user, the bytes around the range untouched. */
	memset(buf, GUARD, len);
	guest_pattern(hp, n, 6);
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, d, 0, h, 0, n));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, u, 0, d, 0, n));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(n, first_diff(buf + 100, hp, n));
	EXPECT_EQ(100, first_not(buf, 100, GUARD));
	EXPECT_EQ(100, first_not(buf + 100 + n, 100, GUARD));
	nnp_mem_free(u);
	EXPECT_EQ(0, status_kb("VmPin"));

	/* The range again, whole: its new bytes, not the old pin's. */
	guest_pattern(buf, len, 7);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_register(self->dev, buf, len, 0, &u));
	EXPECT_EQ(pages * 4, status_kb("VmPin"));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, d, 0, u, 0, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, h, 0, d, 0, len));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	ASSERT_EQ(len, first_diff(hp, buf, len));
	nnp_mem_free(u);
	EXPECT_EQ(0, status_kb("VmPin"));
	nnp_mem_free(h);
	nnp_mem_free(d);
	munmap(buf, len);
	munmap(pool, 3 * len);
}

TEST_F(lib, fills_and_events)
{
	nnp_mem_t *d, *h;
	uint8_t *dp, *hp;
	nnp_event_t ev = NNP_EVENT_INIT;

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, 1 << 20, 0, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_HOST, 1 << 20, 0, &h));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(d, (void **)&dp));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h, (void **)&hp));
	/* New memory is zero, never a previous owner's data. */
	ASSERT_EQ(1 << 20, first_not(dp, 1 << 20, 0));
	ASSERT_EQ(1 << 20, first_not(hp, 1 << 20, 0));
	memset(hp, GUARD, 1 << 20);
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s, d, 3, 0x5c, 70001));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(self->s, h, 0, d, 0, 1 << 20));
	ASSERT_EQ(NNP_SUCCESS, nnp_event_record(self->s, &ev));
	ASSERT_EQ(NNP_SUCCESS, nnp_event_synchronize(&ev, 10ll * 1000000000));
	ASSERT_EQ(NNP_SUCCESS, nnp_event_query(&ev));
	EXPECT_EQ(3, first_not(hp, 3, 0));
	EXPECT_EQ(70001, first_not(hp + 3, 70001, 0x5c));
	EXPECT_EQ(0, hp[70004]);
	nnp_mem_free(d);
	nnp_mem_free(h);
}

/*
 * Several times the ring's depth of commands, never synchronized: submit
 * waits for room, CQ_HEAD is written lazily, and the device, stopped on a
 * full completion ring, must start again. Each fill writes its own byte,
 * so a lost, repeated or reordered command shows in the result. Once with
 * the wait's spin (the default) and once sleeping at once (NNP_SPIN_US=0).
 */
static void many_fills_in_order(struct __test_metadata *_metadata,
				nnp_device_t *dev, const char *spin_us)
{
	const size_t n = 3 * 256 + 7;
	nnp_stream_t *s;
	nnp_mem_t *d, *h;
	uint8_t *hp;
	size_t i;

	ASSERT_EQ(0, setenv("NNP_SPIN_US", spin_us, 1));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev, &s));
	ASSERT_EQ(0, unsetenv("NNP_SPIN_US"));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, n, 0, &d));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_HOST, n, 0, &h));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h, (void **)&hp));
	for (i = 0; i < n; i++)
		ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(s, d, i, (uint8_t)(i * 7 + 1), 1));
	/* Every byte again, overwritten in order: the last fill wins. */
	for (i = 0; i < n; i++)
		ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(s, d, i, (uint8_t)(i * 13 + 5), 1));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s, h, 0, d, 0, n));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(s));
	for (i = 0; i < n; i++)
		ASSERT_EQ((uint8_t)(i * 13 + 5), hp[i]) TH_LOG("byte %zu", i);
	nnp_mem_free(h);
	nnp_mem_free(d);
	nnp_stream_destroy(s);
}

TEST_F(lib, many_commands_in_order_spinning)
{
	many_fills_in_order(_metadata, self->dev, "50");
}

TEST_F(lib, many_commands_in_order_sleeping)
{
	many_fills_in_order(_metadata, self->dev, "0");
}

/* Fills straight into host and registered user memory, across pages. */
TEST_F(lib, fills_host_and_user_memory)
{
	const size_t n = 3 * 4096 + 100;
	uint8_t *user = malloc(n + 64);
	nnp_mem_t *h, *u;
	uint8_t *hp;

	ASSERT_NE(NULL, user);
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_HOST, n, 0, &h));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(h, (void **)&hp));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_register(self->dev, user + 1, n, 0, &u));
	memset(hp, GUARD, n);
	memset(user, GUARD, n + 64);
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s, h, 4095, 0x11, 4098));
	ASSERT_EQ(NNP_SUCCESS, nnp_memset_async(self->s, u, 1, 0x22, n - 1));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(self->s));
	EXPECT_EQ(4095, first_not(hp, 4095, GUARD));
	EXPECT_EQ(4098, first_not(hp + 4095, 4098, 0x11));
	EXPECT_EQ(n - 8193, first_not(hp + 8193, n - 8193, GUARD));
	EXPECT_EQ(2, first_not(user, 2, GUARD));
	EXPECT_EQ(n - 1, first_not(user + 2, n - 1, 0x22));
	EXPECT_EQ(63, first_not(user + n + 1, 63, GUARD));
	nnp_mem_free(u);
	nnp_mem_free(h);
	free(user);
}

TEST_F(lib, library_checks_arguments)
{
	nnp_mem_t *d;

	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, 4096, 0, &d));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_memcpy_async(self->s, d, 1, d, 0, 4096));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_memset_async(self->s, d, 4097, 0, 0));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, 0, 0, &d));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT, nnp_mem_alloc(self->dev, NNP_MEM_USER, 64, 0, &d));
	EXPECT_EQ(NNP_ERROR_OUT_OF_DEVICE_MEMORY,
		  nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, GUEST_MEM_SIZE, 0, &d));
	EXPECT_EQ(NNP_ERROR_INVALID_ARGUMENT,
		  nnp_mem_alloc(self->dev, NNP_MEM_DEVICE, 2 * GUEST_MEM_SIZE, 0, &d));
}

/* ---- raw ioctls ---- */

FIXTURE(raw) {
	int fd;
	int other;		/* a second open file: another context */
	struct drm_nnp_queue_create qc;
	struct nnp_hw_queue_cmd *sq;
	volatile struct nnp_hw_cqe *cq;
	volatile uint32_t *db;
	uint32_t tail;		/* commands submitted */
};

static uint32_t bo(int fd, uint32_t flags, uint64_t size, uint8_t **map)
{
	struct drm_nnp_bo_create c = { .size = size, .flags = flags };

	if (ioctl(fd, DRM_IOCTL_NNP_BO_CREATE, &c))
		return 0;
	if (map)
		*map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
			    c.mmap_offset);
	return c.key;
}

FIXTURE_SETUP(raw)
{
	self->fd = guest_open_fd(0);
	self->other = guest_open_fd(0);
	ASSERT_GE(self->fd, 0);
	ASSERT_GE(self->other, 0);
	self->qc = (struct drm_nnp_queue_create){ .depth = 8 };
	ASSERT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &self->qc));
	self->sq = mmap(NULL, self->qc.ring_size, PROT_READ | PROT_WRITE,
			MAP_SHARED, self->fd, self->qc.ring_mmap_offset);
	ASSERT_NE(MAP_FAILED, self->sq);
	self->cq = (void *)((char *)self->sq + self->qc.cq_offset);
	self->db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
			self->fd, self->qc.doorbell_mmap_offset);
	ASSERT_NE(MAP_FAILED, self->db);
}

FIXTURE_TEARDOWN(raw)
{
	close(self->other);
	close(self->fd);
}

/* Put @c in the next slot and ring the doorbell: the slot. */
static uint32_t raw_submit(struct _test_data_raw *self,
			   struct nnp_hw_queue_cmd c)
{
	uint32_t slot = self->tail % self->qc.depth;

	c.cid = (uint16_t)(0x100 + slot);
	self->sq[slot] = c;
	self->tail++;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	self->db[NNP_DB_SQ_TAIL / 4] = self->tail % self->qc.depth;
	return slot;
}

/* The phase the completion of the next command submitted will carry. */
static uint32_t raw_next_phase(const struct _test_data_raw *self)
{
	return (self->tail / self->qc.depth + 1) & 1;
}

/* Submit @c in the next slot and wait for its completion: its status. */
static int raw_run(struct _test_data_raw *self, struct nnp_hw_queue_cmd c)
{
	struct drm_nnp_queue_wait w = {
		.qid = self->qc.qid, .phase = raw_next_phase(self),
		.timeout_ns = 10ll * 1000000000,
	};
	uint32_t slot = raw_submit(self, c);
	int ret;

	w.cq_index = slot;
	ret = xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w);
	if (ret)
		return ret;
	if (self->cq[slot].cid != 0x100 + slot)
		return -1000;
	self->db[NNP_DB_CQ_HEAD / 4] = self->tail % self->qc.depth;
	return self->cq[slot].status;
}

static void raw_reset(struct _test_data_raw *self)
{
	struct drm_nnp_queue_op op = { .qid = self->qc.qid };

	ioctl(self->fd, DRM_IOCTL_NNP_QUEUE_RESET, &op);
	self->tail = 0;
}

TEST_F(raw, bo_create_errnos)
{
	struct drm_nnp_bo_create c;
	struct drm_nnp_bo_userptr u;
	char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	c = (struct drm_nnp_bo_create){ .size = 4096 };
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.flags = DRM_NNP_BO_DEVICE | DRM_NNP_BO_HOST;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.flags = DRM_NNP_BO_DEVICE | 0x100;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.flags = DRM_NNP_BO_DEVICE;
	c.reserved = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.reserved = 0;
	c.size = 0;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.size = GUEST_MEM_SIZE + 1;
	EXPECT_EQ(-E2BIG, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.size = UINT64_MAX;
	EXPECT_EQ(-E2BIG, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.size = GUEST_MEM_SIZE;
	ASSERT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.size = 4096;
	EXPECT_EQ(-ENOSPC, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	c.flags = DRM_NNP_BO_HOST;
	c.size = 5ull << 30;
	EXPECT_EQ(-E2BIG, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));

	u = (struct drm_nnp_bo_userptr){ .user_ptr = 4096, .size = 4096 };
	EXPECT_EQ(-EFAULT, xioctl(self->fd, DRM_IOCTL_NNP_BO_USERPTR, &u));
	u.user_ptr = (uintptr_t)ro;
	EXPECT_EQ(-EFAULT, xioctl(self->fd, DRM_IOCTL_NNP_BO_USERPTR, &u));
	u.flags = DRM_NNP_BO_READ_ONLY;
	EXPECT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_BO_USERPTR, &u));
	u.flags = 8;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_BO_USERPTR, &u));
	u.flags = 0;
	u.size = 0;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_BO_USERPTR, &u));
}

/*
 * One thread makes objects, device and host in turn, and closes each
 * handle; another thread of the same file maps each one at the same time
 * and writes to it. A mapping keeps its object alive: the write must never
 * show in an object a second file makes right after the close (device
 * memory comes back at the same offsets, host pages likely so), which the
 * writer has no way to map. mmap() after the close is refused with EACCES
 * (the handle's grant is gone) or EINVAL (so is the offset).
 */
struct free_race {
	int fd;
	atomic_ullong offset;	/* the newest object's; 0 once closed */
	atomic_bool stop;
	atomic_uint mapped, refused, bad;
	atomic_int bad_errno;
};

static void *free_race_mapper(void *arg)
{
	struct free_race *r = arg;
	volatile uint32_t *p;
	uint64_t off;

	while (!atomic_load(&r->stop)) {
		off = atomic_load(&r->offset);
		if (!off)
			continue;
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd,
			 (off_t)off);
		if (p == MAP_FAILED) {
			if (errno == EACCES || errno == EINVAL) {
				atomic_fetch_add(&r->refused, 1);
			} else {
				atomic_fetch_add(&r->bad, 1);
				atomic_store(&r->bad_errno, errno);
			}
			continue;
		}
		p[0] = 0xdeadbeef;
		if (p[0] != 0xdeadbeef)
			atomic_fetch_add(&r->bad, 1);
		atomic_fetch_add(&r->mapped, 1);
		munmap((void *)p, 4096);
	}
	return NULL;
}

/* Make an object of @flags on @fd: its handle, and its offset in @offset. */
static uint32_t page_bo(int fd, uint32_t flags, uint64_t *offset)
{
	struct drm_nnp_bo_create c = { .size = 4096, .flags = flags };

	if (xioctl(fd, DRM_IOCTL_NNP_BO_CREATE, &c))
		return 0;
	*offset = c.mmap_offset;
	return c.handle;
}

static int close_bo(int fd, uint32_t handle)
{
	struct drm_gem_close cl = { .handle = handle };

	return xioctl(fd, DRM_IOCTL_GEM_CLOSE, &cl);
}

TEST_F_TIMEOUT(raw, free_races_mmap_on_one_file, 120)
{
	struct free_race r = { .fd = self->fd };
	unsigned int i, dirty = 0;
	uint32_t handle, flags;
	uint64_t offset;
	uint32_t *probe;
	pthread_t t;

	ASSERT_EQ(0, pthread_create(&t, NULL, free_race_mapper, &r));
	for (i = 0; i < 400; i++) {
		flags = i & 1 ? DRM_NNP_BO_HOST : DRM_NNP_BO_DEVICE;
		handle = page_bo(self->fd, flags, &offset);
		ASSERT_NE(0, handle);
		atomic_store(&r.offset, offset);
		usleep(i % 50);
		atomic_store(&r.offset, 0);
		ASSERT_EQ(0, close_bo(self->fd, handle));

		handle = page_bo(self->other, flags, &offset);
		ASSERT_NE(0, handle);
		probe = mmap(NULL, 4096, PROT_READ, MAP_SHARED, self->other,
			     (off_t)offset);
		ASSERT_NE(MAP_FAILED, probe);
		dirty += probe[0] != 0;
		munmap(probe, 4096);
		ASSERT_EQ(0, close_bo(self->other, handle));
	}
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	TH_LOG("%u mapped, %u refused", atomic_load(&r.mapped),
	       atomic_load(&r.refused));
	EXPECT_EQ(0, dirty);
	EXPECT_EQ(0, atomic_load(&r.bad)) TH_LOG("errno %d", atomic_load(&r.bad_errno));
	EXPECT_LT(0, atomic_load(&r.mapped));
}

TEST_F(raw, queue_ioctl_errnos)
{
	struct drm_nnp_queue_create qc = { .depth = 3 };
	struct drm_nnp_queue_op op = { .qid = 63 };
	struct drm_nnp_queue_wait w = { .qid = self->qc.qid, .timeout_ns = 1 };

	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc));
	qc.depth = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc));
	qc.depth = 1 << 17;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc));
	qc.depth = 8;
	qc.flags = ~DRM_NNP_QUEUE_SHADOW_DOORBELL;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc));
	qc.flags = 0;
	qc.shadow_offset = 64;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc));
	qc.shadow_offset = 0;
	qc.pad = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc));
	EXPECT_EQ(-ENOENT, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &op));
	EXPECT_EQ(-ENOENT, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_RESET, &op));
	op.qid = self->qc.qid;
	op.flags = 1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_RESET, &op));
	/* Another file cannot touch this file's queue. */
	op.flags = 0;
	EXPECT_EQ(-ENOENT, xioctl(self->other, DRM_IOCTL_NNP_QUEUE_DESTROY, &op));
	EXPECT_EQ(-ENOENT, xioctl(self->other, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
	w.cq_index = 8;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
	w.cq_index = 0;
	w.phase = 2;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
	w.phase = 1;
	w.timeout_ns = -1;
	EXPECT_EQ(-EINVAL, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
}

/* Poll @cond for up to a second; its last value. */
#define WITHIN_A_SECOND(cond) ({					\
	int n_ = 0;							\
	while (!(cond) && n_++ < 1000)					\
		usleep(1000);						\
	(cond);								\
})

/*
 * A shadow doorbell only for a queue that asks (hardware 1.11), in its
 * own cache line of the ring mapping, cleared; the device says where it
 * stopped, and reads the owner's tail there once the queue runs out, so
 * a tail past the depth stops the queue as such a doorbell write does. A
 * reset clears both words.
 */
TEST_F(raw, shadow_doorbell_is_asked_for_and_checked)
{
	struct drm_nnp_queue_create qc = {
		.depth = 8, .flags = DRM_NNP_QUEUE_SHADOW_DOORBELL,
	};
	struct drm_nnp_queue_wait w = { .phase = 1, .timeout_ns = 10ll * 1000000000 };
	struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };
	volatile struct nnp_hw_queue_shadow *sh;
	struct drm_nnp_queue_op op = { 0 };
	volatile struct nnp_hw_cqe *cq;
	struct nnp_hw_queue_cmd *sq;
	volatile uint32_t *db;

	EXPECT_EQ(0u, self->qc.shadow_offset);
	ASSERT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc));
	ASSERT_NE(0u, qc.shadow_offset);
	EXPECT_EQ(0u, qc.shadow_offset % 64);
	EXPECT_GE(qc.shadow_offset, qc.cq_offset + 8 * sizeof(struct nnp_hw_cqe));
	ASSERT_LE(qc.shadow_offset + sizeof(*sh), qc.ring_size);
	sq = mmap(NULL, qc.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		  self->fd, qc.ring_mmap_offset);
	db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		  qc.doorbell_mmap_offset);
	ASSERT_NE(MAP_FAILED, sq);
	ASSERT_NE(MAP_FAILED, db);
	cq = (void *)((char *)sq + qc.cq_offset);
	sh = (void *)((char *)sq + qc.shadow_offset);
	EXPECT_EQ(0u, sh->sq_tail);
	EXPECT_EQ(0u, sh->sq_event);

	nop.cid = 0x200;
	sq[0] = nop;
	sh->sq_tail = 1;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	db[NNP_DB_SQ_TAIL / 4] = 1;
	w.qid = qc.qid;
	ASSERT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
	EXPECT_EQ(0x200, cq[0].cid);
	EXPECT_EQ(NNP_STATUS_SUCCESS, cq[0].status);
	EXPECT_TRUE(WITHIN_A_SECOND(sh->sq_event == 1));

	/* The doorbell runs slot 1; the shadow's tail, past the depth, stops it. */
	nop.cid = 0x201;
	sq[1] = nop;
	sh->sq_tail = 8 + 3;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	db[NNP_DB_SQ_TAIL / 4] = 2;
	w.cq_index = 1;
	ASSERT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
	EXPECT_EQ(0x201, cq[1].cid);
	EXPECT_TRUE(WITHIN_A_SECOND(db[NNP_DB_STATUS / 4] & NNP_QUEUE_STATUS_ERROR));
	EXPECT_EQ(0xffffu << 16 | NNP_STATUS_INVALID_FIELD, db[NNP_DB_ERROR / 4]);
	w.cq_index = 2;
	EXPECT_EQ(-EIO, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));

	op.qid = qc.qid;
	ASSERT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_RESET, &op));
	EXPECT_EQ(0u, sh->sq_tail);
	EXPECT_EQ(0u, sh->sq_event);
	EXPECT_EQ(NNP_QUEUE_STATUS_ENABLED, db[NNP_DB_STATUS / 4]);
	munmap(sq, qc.ring_size);
	munmap((void *)db, 4096);
	EXPECT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &op));
}

TEST_F(raw, wait_times_out_then_wakes_on_completion)
{
	struct drm_nnp_queue_wait w = {
		.qid = self->qc.qid, .cq_index = 0, .phase = 1,
		.timeout_ns = 200 * 1000000,
	};
	struct timespec a, b;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &a);
	EXPECT_EQ(-ETIMEDOUT, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
	clock_gettime(CLOCK_MONOTONIC, &b);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	EXPECT_GE(ms, 190);
	w.timeout_ns = 0;
	EXPECT_EQ(-ETIMEDOUT, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
	EXPECT_EQ(NNP_STATUS_SUCCESS,
		  raw_run(self, (struct nnp_hw_queue_cmd){ .opcode = NNP_CMD_NOP }));
}

/* Interrupts taken so far by every user queue of every device. */
static unsigned long queue_irqs(void)
{
	FILE *f = fopen("/proc/interrupts", "r");
	unsigned long sum = 0, n;
	char line[1024], *p, *end;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "nnp-queue"))
			continue;
		/* "IRQ:" then a count per CPU, then the chip's name */
		p = strchr(line, ':') + 1;
		for (n = strtoul(p, &end, 10); end != p;
		     n = strtoul(p, &end, 10)) {
			sum += n;
			p = end;
		}
	}
	fclose(f);
	return sum;
}

/*
 * Hardware 1.9: the device interrupts only while someone sleeps in
 * QUEUE_WAIT. A process that polls its ring takes none; a sleeper is
 * woken by exactly one.
 */
TEST_F(raw, polled_completions_raise_no_interrupt)
{
	struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };
	unsigned long before = queue_irqs();
	uint32_t i, slot;

	for (i = 0; i < 6; i++) {
		struct timespec t0, t;

		slot = raw_submit(self, nop);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			clock_gettime(CLOCK_MONOTONIC, &t);
			ASSERT_LT(t.tv_sec - t0.tv_sec, 5) TH_LOG("slot %u never completed", slot);
		} while (!(self->cq[slot].phase & NNP_CQE_PHASE));
		ASSERT_EQ(0x100 + slot, self->cq[slot].cid);
		self->db[NNP_DB_CQ_HEAD / 4] = self->tail % self->qc.depth;
	}
	usleep(100 * 1000);	/* an interrupt on its way lands */
	EXPECT_EQ(before, queue_irqs());

	EXPECT_EQ(NNP_STATUS_SUCCESS, raw_run(self, nop));
	EXPECT_LE(queue_irqs(), before + 1);
}

struct sleeper {
	int fd;
	struct drm_nnp_queue_wait w;
	int ret;
};

static void *sleep_in_wait(void *arg)
{
	struct sleeper *s = arg;

	s->ret = xioctl(s->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &s->w);
	return NULL;
}

/*
 * Two threads asleep on the same completion, then a command: both wake
 * at once, every time (a wake-up the device skipped would end in
 * ETIMEDOUT after 5 s), and the device interrupted once per command.
 */
TEST_F_TIMEOUT(raw, sleepers_are_woken_every_time, 120)
{
	struct nnp_hw_queue_cmd nop = { .opcode = NNP_CMD_NOP };
	unsigned long before = queue_irqs();
	const uint32_t rounds = 40;
	uint32_t r, slot;
	int t;

	for (r = 0; r < rounds; r++) {
		struct sleeper s[2];
		pthread_t th[2];

		slot = self->tail % self->qc.depth;
		for (t = 0; t < 2; t++) {
			s[t] = (struct sleeper){
				.fd = self->fd,
				.w = { .qid = self->qc.qid, .cq_index = slot,
				       .phase = raw_next_phase(self),
				       .timeout_ns = 5ll * 1000000000 },
			};
			ASSERT_EQ(0, pthread_create(&th[t], NULL, sleep_in_wait, &s[t]));
		}
		usleep(20 * 1000);	/* both asleep by now */
		ASSERT_EQ(slot, raw_submit(self, nop));
		for (t = 0; t < 2; t++) {
			pthread_join(th[t], NULL);
			ASSERT_EQ(0, s[t].ret) TH_LOG("round %u, sleeper %d", r, t);
		}
		self->db[NNP_DB_CQ_HEAD / 4] = self->tail % self->qc.depth;
	}
	EXPECT_EQ(before + rounds, queue_irqs());
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST_F(raw, wait_is_interrupted_by_a_signal)
{
	struct drm_nnp_queue_wait w = {
		.qid = self->qc.qid, .phase = 1, .timeout_ns = 20ll * 1000000000,
	};
	struct sigaction sa = { .sa_handler = on_alarm };

	sigaction(SIGALRM, &sa, NULL);
	alarm(1);
	EXPECT_EQ(-EINTR, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
	alarm(0);
}

/*
 * Raw commands that break the rules: each fails with its status, stops the
 * queue (visible in the doorbell page), leaves every guard byte alone, and
 * the queue works again after a reset.
 */
TEST_F(raw, device_enforces_isolation)
{
	uint8_t *mine_p, *ro_p;
	uint32_t mine = bo(self->fd, DRM_NNP_BO_DEVICE, 8192, &mine_p);
	uint32_t ro = bo(self->fd, DRM_NNP_BO_HOST | DRM_NNP_BO_READ_ONLY, 4096, &ro_p);
	uint32_t theirs = bo(self->other, DRM_NNP_BO_DEVICE, 4096, NULL);
	struct {
		struct nnp_hw_queue_cmd c;
		uint16_t status;
	} v[] = {
		{ { .opcode = NNP_CMD_COPY, .src_key = theirs, .dst_key = mine, .len = 8 },
		  NNP_STATUS_KEY_INVALID },
		{ { .opcode = NNP_CMD_FILL, .dst_key = theirs, .len = 8 },
		  NNP_STATUS_KEY_INVALID },
		{ { .opcode = NNP_CMD_FILL, .dst_key = mine + 1, .len = 8 },
		  NNP_STATUS_KEY_INVALID },
		{ { .opcode = NNP_CMD_FILL, .dst_key = mine, .dst_off = 8000, .len = 193 },
		  NNP_STATUS_OUT_OF_BOUNDS },
		{ { .opcode = NNP_CMD_COPY, .src_key = mine, .dst_key = mine,
		    .src_off = UINT64_MAX - 2, .len = 8 }, NNP_STATUS_OUT_OF_BOUNDS },
		{ { .opcode = NNP_CMD_COPY, .src_key = mine, .dst_key = ro, .len = 8 },
		  NNP_STATUS_ACCESS_DENIED },
		{ { .opcode = 0x42 }, NNP_STATUS_INVALID_OPCODE },
		{ { .opcode = NNP_CMD_FILL, .dst_key = mine, .len = 8, .rsvd1 = 1 },
		  NNP_STATUS_INVALID_FIELD },
		{ { .opcode = NNP_CMD_NOP, .flags = 0x80 }, NNP_STATUS_INVALID_FIELD },
	};
	struct drm_nnp_counters before = counters(self->fd), after;
	unsigned int i;

	ASSERT_NE(0, mine);
	ASSERT_NE(0, ro);
	ASSERT_NE(0, theirs);
	memset(mine_p, GUARD, 8192);
	memset(ro_p, GUARD, 4096);
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		EXPECT_EQ(v[i].status, raw_run(self, v[i].c)) TH_LOG("case %u", i);
		EXPECT_EQ(NNP_QUEUE_STATUS_ENABLED | NNP_QUEUE_STATUS_ERROR,
			  self->db[NNP_DB_STATUS / 4] & 3);
		EXPECT_EQ((uint32_t)(0x100 + self->tail - 1) << 16 | v[i].status,
			  self->db[NNP_DB_ERROR / 4]);
		/* Stopped: a NOP now just waits, and the wait says why. */
		{
			struct drm_nnp_queue_wait w = {
				.qid = self->qc.qid, .cq_index = self->tail,
				.phase = 1, .timeout_ns = 1000000000,
			};

			self->sq[self->tail] = (struct nnp_hw_queue_cmd){ .opcode = 0 };
			self->db[NNP_DB_SQ_TAIL / 4] = self->tail + 1;
			EXPECT_EQ(-EIO, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w));
		}
		raw_reset(self);
		EXPECT_EQ(NNP_QUEUE_STATUS_ENABLED, self->db[NNP_DB_STATUS / 4] & 3);
	}
	EXPECT_EQ(8192, first_not(mine_p, 8192, GUARD));
	EXPECT_EQ(4096, first_not(ro_p, 4096, GUARD));
	after = counters(self->fd);
	EXPECT_EQ(sizeof(v) / sizeof(v[0]), after.cmds_failed - before.cmds_failed);
	EXPECT_EQ(before.host_dma_bytes, after.host_dma_bytes);
	EXPECT_EQ(before.local_bytes, after.local_bytes);
	/* And the queue works after the last reset. */
	EXPECT_EQ(NNP_STATUS_SUCCESS,
		  raw_run(self, (struct nnp_hw_queue_cmd){
			  .opcode = NNP_CMD_FILL, .dst_key = mine, .len = 16, .value = 1 }));
	EXPECT_EQ(16, first_not(mine_p, 16, 1));
}

/* A second process can neither map the first's objects nor use its keys. */
TEST_F(raw, second_process_is_locked_out)
{
	uint8_t *p;
	struct drm_nnp_bo_create c = { .size = 4096, .flags = DRM_NNP_BO_DEVICE };
	pid_t pid;
	int status;

	ASSERT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_BO_CREATE, &c));
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 c.mmap_offset);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, GUARD, 4096);

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd = guest_open_fd(0);
		struct _test_data_raw child = { .fd = fd };
		int bad = 0;

		/* Not its objects, rings or doorbell: EACCES. */
		if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, c.mmap_offset) != MAP_FAILED ||
		    errno != EACCES)
			bad |= 1;
		if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
			 self->qc.doorbell_mmap_offset) != MAP_FAILED || errno != EACCES)
			bad |= 2;
		if (mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd,
			 self->qc.ring_mmap_offset) != MAP_FAILED || errno != EACCES)
			bad |= 4;
		/* Its own queue refuses the parent's key. */
		child.qc = (struct drm_nnp_queue_create){ .depth = 8 };
		if (ioctl(fd, DRM_IOCTL_NNP_QUEUE_CREATE, &child.qc))
			_exit(99);
		child.sq = mmap(NULL, child.qc.ring_size, PROT_READ | PROT_WRITE,
				MAP_SHARED, fd, child.qc.ring_mmap_offset);
		child.cq = (void *)((char *)child.sq + child.qc.cq_offset);
		child.db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				child.qc.doorbell_mmap_offset);
		if (raw_run(&child, (struct nnp_hw_queue_cmd){
			.opcode = NNP_CMD_FILL, .dst_key = c.key, .len = 4096 }) !=
		    NNP_STATUS_KEY_INVALID)
			bad |= 8;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(4096, first_not(p, 4096, GUARD));
}

/* The destroyed queue's doorbell mapping is revoked: it cannot ring anyone. */
TEST_F(raw, destroyed_queue_doorbell_is_revoked)
{
	struct drm_nnp_queue_op op = { .qid = self->qc.qid };
	pid_t pid;
	int status;

	ASSERT_EQ(0, xioctl(self->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &op));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		self->db[0] = 1;	/* must fault */
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGBUS, WTERMSIG(status));
}

/*
 * kill -9 in the middle of a stream of copies: every object, queue and
 * byte of device memory of the dead process is given back.
 */
TEST(kill_9_mid_dma_gives_everything_back)
{
	int fd = guest_open_fd(0);
	struct drm_nnp_counters base, after;
	int pipefd[2], status, round;

	ASSERT_GE(fd, 0);
	base = counters(fd);
	for (round = 0; round < 3; round++) {
		pid_t pid;
		char c;

		ASSERT_EQ(0, pipe(pipefd));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			nnp_device_t *dev;
			nnp_stream_t *s;
			nnp_mem_t *a, *b, *h;
			int i;

			if (nnp_device_open(0, &dev) || nnp_stream_create(dev, &s) ||
			    nnp_mem_alloc(dev, NNP_MEM_DEVICE, 32 << 20, 0, &a) ||
			    nnp_mem_alloc(dev, NNP_MEM_DEVICE, 32 << 20, 0, &b) ||
			    nnp_mem_alloc(dev, NNP_MEM_HOST, 32 << 20, 0, &h))
				_exit(1);
			for (i = 0; i < 200; i++) {
				nnp_memcpy_async(s, b, 0, a, 0, 32 << 20);
				nnp_memcpy_async(s, h, 0, b, 0, 32 << 20);
				if (i == 4)
					write(pipefd[1], "x", 1);
			}
			pause();
			_exit(0);
		}
		close(pipefd[1]);
		ASSERT_EQ(1, read(pipefd[0], &c, 1));
		close(pipefd[0]);
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSIGNALED(status));
	}
	after = counters(fd);
	EXPECT_EQ(base.mem_used, after.mem_used);
	EXPECT_EQ(0, after.mem_used);
	EXPECT_EQ(base.mem_objects, after.mem_objects);
	close(fd);
}

TEST_HARNESS_MAIN
