// SPDX-License-Identifier: MIT
/*
 * Per-user limits of the device-wide tables: an unprivileged user gets at
 * most max_{contexts,queues,comms,keys}_per_user of each and
 * max_device_mem_per_user percent of device memory (EDQUOT past them),
 * gets them back when it lets go, and cannot lock another user or root
 * out of the device.
 *
 * In detail (docs/testing.md has the summary):
 * as uid 65534 with the limits at 2: the third open, queue over all the
 * user's files and communicator get EDQUOT and a freed one can be had
 * again; a user at its limits locks out neither another user nor root;
 * keys: a user opening 8 files and making objects until refused gets
 * exactly `max_keys_per_user` 1024 and then EDQUOT, while uid 65533 and
 * root still make one; at a cap of 4 over two files: EDQUOT for host and
 * device objects, one more after a `GEM_CLOSE`, none while a closed
 * handle's object is still mapped and one after `munmap`, two after closing
 * the file that held two; device memory at `max_device_mem_per_user` 25%: a
 * share less a page, then 2 pages EDQUOT, 1 page fits exactly and a 1-byte
 * object is EDQUOT, host objects not counted; uid 65533 gets its own full
 * share and EDQUOT a page past it, root a share and a page more; the freed
 * object's bytes and a closed file's come back to the byte; a share held by
 * a file lost to a sysfs reset stays taken (EDQUOT for a page) until that
 * file is closed, then the whole share fits
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnp_accel.h>

#include "guest_env.h"
#include "kselftest_harness.h"

#define NODE	"/dev/accel/accel0"
#define PARAMS	"/sys/module/nnp/parameters/"
#define LIMIT	2
#define NOBODY	65534

static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) ? -errno : 0;
}

static unsigned int param(const char *name, unsigned int set)
{
	char path[128];
	unsigned int old = 0;
	FILE *f;

	snprintf(path, sizeof(path), PARAMS "%s", name);
	f = fopen(path, "r+");
	if (!f)
		return 0;
	if (fscanf(f, "%u", &old) != 1)
		old = 0;
	rewind(f);
	fprintf(f, "%u\n", set);
	fclose(f);
	return old;
}

static int dev_open(void)
{
	int fd = open(NODE, O_RDWR);

	return fd < 0 ? -errno : fd;
}

static int queue_create(int fd, uint32_t *qid)
{
	struct drm_nnp_queue_create qc = { .depth = 8 };
	int ret = xioctl(fd, DRM_IOCTL_NNP_QUEUE_CREATE, &qc);

	*qid = qc.qid;
	return ret;
}

static int comm_create(int fd, uint32_t epoch, uint32_t *comm)
{
	struct drm_nnp_comm_create c = { .nranks = 1, .epoch = epoch };
	int ret = xioctl(fd, DRM_IOCTL_NNP_COMM_CREATE, &c);

	*comm = c.comm;
	return ret;
}

FIXTURE(limits) {
	unsigned int old[3];
	mode_t mode;
};

static const char *const limit_names[] = {
	"max_contexts_per_user", "max_queues_per_user", "max_comms_per_user",
};

FIXTURE_SETUP(limits)
{
	struct stat st;
	int i;

	ASSERT_EQ(0, stat(NODE, &st));
	self->mode = st.st_mode & 07777;
	ASSERT_EQ(0, chmod(NODE, 0666));
	for (i = 0; i < 3; i++) {
		self->old[i] = param(limit_names[i], LIMIT);
		ASSERT_NE(0, self->old[i]) TH_LOG("no parameter %s", limit_names[i]);
	}
}

FIXTURE_TEARDOWN(limits)
{
	int i;

	for (i = 0; i < 3; i++)
		param(limit_names[i], self->old[i]);
	chmod(NODE, self->mode);
}

/*
 * Run @fn as user @uid in a child (no capabilities); its exit status: 0,
 * or the number of the first check that failed.
 */
static int as_user(uid_t uid, int (*fn)(void))
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		if (setgid(uid) || setuid(uid))
			_exit(100);
		_exit(fn());
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static int contexts_are_limited(void)
{
	int a = dev_open(), b = dev_open(), c = dev_open();

	if (a < 0 || b < 0)
		return 1;
	if (c != -EDQUOT)
		return 2;
	close(b);
	c = dev_open();		/* a file given back can be had again */
	if (c < 0)
		return 3;
	return 0;
}

