// SPDX-License-Identifier: MIT
/*
 * A hostile user's ioctls, at random: every nnp ioctl (and numbers past
 * the last), the generic DRM ones nnp serves, mmap of every offset it
 * hands out, from threads of one file and from forked processes sharing
 * it. Arguments are mostly well formed with one field mutated, sometimes
 * random bytes; handles, queue ids, keys and offsets come back from
 * earlier calls, or are guessed; pointers are good, NULL, unmapped,
 * read-only, kernel addresses or cross into an unmapped page.
 *
 * The calls may fail, with any errno; what must hold is what the kernel
 * log (guest-init fails the run on a WARN, BUG or oops), the device's
 * counters and a fresh file say afterwards: nothing leaked, and the
 * device still works. NNP_FUZZ_SECONDS (default 10, at most MAX_SECONDS)
 * bounds the run; NNP_FUZZ_SEED makes it repeatable (the seed is printed).
 *
 * In detail (docs/testing.md has the summary):
 * random ioctls, every nnp number and past the last, COMM_TOPOLOGY and
 * COMM_ROUTES racing COMM_DESTROY and COMM_CREATE on shared ids, GEM close, PRIME export,
 * BO_IMPORT of the exported dma-buf and mmap of every offset handed out, from 3 threads in each of 2 processes
 * sharing one file for `NNP_FUZZ_SECONDS`, default 10, seed printed and
 * settable with `NNP_FUZZ_SEED`; a worker still blocked in a call at the
 * end, such as a random but valid QUEUE_WAIT of years, is woken with
 * SIGUSR1: no WARN or oops, every object freed, and the device still works:
 * a fresh file's 1 MiB DMA copies host to device, device to device and
 * back, and a 1-rank allreduce of it, byte for byte
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <drm.h>
#include <nnp_accel.h>

#include "kselftest_harness.h"
#include "guest_env.h"

#define PROCS		2
#define THREADS		3
#define POOL		64
#define PAGE		4096ul
#define MAX_SECONDS	540	/* under the harness's timeout below */

/* What earlier calls returned, shared by the threads of a process. */
struct pool {
	_Atomic uint32_t handle[POOL], qid[POOL], comm[POOL];
	_Atomic uint64_t offset[POOL];
};

struct worker {
	int fd;
	uint64_t seed;
	struct pool *pool;
	uint8_t *buf;		/* 64 KiB of ours, read-write */
	uint8_t *ro;		/* one read-only page */
	uint8_t *hole;		/* an unmapped page */
	unsigned long calls;
	time_t end;
};

static __thread sigjmp_buf *fault_jmp;

static void on_fault(int sig)
{
	if (fault_jmp)
		siglongjmp(*fault_jmp, sig);
	_exit(128 + sig);
}

/* Only there to interrupt a blocked call: see run_threads(). */
static void on_wake(int sig)
{
	(void)sig;
}

static uint64_t next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static uint32_t pick(uint64_t *s, uint32_t n)
{
	return (uint32_t)(next(s) % n);
}

/* A 32-bit value: from the pool, small, a boundary, or anything. */
static uint32_t val32(uint64_t *s, _Atomic uint32_t *pool)
{
	static const uint32_t edges[] = {
		0, 1, 2, 15, 16, 63, 64, 255, 256, 1023, 1024, 32767, 32768,
		65535, 65536, 0x7fffffff, 0x80000000, 0xffffffff,
	};

	switch (pick(s, 4)) {
	case 0:
		return pool ? atomic_load(&pool[pick(s, POOL)]) : 0;
	case 1:
		return pick(s, 8);
	case 2:
		return edges[pick(s, sizeof(edges) / sizeof(edges[0]))];
	}
	return (uint32_t)next(s);
}

static uint64_t size64(uint64_t *s)
{
	static const uint64_t sizes[] = {
		0, 1, PAGE - 1, PAGE, PAGE + 1, 64 * PAGE, 1 << 20, 16 << 20,
		(2ull << 30) + 1, 1ull << 40, ~0ull, ~0ull - PAGE + 2,
	};

	return pick(s, 2) ? sizes[pick(s, sizeof(sizes) / sizeof(sizes[0]))] :
			    next(s) % (1 << 20);
}

