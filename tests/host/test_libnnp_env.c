// SPDX-License-Identifier: MIT
/*
 * libnnp without devices: its version, the last error of each thread,
 * NNP_DEBUG and NNP_DEBUG_FILE (in a child process of this test, since
 * they are read once), enumeration from a fake sysfs tree with
 * NNP_VISIBLE_DEVICES, the driver version rule, and the page size.
 *
 * In detail (docs/testing.md has the summary):
 * `nnp_get_version()` = `NNP_VERSION_CODE` = the Makefile's `VERSION`;
 * `nnp_get_last_error()` per thread (a new thread sees "", a success keeps
 * it); `NNP_ERROR_VERSION`'s text and the driver version rule (1.0 and
 * 1.200 pass, 2.0 and 0.9 fail naming both versions); the page size from
 * `sysconf`; enumeration from a fake sysfs tree (numeric node order,
 * another driver's device skipped and its unopenable node never opened,
 * `NO_DRIVER` naming the missing module directory, `NO_DEVICE` with the
 * module loaded); `NNP_VISIBLE_DEVICES` renumbering (`3,0`), ending at a
 * bad, repeated or out-of-range entry, a trailing comma, empty hiding all;
 * `NNP_DEBUG=WARN/info/TRACE` byte-exact lines in
 * `NNP_DEBUG_FILE=dir/log.%h.%p` of a re-executed child (host:pid, rank),
 * the file mode 600, nothing and no file when unset or unknown; `NNP_DEBUG_FILE` naming a
 * planted symbolic link leaves the file it points at as it was, and the
 * child's standard error says, byte for byte, that the link was not
 * followed
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <threads.h>
#include <unistd.h>

#include <cmocka.h>

#include "internal.h"
#include "log.h"

static void test_version(void **state)
{
	char text[32];
	int v = -1;

	(void)state;
	assert_int_equal(NNP_VERSION_CODE, NNP_VERSION(0, 9, 0));
	assert_int_equal(NNP_VERSION(1, 2, 3), 0x010203);
	assert_int_equal(nnp_get_version(&v), NNP_SUCCESS);
	assert_int_equal(v, NNP_VERSION_CODE);
	/* The header, the library and the Makefile's VERSION agree. */
	snprintf(text, sizeof(text), "%d.%d.%d", NNP_VERSION_MAJOR(v),
		 NNP_VERSION_MINOR(v), NNP_VERSION_PATCH(v));
	assert_string_equal(text, NNP_MAKE_VERSION);
	assert_int_equal(nnp_get_version(NULL), NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(), "nnp_get_version: version is NULL");
}

static int other_thread(void *arg)
{
	char *seen = arg;

	/* A fresh thread has no error of its own, whatever others had. */
	strcpy(seen, nnp_get_last_error());
	nnp_get_version(NULL);
	return 0;
}

static void test_last_error_is_per_thread(void **state)
{
	char seen[256] = "unset";
	thrd_t t;

	(void)state;
	assert_int_equal(nnp_device_count(NULL), NNP_ERROR_INVALID_ARGUMENT);
	assert_string_equal(nnp_get_last_error(), "nnp_device_count: count is NULL");
	assert_int_equal(thrd_create(&t, other_thread, seen), thrd_success);
	thrd_join(t, NULL);
	assert_string_equal(seen, "");
	/* Its failure did not touch ours; a success leaves ours alone too. */
	assert_string_equal(nnp_get_last_error(), "nnp_device_count: count is NULL");
	assert_int_equal(nnp_get_version(&(int){ 0 }), NNP_SUCCESS);
	assert_string_equal(nnp_get_last_error(), "nnp_device_count: count is NULL");
}

static void test_new_results_have_text(void **state)
{
	(void)state;
	assert_string_equal(nnp_strerror(NNP_ERROR_VERSION),
			    "the nnp driver's interface version is not one this libnnp speaks");
	assert_string_not_equal(nnp_strerror(NNP_ERROR_VERSION),
				nnp_strerror(NNP_ERROR_COMM_FAILED));
	assert_string_equal(nnp_strerror(NNP_IN_PROGRESS),
			    "the communicator is still being made");
}