static int queues_are_limited(void)
{
	int fd = dev_open(), other = dev_open();
	uint32_t q[3];
	struct drm_nnp_queue_op op;

	if (fd < 0 || other < 0)
		return 1;
	if (queue_create(fd, &q[0]) || queue_create(other, &q[1]))
		return 2;
	/* The limit is the user's, over all of its files. */
	if (queue_create(fd, &q[2]) != -EDQUOT ||
	    queue_create(other, &q[2]) != -EDQUOT)
		return 3;
	op = (struct drm_nnp_queue_op){ .qid = q[0] };
	if (xioctl(fd, DRM_IOCTL_NNP_QUEUE_DESTROY, &op))
		return 4;
	if (queue_create(fd, &q[2]))
		return 5;
	/* A closed file gives its queues back. */
	close(other);
	if (queue_create(fd, &q[1]))
		return 6;
	return 0;
}

static int comms_are_limited(void)
{
	int fd = dev_open();
	uint32_t c[3];
	struct drm_nnp_comm_destroy d;

	if (fd < 0)
		return 1;
	if (comm_create(fd, 0x51, &c[0]) || comm_create(fd, 0x52, &c[1]))
		return 2;
	if (comm_create(fd, 0x53, &c[2]) != -EDQUOT)
		return 3;
	d = (struct drm_nnp_comm_destroy){ .comm = c[0] };
	if (xioctl(fd, DRM_IOCTL_NNP_COMM_DESTROY, &d))
		return 4;
	if (comm_create(fd, 0x54, &c[2]))
		return 5;
	return 0;
}

/* Holds its whole share of contexts and queues while another user works. */
static int hog_then_signal(void)
{
	int a = dev_open(), b = dev_open();
	uint32_t q;

	if (a < 0 || b < 0 || queue_create(a, &q) || queue_create(a, &q))
		return 1;
	pause();
	return 0;
}

static int uses_the_device(void)
{
	int fd = dev_open();
	uint32_t q;

	if (fd < 0)
		return 1;
	return queue_create(fd, &q) ? 2 : 0;
}

TEST_F(limits, contexts_per_user)
{
	EXPECT_EQ(0, as_user(NOBODY, contexts_are_limited));
}

TEST_F(limits, queues_per_user_over_all_its_files)
{
	EXPECT_EQ(0, as_user(NOBODY, queues_are_limited));
}

TEST_F(limits, comms_per_user)
{
	EXPECT_EQ(0, as_user(NOBODY, comms_are_limited));
}

/* One user at its limits locks out neither another user nor root. */
TEST_F(limits, a_user_at_its_limits_locks_nobody_out)
{
	int fds[LIMIT + 2], i;
	uint32_t q;
	pid_t hog = fork();

	ASSERT_GE(hog, 0);
	if (hog == 0) {
		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		_exit(hog_then_signal());
	}
	usleep(300 * 1000);
	EXPECT_EQ(0, as_user(NOBODY - 1, uses_the_device));
	/* Root (CAP_SYS_RESOURCE) is not held to the limits. */
	for (i = 0; i < LIMIT + 2; i++) {
		fds[i] = dev_open();
		EXPECT_LE(0, fds[i]);
		EXPECT_EQ(0, queue_create(fds[i], &q));
	}
	for (i = 0; i < LIMIT + 2; i++)
		close(fds[i]);
	kill(hog, SIGKILL);
	waitpid(hog, NULL, 0);
}

/* ---- memory keys and device memory ---- */

#define KEYS_PER_USER	1024	/* the default: 4 users' worth of the 4096 */
#define MEM_PERCENT	25
#define PAGE		4096u

/* MAX_DEVICE_MEM_PER_USER percent of @fd's device memory, in whole pages. */
static uint64_t mem_share(int fd)
{
	struct drm_nnp_device_info di = { 0 };
	struct drm_nnp_query q = {
		.query = DRM_NNP_QUERY_DEVICE_INFO, .size = sizeof(di),
		.data = (uintptr_t)&di,
	};

	if (xioctl(fd, DRM_IOCTL_NNP_QUERY, &q))
		return 0;
	return di.mem_size * MEM_PERCENT / 100 / PAGE * PAGE;
}

/*
 * A child that holds what it made while the parent checks others: it
 * reports a code (0: all well so far) with hold(), then waits until the
 * parent lets it go on.
 */
struct held {
	pid_t pid;
	int go;
};

static int report_fd = -1, go_fd = -1;	/* the child's ends */

static int hold(int code)
{
	char c;

	if (write(report_fd, &code, sizeof(code)) != sizeof(code) ||
	    read(go_fd, &c, 1) < 0)
		return 99;
	return code;
}