/* A user pointer for @len bytes: good, NULL, read-only, unmapped, kernel. */
static uint64_t uptr(struct worker *w, size_t len)
{
	switch (pick(&w->seed, 6)) {
	case 0:
		return 0;
	case 1:
		return (uint64_t)(uintptr_t)w->ro;
	case 2:
		return (uint64_t)(uintptr_t)w->hole;
	case 3:
		return 0xffff888000000000ull;
	case 4:	/* the last bytes before the hole: crosses into it */
		return (uint64_t)(uintptr_t)(w->hole - (len > 8 ? len / 2 : 4));
	}
	return (uint64_t)(uintptr_t)w->buf + pick(&w->seed, 64);
}

static void keep(_Atomic uint32_t *pool, uint64_t *s, uint32_t v)
{
	atomic_store(&pool[pick(s, POOL)], v);
}

static void keep_offset(struct worker *w, uint64_t off)
{
	atomic_store(&w->pool->offset[pick(&w->seed, POOL)], off);
}

/* Flip one random bit of @arg (@len bytes) now and then. */
static void mutate(struct worker *w, void *arg, size_t len)
{
	if (!pick(&w->seed, 4))
		((uint8_t *)arg)[pick(&w->seed, len)] ^= 1u << pick(&w->seed, 8);
}

static int call(struct worker *w, unsigned long nr, void *arg, size_t len)
{
	mutate(w, arg, len);
	w->calls++;
	return ioctl(w->fd, nr, arg);
}

static void do_query(struct worker *w)
{
	static const uint32_t sizes[] = { 0, 4, 16, 48, 88, 904, 4096 };
	struct drm_nnp_query q = {
		.query = pick(&w->seed, 6),
		.size = sizes[pick(&w->seed, 7)],
	};

	/*
	 * The kernel writes the answer at data: a flipped bit there could
	 * land anywhere in this process, the harness's shared pages
	 * included. The pointer is chosen after the mutation.
	 */
	mutate(w, &q, offsetof(struct drm_nnp_query, data));
	q.data = uptr(w, q.size);
	w->calls++;
	ioctl(w->fd, DRM_IOCTL_NNP_QUERY, &q);
}

static void do_bo(struct worker *w)
{
	struct drm_nnp_bo_create c = {
		.size = size64(&w->seed),
		.flags = pick(&w->seed, 8) ? 1u << pick(&w->seed, 2) |
			 (pick(&w->seed, 2) ? DRM_NNP_BO_READ_ONLY : 0) :
			 val32(&w->seed, NULL),
	};
	struct drm_nnp_bo_userptr u = { .size = size64(&w->seed) % (1 << 20) };

	if (pick(&w->seed, 2)) {
		mutate(w, &c, sizeof(c));
		/*
		 * Host pages come from the guest's 2 GiB: keep the ones the
		 * kernel would allocate small (up to 1024 per file).
		 */
		if ((c.flags & DRM_NNP_BO_HOST) && c.size <= 2ull << 30)
			c.size &= 0xffff;
		w->calls++;
		if (!ioctl(w->fd, DRM_IOCTL_NNP_BO_CREATE, &c)) {
			keep(w->pool->handle, &w->seed, c.handle);
			keep_offset(w, c.mmap_offset);
		}
		return;
	}
	u.flags = pick(&w->seed, 2) ? DRM_NNP_BO_READ_ONLY : 0;
	/*
	 * As do_query()'s data: a command may DMA into the pages pinned at
	 * user_ptr, so a flipped bit there could pin the harness's shared
	 * pages, and a random copy then overwrote the next test's name in
	 * its parent (CI, 2026-11-29: "fuzz.(null)", SIGSEGV). The pointer
	 * is chosen after the mutation.
	 */
	mutate(w, &u, sizeof(u));
	u.user_ptr = uptr(w, u.size);
	w->calls++;
	if (!ioctl(w->fd, DRM_IOCTL_NNP_BO_USERPTR, &u))
		keep(w->pool->handle, &w->seed, u.handle);
}

static void do_queue(struct worker *w)
{
	struct drm_nnp_queue_create c = { .depth = val32(&w->seed, NULL) };
	struct drm_nnp_queue_op op = { .qid = val32(&w->seed, w->pool->qid) };
	struct drm_nnp_queue_wait wt = {
		.qid = op.qid, .cq_index = val32(&w->seed, NULL),
		.phase = pick(&w->seed, 3),
		.timeout_ns = pick(&w->seed, 4) ? (int64_t)pick(&w->seed, 1000000) : -1,
	};

	switch (pick(&w->seed, 4)) {
	case 0:
		if (pick(&w->seed, 2))
			c.depth = 1u << pick(&w->seed, 16);
		if (!call(w, DRM_IOCTL_NNP_QUEUE_CREATE, &c, sizeof(c))) {
			keep(w->pool->qid, &w->seed, c.qid);
			keep_offset(w, c.ring_mmap_offset);
			keep_offset(w, c.doorbell_mmap_offset);
		}
		break;
	case 1:
		call(w, DRM_IOCTL_NNP_QUEUE_DESTROY, &op, sizeof(op));
		break;
	case 2:
		call(w, DRM_IOCTL_NNP_QUEUE_RESET, &op, sizeof(op));
		break;
	default:
		call(w, DRM_IOCTL_NNP_QUEUE_WAIT, &wt, sizeof(wt));
	}
}