/* The rule of docs/uapi.md: the same major, at least the minor we need. */
static void test_driver_version_rule(void **state)
{
	(void)state;
	assert_int_equal(nnp_check_driver_version("/dev/accel/accel0", 1, 0), NNP_SUCCESS);
	assert_int_equal(nnp_check_driver_version("/dev/accel/accel0", 1, 200), NNP_SUCCESS);
	assert_int_equal(nnp_check_driver_version("/dev/accel/accel3", 2, 0),
			 NNP_ERROR_VERSION);
	assert_string_equal(nnp_get_last_error(),
			    "/dev/accel/accel3: the nnp driver's interface is 2.0, libnnp 0.9.0 needs 1.0 or a later 1.x");
	assert_int_equal(nnp_check_driver_version("/dev/accel/accel0", 0, 9),
			 NNP_ERROR_VERSION);
}

static void test_page_size(void **state)
{
	(void)state;
	assert_int_equal(nnp_page_size(), (size_t)sysconf(_SC_PAGESIZE));
}

/* ---- enumeration from a fake sysfs ---- */

static char root[PATH_MAX];

static void make_dir(const char *fmt, const char *name)
{
	char path[PATH_MAX * 2];

	snprintf(path, sizeof(path), fmt, root, name);
	assert_int_equal(mkdir(path, 0755), 0);
}

/* /sys/class/accel/@name/device/driver -> .../drivers/@driver */
static void fake_accel(const char *name, const char *driver)
{
	char link[PATH_MAX * 2], target[PATH_MAX];

	make_dir("%s/sys/class/accel/%s", name);
	make_dir("%s/sys/class/accel/%s/device", name);
	snprintf(link, sizeof(link), "%s/sys/class/accel/%s/device/driver", root, name);
	snprintf(target, sizeof(target), "../../../../bus/pci/drivers/%s", driver);
	assert_int_equal(symlink(target, link), 0);
}

static int make_tree(void **state)
{
	static const char *const nodes[] = {
		"accel0", "accel1", "accel2", "accel3", "accel10",
	};
	char node[PATH_MAX * 2];
	size_t i;

	(void)state;
	snprintf(root, sizeof(root), "/tmp/nnp-sysfs-XXXXXX");
	assert_non_null(mkdtemp(root));
	make_dir("%s/sys%s", "");
	make_dir("%s/sys/class%s", "");
	make_dir("%s/sys/class/accel%s", "");
	make_dir("%s/sys/module%s", "");
	make_dir("%s/sys/module/%s", "nnp");
	make_dir("%s/dev%s", "");
	fake_accel("accel0", "nnp");
	fake_accel("accel1", "ivpu");
	fake_accel("accel2", "nnp");
	fake_accel("accel3", "nnp");
	fake_accel("accel10", "nnp");
	fake_accel("accel11", "nnp");
	/*
	 * Nodes nobody may open: enumeration never tries. accel1 is another
	 * vendor's; accel11 has none, as in a container not given it.
	 */
	for (i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
		snprintf(node, sizeof(node), "%s/dev/%s", root, nodes[i]);
		assert_int_equal(close(open(node, O_CREAT | O_WRONLY, 0)), 0);
	}
	return 0;
}

