// SPDX-License-Identifier: MIT
/*
 * A queue's life as a hostile user sees it: threads of one file racing
 * create, destroy, wait, reset and mmap on guessed queue ids; a destroyed
 * queue's ring and doorbell mapped again; an old doorbell mapping used on
 * the id's next owner; a private doorbell mapping.
 *
 * In detail (docs/testing.md has the summary):
 * four threads of one file racing QUEUE_CREATE (every other one asking for
 * a shadow doorbell), DESTROY, WAIT, RESET and mmap on guessed ids for 8 s: every call a documented result, every id
 * free afterwards, no oops; a destroyed queue's ring and doorbell cannot be
 * mapped again, EACCES while an old mapping lives and EINVAL after; an old
 * doorbell mapping faults with SIGBUS instead of ringing the id's next
 * owner, whose SQ tail stays 0; a private doorbell mapping refused
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
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

static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

/* Every other queue asks for a shadow doorbell (hardware 1.11). */
static int queue_create(int fd, struct drm_nnp_queue_create *qc)
{
	static atomic_uint n;

	*qc = (struct drm_nnp_queue_create){ .depth = 8 };
	if (atomic_fetch_add(&n, 1) % 2)
		qc->flags = DRM_NNP_QUEUE_SHADOW_DOORBELL;
	return xioctl(fd, DRM_IOCTL_NNP_QUEUE_CREATE, qc);
}

static int queue_op(int fd, unsigned long req, uint32_t qid)
{
	struct drm_nnp_queue_op op = { .qid = qid };

	return xioctl(fd, req, &op);
}

/* mmap()'s errno, or 0 (and the mapping undone) if it worked. */
static int map_errno(int fd, uint64_t offset, size_t len, int flags)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, offset);

	if (p == MAP_FAILED)
		return errno;
	munmap(p, len);
	return 0;
}

/* ---- threads of one file on guessed ids ---------------------------------- */

#define RACE_IDS	4	/* guessed ids: the ones a busy table hands out */
#define RACE_THREADS	4

struct race {
	int fd;
	atomic_bool stop;
	atomic_uint created, destroyed, ops;
	atomic_uint bad;	/* an errno no documentation allows */
	atomic_int bad_errno;
	atomic_ullong offsets[RACE_IDS];	/* last doorbell offset per id */
};

/* @allowed ends with 1, which no call returns. */
static void race_check(struct race *r, int ret, const int *allowed)
{
	for (; *allowed != 1; allowed++)
		if (ret == *allowed)
			return;
	atomic_fetch_add(&r->bad, 1);
	atomic_store(&r->bad_errno, ret);
}

static void *race_thread(void *arg)
{
	static const int create_ok[] = { 0, -EBUSY, 1 };
	static const int op_ok[] = { 0, -ENOENT, 1 };
	static const int wait_ok[] = { -ETIMEDOUT, -ENOENT, 1 };
	/* A live queue's page maps; a dead one's is refused or gone. */
	static const int map_ok[] = { 0, -EACCES, -EINVAL, 1 };
	struct race *r = arg;
	unsigned int seed = (unsigned int)(uintptr_t)&seed;

	while (!atomic_load(&r->stop)) {
		uint32_t qid = rand_r(&seed) % RACE_IDS;
		struct drm_nnp_queue_create qc;
		struct drm_nnp_queue_wait w = {
			.qid = qid, .phase = 1, .timeout_ns = 1000,
		};
		int ret;

		switch (rand_r(&seed) % 5) {
		case 0:
			ret = queue_create(r->fd, &qc);
			race_check(r, ret, create_ok);
			if (!ret) {
				atomic_fetch_add(&r->created, 1);
				atomic_store(&r->offsets[qc.qid % RACE_IDS],
					     qc.doorbell_mmap_offset);
			}
			break;
		case 1:
			ret = queue_op(r->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, qid);
			race_check(r, ret, op_ok);
			if (!ret)
				atomic_fetch_add(&r->destroyed, 1);
			break;
		case 2:
			race_check(r, xioctl(r->fd, DRM_IOCTL_NNP_QUEUE_WAIT, &w),
				   wait_ok);
			break;
		case 3:
			race_check(r, queue_op(r->fd, DRM_IOCTL_NNP_QUEUE_RESET, qid),
				   op_ok);
			break;
		case 4:
			race_check(r, -map_errno(r->fd, atomic_load(&r->offsets[qid]),
						 4096, MAP_SHARED), map_ok);
			break;
		}
		atomic_fetch_add(&r->ops, 1);
	}
	return NULL;
}

/*
 * Threads of one file create, destroy, wait on, reset and map queues whose
 * ids they guess. Before the fix, a destroy could free a queue that was
 * still being set up: slab corruption and a kernel panic. Every call must
 * give a documented result, and afterwards every id is free again.
 */
FIXTURE(race) {
	struct race r;
};

FIXTURE_SETUP(race)
{
	memset(&self->r, 0, sizeof(self->r));
	self->r.fd = guest_open_fd(0);
	ASSERT_GE(self->r.fd, 0);
}

FIXTURE_TEARDOWN(race)
{
	close(self->r.fd);
}