static void do_comm(struct worker *w)
{
	struct drm_nnp_comm_create c = {
		.nranks = pick(&w->seed, 4) ? 1 + pick(&w->seed, 3) :
			  val32(&w->seed, NULL),
		.send_port = pick(&w->seed, 6), .recv_port = pick(&w->seed, 6),
		.epoch = next(&w->seed),
	};
	struct drm_nnp_comm_destroy d = { .comm = val32(&w->seed, w->pool->comm) };
	uint32_t *ring = (uint32_t *)w->buf;

	struct drm_nnp_comm_topology t = {
		.comm = d.comm, .algo = pick(&w->seed, 6),
		.dim[0] = { .n = pick(&w->seed, 4), .pairs = 1 + pick(&w->seed, 2),
			    .next_port = { pick(&w->seed, 5), pick(&w->seed, 5) },
			    .prev_port = { pick(&w->seed, 5), pick(&w->seed, 5) } },
		.dim[1] = { .n = pick(&w->seed, 4) ? 0 : pick(&w->seed, 3),
			    .pairs = 1, .next_port = { 2 }, .prev_port = { 3 } },
	};

	struct drm_nnp_comm_routes r = {
		.comm = d.comm,
		.nranks = pick(&w->seed, 4) ? 1 + pick(&w->seed, 4) :
			  val32(&w->seed, NULL),
	};

	switch (pick(&w->seed, 5)) {
	case 0:
	case 1:
		call(w, DRM_IOCTL_NNP_COMM_DESTROY, &d, sizeof(d));
		return;
	case 2:
		/* Threads of one file racing it against COMM_DESTROY. */
		t.dim[0].pos = pick(&w->seed, t.dim[0].n ? t.dim[0].n : 1);
		call(w, DRM_IOCTL_NNP_COMM_TOPOLOGY, &t, sizeof(t));
		return;
	case 3:
		/* Routes, maybe past the buffer, racing COMM_DESTROY too. */
		w->buf[0] = DRM_NNP_ROUTE_NONE;
		w->buf[1] = pick(&w->seed, 6);
		r.routes = uptr(w, r.nranks);
		call(w, DRM_IOCTL_NNP_COMM_ROUTES, &r, sizeof(r));
		return;
	}
	c.rank = pick(&w->seed, 4) ? pick(&w->seed, c.nranks ? c.nranks : 1) :
		 val32(&w->seed, NULL);
	ring[0] = 1;
	ring[1] = 0;
	ring[2] = pick(&w->seed, 4);
	c.ring = pick(&w->seed, 2) ? 0 : uptr(w, c.nranks * 4ull);
	if (!call(w, DRM_IOCTL_NNP_COMM_CREATE, &c, sizeof(c)))
		keep(w->pool->comm, &w->seed, c.comm);
}

static void do_generic(struct worker *w)
{
	struct drm_gem_close cl = { .handle = val32(&w->seed, w->pool->handle) };
	struct drm_prime_handle ph = {
		.handle = cl.handle,
		.flags = pick(&w->seed, 2) ? DRM_CLOEXEC | DRM_RDWR : val32(&w->seed, NULL),
	};

	if (pick(&w->seed, 2)) {
		call(w, DRM_IOCTL_GEM_CLOSE, &cl, sizeof(cl));
		return;
	}
	if (call(w, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ph, sizeof(ph)))
		return;
	/* Imported again: the device's own BAR or pages, as a peer's. */
	if (pick(&w->seed, 2)) {
		struct drm_nnp_bo_import im = {
			.fd = ph.fd,
			.flags = pick(&w->seed, 2) ? DRM_NNP_BO_READ_ONLY : 0,
		};

		if (!call(w, DRM_IOCTL_NNP_BO_IMPORT, &im, sizeof(im)))
			keep(w->pool->handle, &w->seed, im.handle);
	}
	/* A dma-buf mapping outliving its handle, maybe. */
	if (pick(&w->seed, 2)) {
		void *p = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, ph.fd, 0);

		if (p != MAP_FAILED)
			munmap(p, PAGE);
	}
	close(ph.fd);
}