static int remove_tree(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

/* Enumerate the fake tree; the names (accelN) found, space-separated. */
static nnp_result_t enumerate(char *names, size_t size)
{
	char sysfs[PATH_MAX + 8], dev[PATH_MAX + 8];
	char paths[NNP_MAX_DEVICES][64];
	nnp_result_t res;
	int n = -1, i;

	snprintf(sysfs, sizeof(sysfs), "%s/sys", root);
	snprintf(dev, sizeof(dev), "%s/dev", root);
	res = nnp_enumerate_at(sysfs, dev, paths, NNP_MAX_DEVICES, &n);
	names[0] = '\0';
	for (i = 0; i < n; i++) {
		assert_memory_equal(paths[i], dev, strlen(dev));
		snprintf(names + strlen(names), size - strlen(names), "%s%s",
			 i ? " " : "", paths[i] + strlen(dev) + 1);
	}
	if (res != NNP_SUCCESS)
		assert_int_equal(n, 0);
	return res;
}

static void test_enumerate_from_sysfs(void **state)
{
	char names[256];

	(void)state;
	unsetenv("NNP_VISIBLE_DEVICES");
	assert_int_equal(enumerate(names, sizeof(names)), NNP_SUCCESS);
	/* Node order is numeric, accel1 (ivpu) is not ours, accel11 has no node. */
	assert_string_equal(names, "accel0 accel2 accel3 accel10");
}

static void test_enumerate_no_driver(void **state)
{
	char names[256], path[PATH_MAX + 64], want[PATH_MAX + 128];
	const char *drivers[] = { "accel0", "accel2", "accel3", "accel10" };
	unsigned int i;

	(void)state;
	unsetenv("NNP_VISIBLE_DEVICES");
	/* Unload the module: the four lose their driver. */
	snprintf(path, sizeof(path), "%s/sys/module/nnp", root);
	assert_int_equal(rmdir(path), 0);
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/sys/class/accel/%s/device/driver",
			 root, drivers[i]);
		assert_int_equal(unlink(path), 0);
	}
	assert_int_equal(enumerate(names, sizeof(names)), NNP_ERROR_NO_DRIVER);
	snprintf(want, sizeof(want), "the nnp driver is not loaded (no %s/sys/module/nnp)",
		 root);
	assert_string_equal(nnp_get_last_error(), want);
	/* Loaded, with only accel11 bound to it, which has no node. */
	make_dir("%s/sys/module/%s", "nnp");
	assert_int_equal(enumerate(names, sizeof(names)), NNP_ERROR_NO_DEVICE);
	snprintf(want, sizeof(want), "no nnp device: none of the 1 has a node in %s/dev",
		 root);
	assert_string_equal(nnp_get_last_error(), want);
	/* With no device bound at all. */
	snprintf(path, sizeof(path), "%s/sys/class/accel/accel11/device/driver", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(enumerate(names, sizeof(names)), NNP_ERROR_NO_DEVICE);
	assert_string_equal(nnp_get_last_error(), "no nnp device");
	for (i = 0; i < 4; i++) {
		char target[64];

		snprintf(path, sizeof(path), "%s/sys/class/accel/%s/device/driver",
			 root, drivers[i]);
		snprintf(target, sizeof(target), "../../../../bus/pci/drivers/nnp");
		assert_int_equal(symlink(target, path), 0);
	}
	assert_int_equal(enumerate(names, sizeof(names)), NNP_SUCCESS);
}

static void test_visible_devices(void **state)
{
	/* The list ends at its first bad entry: not a number, out of range,
	 * a repeat, a sign or a space. Set but empty: no device at all. */
	static const struct {
		const char *list, *names;
	} cases[] = {
		{ "3,0", "accel10 accel0" }, { "2", "accel3" },
		{ "1,x,2", "accel2" }, { "1,4,2", "accel2" },
		{ "0,0,1", "accel0" }, { "1,2,", "accel2 accel3" },
		{ "-1", "" }, { " 1", "" }, { "1x", "" },
		{ "99999999999999999999", "" }, { "", "" },
	};
	char names[256];
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("NNP_VISIBLE_DEVICES", cases[i].list, 1);
		assert_int_equal(enumerate(names, sizeof(names)),
				 cases[i].names[0] ? NNP_SUCCESS : NNP_ERROR_NO_DEVICE);
		assert_string_equal(names, cases[i].names);
	}
	assert_string_equal(nnp_get_last_error(),
			    "no nnp device that NNP_VISIBLE_DEVICES lets through");
	unsetenv("NNP_VISIBLE_DEVICES");
	assert_int_equal(enumerate(names, sizeof(names)), NNP_SUCCESS);
	assert_string_equal(names, "accel0 accel2 accel3 accel10");
}

/* ---- NNP_DEBUG in a child: this process has read it already ---- */

/* What the child does: a failure, an INFO and a TRACE line, as rank 3. */
static int child_logs(void)
{
	nnp_get_version(NULL);
	nnp_log_set_rank(3);
	nnp_log(NNP_LOG_INFO, "info %d", 42);
	nnp_log(NNP_LOG_TRACE, "trace %s", "step");
	return 0;
}

/*
 * Run the child with NNP_DEBUG=@level and NNP_DEBUG_FILE=@file, its
 * standard error to @err if not NULL; its pid.
 */