TEST_F_TIMEOUT(race, create_destroy_on_one_file, 120)
{
	struct race *r = &self->r;
	pthread_t t[RACE_THREADS];
	struct drm_nnp_queue_create qc;
	unsigned int i, left = 0, created, destroyed;

	for (i = 0; i < RACE_THREADS; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, race_thread, r));
	sleep(8);
	atomic_store(&r->stop, true);
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < GUEST_NUM_QUEUES; i++)
		if (!queue_op(r->fd, DRM_IOCTL_NNP_QUEUE_DESTROY, i))
			left++;
	created = atomic_load(&r->created);
	destroyed = atomic_load(&r->destroyed);
	TH_LOG("%u calls: %u queues created, %u destroyed in the race, %u after",
	       atomic_load(&r->ops), created, destroyed, left);
	EXPECT_EQ(0, atomic_load(&r->bad))
		TH_LOG("undocumented result %d", atomic_load(&r->bad_errno));
	EXPECT_EQ(created, destroyed + left);
	EXPECT_LT(100, created);
	/* Every id came back: the whole table can be taken again. */
	for (i = 0; i < GUEST_NUM_QUEUES; i++) {
		ASSERT_EQ(0, queue_create(r->fd, &qc));
		EXPECT_EQ(i, qc.qid);
	}
}

/* ---- mappings of a destroyed queue --------------------------------------- */

/*
 * Neither the ring nor the doorbell of a destroyed queue can be mapped
 * again: not while an old mapping keeps the objects (and their offsets)
 * alive, which is what let the doorbell be mapped afresh before the fix,
 * and not once they are gone.
 */
TEST(destroyed_queue_cannot_be_mapped_again)
{
	struct drm_nnp_queue_create qc;
	int fd = guest_open_fd(0);
	void *db, *ring;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, queue_create(fd, &qc));
	db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		  qc.doorbell_mmap_offset);
	ring = mmap(NULL, qc.ring_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    qc.ring_mmap_offset);
	ASSERT_NE(MAP_FAILED, db);
	ASSERT_NE(MAP_FAILED, ring);
	ASSERT_EQ(0, queue_op(fd, DRM_IOCTL_NNP_QUEUE_DESTROY, qc.qid));
	EXPECT_EQ(EACCES, map_errno(fd, qc.doorbell_mmap_offset, 4096,
				    MAP_SHARED));
	EXPECT_EQ(EACCES, map_errno(fd, qc.ring_mmap_offset, qc.ring_size,
				    MAP_SHARED));
	munmap(db, 4096);
	munmap(ring, qc.ring_size);
	EXPECT_EQ(EINVAL, map_errno(fd, qc.doorbell_mmap_offset, 4096,
				    MAP_SHARED));
	EXPECT_EQ(EINVAL, map_errno(fd, qc.ring_mmap_offset, qc.ring_size,
				    MAP_SHARED));
	close(fd);
}

/* A doorbell is one shared page: a private copy of it would be a bug. */
TEST(doorbell_mapping_must_be_shared)
{
	struct drm_nnp_queue_create qc;
	int fd = guest_open_fd(0);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, queue_create(fd, &qc));
	EXPECT_EQ(EINVAL, map_errno(fd, qc.doorbell_mmap_offset, 4096,
				    MAP_PRIVATE));
	EXPECT_EQ(EINVAL, map_errno(fd, qc.doorbell_mmap_offset, 8192,
				    MAP_SHARED));
	close(fd);
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jmp, sig);
}

/* Write @v through @p; SIGBUS if the page is gone, else 0. */
static int poke(volatile uint32_t *p, uint32_t v)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	int sig;

	sigaction(SIGBUS, &sa, &old);
	sig = sigsetjmp(bus_jmp, 1);
	if (!sig)
		*p = v;
	sigaction(SIGBUS, &old, NULL);
	return sig;
}

/*
 * The owner of a destroyed queue keeps a doorbell mapping it made before
 * the destroy (never touched) and tries to map the page again; then
 * another process gets the same id. Neither mapping may move the new
 * owner's SQ tail: before the fix, mmap() worked again and rang the other
 * process's queue.
 */
TEST(old_doorbell_cannot_ring_the_ids_next_owner)
{
	struct drm_nnp_queue_create qc, victim;
	volatile uint32_t *old_db, *victim_db;
	int fd = guest_open_fd(0), other = guest_open_fd(0);
	void *again;

	ASSERT_GE(fd, 0);
	ASSERT_GE(other, 0);
	ASSERT_EQ(0, queue_create(fd, &qc));
	old_db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      qc.doorbell_mmap_offset);
	ASSERT_NE(MAP_FAILED, old_db);
	ASSERT_EQ(0, queue_op(fd, DRM_IOCTL_NNP_QUEUE_DESTROY, qc.qid));
	again = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		     qc.doorbell_mmap_offset);
	EXPECT_EQ(MAP_FAILED, again);

	/* The id goes to the lowest free slot: the victim gets ours. */
	ASSERT_EQ(0, queue_create(other, &victim));
	ASSERT_EQ(qc.qid, victim.qid);
	victim_db = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, other,
			 victim.doorbell_mmap_offset);
	ASSERT_NE(MAP_FAILED, victim_db);

	EXPECT_EQ(SIGBUS, poke(&old_db[NNP_DB_SQ_TAIL / 4], 1));
	if (again != MAP_FAILED)
		poke((volatile uint32_t *)again + NNP_DB_SQ_TAIL / 4, 1);
	EXPECT_EQ(0, victim_db[NNP_DB_SQ_TAIL / 4]);
	EXPECT_EQ(0, victim_db[NNP_DB_STATUS / 4] & NNP_QUEUE_STATUS_ERROR);
	close(other);
	close(fd);
}

TEST_HARNESS_MAIN