/* Map an offset we were given (or a guess) and touch it. */
static void do_mmap(struct worker *w)
{
	uint64_t off = atomic_load(&w->pool->offset[pick(&w->seed, POOL)]);
	size_t len = PAGE << pick(&w->seed, 3);
	int flags = pick(&w->seed, 4) ? MAP_SHARED : MAP_PRIVATE;
	volatile uint8_t *p;
	sigjmp_buf jmp;

	if (!pick(&w->seed, 8))
		off = (uint64_t)next(&w->seed) & ~(PAGE - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, w->fd, (off_t)off);
	w->calls++;
	if (p == MAP_FAILED)
		return;
	fault_jmp = &jmp;
	if (!sigsetjmp(jmp, 1)) {
		/* Reads only: a write to a doorbell would ring it. */
		(void)p[pick(&w->seed, len)];
	}
	fault_jmp = NULL;
	munmap((void *)p, len);
}

/* Any command number, any direction and size, random bytes. */
static void do_raw(struct worker *w)
{
	uint32_t nr = DRM_COMMAND_BASE + pick(&w->seed, 16);
	uint32_t size = pick(&w->seed, 4) ? pick(&w->seed, 96) : pick(&w->seed, 0x3fff);
	unsigned long cmd = _IOC(pick(&w->seed, 4), DRM_IOCTL_BASE, nr, size);
	uint32_t i;

	for (i = 0; i < 96 / 8; i++)
		((uint64_t *)w->buf)[i] = pick(&w->seed, 2) ? next(&w->seed) :
					  val32(&w->seed, w->pool->handle);
	w->calls++;
	ioctl(w->fd, cmd, pick(&w->seed, 8) ? (void *)w->buf :
	      (void *)(uintptr_t)uptr(w, size));
}

static void *work(void *arg)
{
	struct worker *w = arg;
	static void (*const ops[])(struct worker *) = {
		do_query, do_bo, do_queue, do_comm, do_generic, do_mmap, do_raw,
	};

	while (time(NULL) < w->end) {
		int i;

		for (i = 0; i < 64; i++)
			ops[pick(&w->seed, sizeof(ops) / sizeof(ops[0]))](w);
	}
	return NULL;
}

/* One process's threads on @fd; returns the calls made. */
static unsigned long run_threads(int fd, uint64_t seed, time_t end)
{
	struct pool *pool = calloc(1, sizeof(*pool));
	struct worker w[THREADS];
	pthread_t t[THREADS];
	unsigned long calls = 0;
	uint8_t *map;
	int i;

	/* 16 pages ours, one read-only, one unmapped after it. */
	map = mmap(NULL, 18 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pool || map == MAP_FAILED)
		return 0;
	mprotect(map + 16 * PAGE, PAGE, PROT_READ);
	munmap(map + 17 * PAGE, PAGE);
	for (i = 0; i < THREADS; i++) {
		w[i] = (struct worker){
			.fd = fd, .seed = seed * (i + 1) + 1, .pool = pool,
			.buf = map, .ro = map + 16 * PAGE, .hole = map + 17 * PAGE,
			.end = end,
		};
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	/*
	 * Random bytes can make a valid QUEUE_WAIT for a completion that never
	 * comes, with a timeout of years: past the end, SIGUSR1 (no
	 * SA_RESTART) ends such a wait with EINTR and the thread sees the time.
	 */
	for (i = 0; i < THREADS; i++) {
		while (pthread_tryjoin_np(t[i], NULL)) {
			if (time(NULL) > end)
				pthread_kill(t[i], SIGUSR1);
			usleep(100000);
		}
		calls += w[i].calls;
	}
	return calls;
}

static struct drm_nnp_counters counters(int fd)
{
	struct drm_nnp_counters c = { 0 };
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_COUNTERS, .size = sizeof(c),
		.data = (uint64_t)(uintptr_t)&c,
	};

	if (ioctl(fd, DRM_IOCTL_NNP_QUERY, &q))
		c.mem_objects = ~0ull;
	return c;
}

FIXTURE(fuzz) {
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
}