static pid_t run_child(const char *level, const char *file, const char *err)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		int fd = err ? open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600) : 2;

		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		if (level)
			setenv("NNP_DEBUG", level, 1);
		else
			unsetenv("NNP_DEBUG");
		setenv("NNP_DEBUG_FILE", file, 1);
		execl("/proc/self/exe", "test_libnnp_env", "--child-logs", (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* @path's contents into @buf (NUL-terminated); -1 if it cannot be read. */
static int slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n < 0 ? -1 : 0;
}

/* The child's log: @dir/log.HOST.PID read into @buf; -1 if there is none. */
static int read_log(const char *dir, pid_t pid, char *buf, size_t size)
{
	char host[64], path[PATH_MAX + 128];
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/log.%s.%d", dir, host, (int)pid);
	return slurp(path, buf, size);
}

static void test_debug_levels_and_file(void **state)
{
	char dir[] = "/tmp/nnp-log-XXXXXX", file[64], buf[2048], want[1024];
	char host[64];
	struct stat st;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/log.%%h.%%p", dir);
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';

	pid = run_child("WARN", file, NULL);
	assert_int_equal(read_log(dir, pid, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want),
		 "%s:%d [-] NNP WARN nnp_get_version: version is NULL: invalid argument\n",
		 host, (int)pid);
	assert_string_equal(buf, want);
	/* The user's alone: its lines name communicators by their epochs. */
	snprintf(buf, sizeof(buf), "%s/log.%s.%d", dir, host, (int)pid);
	assert_int_equal(stat(buf, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	pid = run_child("info", file, NULL);
	assert_int_equal(read_log(dir, pid, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want),
		 "%s:%d [-] NNP WARN nnp_get_version: version is NULL: invalid argument\n"
		 "%s:%d [3] NNP INFO info 42\n", host, (int)pid, host, (int)pid);
	assert_string_equal(buf, want);

	pid = run_child("TRACE", file, NULL);
	assert_int_equal(read_log(dir, pid, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want),
		 "%s:%d [-] NNP WARN nnp_get_version: version is NULL: invalid argument\n"
		 "%s:%d [3] NNP INFO info 42\n%s:%d [3] NNP TRACE trace step\n",
		 host, (int)pid, host, (int)pid, host, (int)pid);
	assert_string_equal(buf, want);

	/* Unset or unknown: silent, and no file made. */
	pid = run_child(NULL, file, NULL);
	assert_int_equal(read_log(dir, pid, buf, sizeof(buf)), -1);
	pid = run_child("LOUD", file, NULL);
	assert_int_equal(read_log(dir, pid, buf, sizeof(buf)), -1);
	snprintf(buf, sizeof(buf), "rm -rf '%s'", dir);
	assert_int_equal(system(buf), 0);
}

/*
 * NNP_DEBUG_FILE naming a symbolic link that another user planted in a
 * directory anyone may write: the file it points at is left as it was,
 * and the messages go to standard error, which says why.
 */
static void test_debug_file_not_through_a_symlink(void **state)
{
	char dir[] = "/tmp/nnp-log-XXXXXX", link[64], victim[64], err[64];
	char buf[1024], want[512], host[64];
	int status, fd;
	pid_t pid;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(link, sizeof(link), "%s/log", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(err, sizeof(err), "%s/stderr", dir);
	fd = open(victim, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep\n", 5), 5);
	close(fd);
	assert_int_equal(symlink(victim, link), 0);

	pid = run_child("WARN", link, err);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(slurp(victim, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "keep\n");
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	assert_int_equal(slurp(err, buf, sizeof(buf)), 0);
	snprintf(want, sizeof(want),
		 "%s:%d [-] NNP WARN cannot open NNP_DEBUG_FILE=%s (it is a symbolic link, not followed), logging to stderr\n"
		 "%s:%d [-] NNP WARN nnp_get_version: version is NULL: invalid argument\n",
		 host, (int)pid, link, host, (int)pid);
	assert_string_equal(buf, want);
	snprintf(buf, sizeof(buf), "rm -rf '%s'", dir);
	assert_int_equal(system(buf), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_version),
		cmocka_unit_test(test_last_error_is_per_thread),
		cmocka_unit_test(test_new_results_have_text),
		cmocka_unit_test(test_driver_version_rule),
		cmocka_unit_test(test_page_size),
		cmocka_unit_test_setup_teardown(test_enumerate_from_sysfs, make_tree, remove_tree),
		cmocka_unit_test_setup_teardown(test_enumerate_no_driver, make_tree, remove_tree),
		cmocka_unit_test_setup_teardown(test_visible_devices, make_tree, remove_tree),
		cmocka_unit_test(test_debug_levels_and_file),
		cmocka_unit_test(test_debug_file_not_through_a_symlink),
	};

	if (argc == 2 && !strcmp(argv[1], "--child-logs"))
		return child_logs();
	return cmocka_run_group_tests_name("libnnp_env", tests, NULL, NULL);
}
