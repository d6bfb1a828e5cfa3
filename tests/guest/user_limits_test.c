// SPDX-License-Identifier: MIT
/*
 * Per-user limits of the device-wide tables: an unprivileged user gets at
 * most max_{contexts,queues,comms}_per_user of each (EDQUOT past them),
 * gets them back when it lets go, and cannot lock another user or root
 * out of the device.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nnp_accel.h>

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

TEST_HARNESS_MAIN