TEST_F_TIMEOUT(fuzz, hostile_ioctls_leave_nothing_behind, MAX_SECONDS + 60)
{
	struct rlimit pin = { 16 << 20, 16 << 20 };
	uint64_t seed = guest_env_u64("NNP_FUZZ_SEED");
	uint64_t secs = guest_env_u64("NNP_FUZZ_SECONDS");
	unsigned long calls = 0;
	struct drm_nnp_counters c;
	struct sigaction sa = { .sa_handler = on_fault };
	struct sigaction wake = { .sa_handler = on_wake };
	int fd, i, status, pipes[2];
	time_t end;
	pid_t pid[PROCS];

	if (!seed)
		seed = (uint64_t)time(NULL) * 2654435761u;
	if (!secs || secs > MAX_SECONDS)
		secs = secs ? MAX_SECONDS : 10;
	end = time(NULL) + (time_t)secs;
	printf("# seed %llu (NNP_FUZZ_SEED)\n", (unsigned long long)seed);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGUSR1, &wake, NULL);
	/* Pins past 16 MiB fail; the device memory bounds the rest. */
	ASSERT_EQ(0, setrlimit(RLIMIT_MEMLOCK, &pin));
	fd = guest_open_fd(0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pipe(pipes));
	for (i = 0; i < PROCS; i++) {
		pid[i] = fork();
		ASSERT_LE(0, pid[i]);
		if (!pid[i]) {
			unsigned long n;

			/* Never outlive the test, whatever ends it. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			n = run_threads(fd, seed + i, end);
			_exit(write(pipes[1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
		}
	}
	for (i = 0; i < PROCS; i++) {
		unsigned long n = 0;

		ASSERT_EQ(pid[i], waitpid(pid[i], &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("process %d: status 0x%x", i, status);
		ASSERT_EQ(sizeof(n), read(pipes[0], &n, sizeof(n)));
		calls += n;
	}
	printf("# %lu calls from %d processes of %d threads\n", calls, PROCS,
	       THREADS);
	EXPECT_LT(1000, calls);
	close(fd);
	/* Every file is closed: every object of theirs must be gone. */
	fd = guest_open_fd(0);
	ASSERT_LE(0, fd);
	c = counters(fd);
	EXPECT_EQ(0, c.mem_objects);
	EXPECT_EQ(0, c.mem_used);
	close(fd);
}

/*
 * After the storm the device still does work, exactly: a fresh file DMAs
 * 1 MiB of floats from host to device, device to device and back, and a
 * 1-rank allreduce (the chips here have no links) sums them into a third
 * buffer; the bytes that come back are the bytes sent, both times.
 */
TEST_F(fuzz, device_works_after_the_storm)
{
	const size_t size = 1 << 20, count = size / sizeof(float);
	nnp_mem_t *in, *out, *a, *b, *sum;
	nnp_device_t *dev;
	nnp_stream_t *s;
	nnp_comm_t *comm;
	float *src, *got;
	size_t i;

	ASSERT_EQ(NNP_SUCCESS, nnp_device_open(0, &dev));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_create(dev, &s));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_HOST, size, 0, &in));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_HOST, size, 0, &out));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, size, 0, &a));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, size, 0, &b));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_alloc(dev, NNP_MEM_DEVICE, size, 0, &sum));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(in, (void **)&src));
	ASSERT_EQ(NNP_SUCCESS, nnp_mem_map(out, (void **)&got));
	for (i = 0; i < count; i++)
		src[i] = (float)(i % 4093) - 2046.5f;

	memset(got, 0, size);
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s, a, 0, in, 0, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s, b, 0, a, 0, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s, out, 0, b, 0, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(s));
	EXPECT_EQ(0, memcmp(src, got, size)) TH_LOG("the DMA copies");

	memset(got, 0, size);
	ASSERT_EQ(NNP_SUCCESS, nnp_comm_init_all(&dev, 1, &comm));
	ASSERT_EQ(NNP_SUCCESS, nnp_allreduce(b, 0, sum, 0, count, NNP_FLOAT32,
					     NNP_SUM, comm, s));
	ASSERT_EQ(NNP_SUCCESS, nnp_memcpy_async(s, out, 0, sum, 0, size));
	ASSERT_EQ(NNP_SUCCESS, nnp_stream_synchronize(s));
	EXPECT_EQ(0, memcmp(src, got, size)) TH_LOG("the allreduce");

	nnp_comm_destroy(comm);
	nnp_mem_free(sum);
	nnp_mem_free(b);
	nnp_mem_free(a);
	nnp_mem_free(out);
	nnp_mem_free(in);
	nnp_stream_destroy(s);
	nnp_device_close(dev);
}

TEST_HARNESS_MAIN