/* Run @fn as @uid in a held child: its code, or -1 if it reported none. */
static int held_start(struct held *h, uid_t uid, int (*fn)(void))
{
	int report[2], go[2], code = -1;

	if (pipe(report) || pipe(go))
		return -1;
	h->pid = fork();
	if (h->pid == 0) {
		close(report[0]);
		close(go[1]);
		report_fd = report[1];
		go_fd = go[0];
		if (setgid(uid) || setuid(uid))
			_exit(100);
		_exit(fn());
	}
	close(report[1]);
	close(go[0]);
	h->go = go[1];
	if (h->pid < 0 || read(report[0], &code, sizeof(code)) != sizeof(code))
		code = -1;
	close(report[0]);
	return code;
}

/* Let the child go on (its read sees the end of the pipe): its status. */
static int held_finish(struct held *h)
{
	int status;

	close(h->go);
	if (h->pid < 0 || waitpid(h->pid, &status, 0) != h->pid ||
	    !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Take every key there is: as many files as the user may open, objects in
 * each until it is full (EMFILE). With a share per user, the user has
 * KEYS_PER_USER of them, then EDQUOT.
 */
static int takes_every_key(void)
{
	int fd, i, n = 0, ret = -EMFILE;

	for (i = 0; i < 8 && ret == -EMFILE; i++) {
		fd = dev_open();
		if (fd < 0)
			return hold(1);
		while (!(ret = guest_bo_create(fd, DRM_NNP_BO_HOST, PAGE, NULL)))
			n++;
	}
	fprintf(stderr, "# uid %d: %d keys, then %s\n", (int)getuid(), n,
		strerror(-ret));
	if (n != KEYS_PER_USER)
		return hold(2);
	return hold(ret == -EDQUOT ? 0 : 3);
}

static int makes_an_object(void)
{
	int fd = dev_open();

	if (fd < 0)
		return 1;
	return guest_bo_create(fd, DRM_NNP_BO_HOST, PAGE, NULL) ? 2 : 0;
}

/* The cap is the user's over all its files; a key freed can be had again. */
static int keys_are_limited(void)
{
	int a = dev_open(), b = dev_open(), i;
	struct drm_nnp_bo_create c[3];
	void *map;

	if (a < 0 || b < 0)
		return 1;
	for (i = 0; i < 3; i++)
		if (guest_bo_create(a, DRM_NNP_BO_HOST, PAGE, &c[i]))
			return 2;
	if (guest_bo_create(b, DRM_NNP_BO_DEVICE, PAGE, NULL))
		return 3;
	if (guest_bo_create(a, DRM_NNP_BO_HOST, PAGE, NULL) != -EDQUOT ||
	    guest_bo_create(b, DRM_NNP_BO_DEVICE, PAGE, NULL) != -EDQUOT)
		return 4;
	if (guest_gem_close(a, c[0].handle) || guest_bo_create(b, DRM_NNP_BO_HOST, PAGE, NULL))
		return 5;
	if (guest_bo_create(a, DRM_NNP_BO_HOST, PAGE, NULL) != -EDQUOT)
		return 6;
	/* An object still mapped holds its key until unmapped. */
	map = mmap(NULL, PAGE, PROT_READ, MAP_SHARED, a, c[1].mmap_offset);
	if (map == MAP_FAILED || guest_gem_close(a, c[1].handle))
		return 7;
	if (guest_bo_create(a, DRM_NNP_BO_HOST, PAGE, NULL) != -EDQUOT)
		return 8;
	munmap(map, PAGE);
	if (guest_bo_create(a, DRM_NNP_BO_HOST, PAGE, NULL))
		return 9;
	/* A closed file gives its two keys back. */
	close(b);
	if (guest_bo_create(a, DRM_NNP_BO_HOST, PAGE, NULL) ||
	    guest_bo_create(a, DRM_NNP_BO_DEVICE, PAGE, NULL))
		return 10;
	return guest_bo_create(a, DRM_NNP_BO_HOST, PAGE, NULL) == -EDQUOT ? 0 : 11;
}

/* Exactly its share of device memory; host memory is not counted. */
static int fills_its_share(void)
{
	int fd = dev_open();
	struct drm_nnp_bo_create big;
	uint64_t share;

	if (fd < 0)
		return hold(1);
	share = mem_share(fd);
	if (!share || guest_bo_create(fd, DRM_NNP_BO_DEVICE, share - PAGE, &big))
		return hold(2);
	if (guest_bo_create(fd, DRM_NNP_BO_DEVICE, 2 * PAGE, NULL) != -EDQUOT)
		return hold(3);
	if (guest_bo_create(fd, DRM_NNP_BO_DEVICE, PAGE, NULL))
		return hold(4);
	if (guest_bo_create(fd, DRM_NNP_BO_DEVICE, 1, NULL) != -EDQUOT)
		return hold(5);
	if (guest_bo_create(fd, DRM_NNP_BO_HOST, PAGE, NULL))
		return hold(6);
	if (hold(0))
		return 99;
	/* Freed memory can be had again, to the byte; a closed file's too. */
	if (guest_gem_close(fd, big.handle) ||
	    guest_bo_create(fd, DRM_NNP_BO_DEVICE, share - PAGE, NULL))
		return 7;
	if (guest_bo_create(fd, DRM_NNP_BO_DEVICE, PAGE, NULL) != -EDQUOT)
		return 8;
	close(fd);
	fd = dev_open();
	if (fd < 0 || guest_bo_create(fd, DRM_NNP_BO_DEVICE, share, NULL))
		return 9;
	return 0;
}

/* Another user's share is its own. */
static int takes_its_share(void)
{
	int fd = dev_open();
	uint64_t share = fd < 0 ? 0 : mem_share(fd);

	if (!share || guest_bo_create(fd, DRM_NNP_BO_DEVICE, share, NULL))
		return 1;
	return guest_bo_create(fd, DRM_NNP_BO_DEVICE, PAGE, NULL) == -EDQUOT ? 0 : 2;
}

/*
 * Holds its share in a file a reset takes: the share stays taken while the
 * lost file's object lives (its range of BAR2 does), and comes back with it.
 */
static int share_lost_to_a_reset(void)
{
	int lost = dev_open(), fd;
	uint64_t share = lost < 0 ? 0 : mem_share(lost);

	if (!share || guest_bo_create(lost, DRM_NNP_BO_DEVICE, share, NULL))
		return hold(1);
	if (hold(0))
		return 99;
	fd = dev_open();
	if (fd < 0 || guest_bo_create(fd, DRM_NNP_BO_DEVICE, PAGE, NULL) != -EDQUOT)
		return 2;
	close(lost);
	return guest_bo_create(fd, DRM_NNP_BO_DEVICE, share, NULL) ? 3 : 0;
}

FIXTURE(shares) {
	unsigned int old[3];
	mode_t mode;
};

static const char *const share_names[] = {
	"max_contexts_per_user", "max_keys_per_user", "max_device_mem_per_user",
};

FIXTURE_SETUP(shares)
{
	static const unsigned int set[] = { 8, KEYS_PER_USER, MEM_PERCENT };
	struct stat st;
	int i;

	ASSERT_EQ(0, stat(NODE, &st));
	self->mode = st.st_mode & 07777;
	ASSERT_EQ(0, chmod(NODE, 0666));
	/* Not asserted: without them, the tests show what a user can take. */
	for (i = 0; i < 3; i++)
		self->old[i] = param(share_names[i], set[i]);
}

FIXTURE_TEARDOWN(shares)
{
	int i;

	for (i = 0; i < 3; i++)
		if (self->old[i])
			param(share_names[i], self->old[i]);
	chmod(NODE, self->mode);
}

/* One user takes all the keys it can: others, and root, still get some. */
TEST_F(shares, keys_one_user_cannot_take_all)
{
	struct held hog;
	int fd = dev_open();

	ASSERT_LE(0, fd);
	EXPECT_EQ(0, held_start(&hog, NOBODY, takes_every_key));
	EXPECT_EQ(0, as_user(NOBODY - 1, makes_an_object));
	EXPECT_EQ(0, guest_bo_create(fd, DRM_NNP_BO_HOST, PAGE, NULL));
	EXPECT_EQ(0, held_finish(&hog));
	close(fd);
}

TEST_F(shares, keys_per_user_over_all_its_files)
{
	param("max_keys_per_user", 4);
	EXPECT_EQ(0, as_user(NOBODY, keys_are_limited));
}

/* At its share of device memory, a user leaves the rest to the others. */
TEST_F(shares, device_memory_per_user)
{
	struct held full;
	int fd = dev_open();
	uint64_t share = fd < 0 ? 0 : mem_share(fd);

	ASSERT_NE(0, share);
	EXPECT_EQ(0, held_start(&full, NOBODY, fills_its_share));
	EXPECT_EQ(0, as_user(NOBODY - 1, takes_its_share));
	/* Root is held to no share. */
	EXPECT_EQ(0, guest_bo_create(fd, DRM_NNP_BO_DEVICE, share + PAGE, NULL));
	EXPECT_EQ(0, held_finish(&full));
	close(fd);
}

TEST_F(shares, device_memory_given_back_after_a_reset)
{
	struct held user;

	ASSERT_EQ(0, held_start(&user, NOBODY, share_lost_to_a_reset));
	EXPECT_EQ(0, write_str("/sys/class/accel/accel0/device/reset_device",
			       "1"));
	EXPECT_EQ(0, held_finish(&user));
}

TEST_HARNESS_MAIN
