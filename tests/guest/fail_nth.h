/* SPDX-License-Identifier: MIT */
/*
 * The debug kernel's allocation-failure injection, as the fail-nth sweeps
 * use it: the n-th allocation of the calling thread fails
 * (/proc/thread-self/fail-nth), with failslab and fail_page_alloc taking
 * every allocation and printing nothing.
 */
#ifndef NNP_FAIL_NTH_H
#define NNP_FAIL_NTH_H

#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guest_env.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAULT_DIR	"/sys/kernel/debug/"
#define KERNEL_WARNINGS	"WARNING:|BUG:|Call Trace:|KASAN:|UBSAN:|ODEBUG:"

/*
 * Every allocation may fail, each only when asked through fail-nth
 * (probability stays 0), and without a report in the kernel log, where
 * any stack trace fails the run. False on a kernel without it.
 */
static inline bool fault_injection_ready(void)
{
	static const char *const knobs[][2] = {
		{ FAULT_DIR "failslab/ignore-gfp-wait", "N" },
		{ FAULT_DIR "failslab/verbose", "0" },
		{ FAULT_DIR "fail_page_alloc/ignore-gfp-wait", "N" },
		{ FAULT_DIR "fail_page_alloc/ignore-gfp-highmem", "N" },
		{ FAULT_DIR "fail_page_alloc/min-order", "0" },
		{ FAULT_DIR "fail_page_alloc/verbose", "0" },
	};
	size_t i;

	if (access(FAIL_NTH, W_OK))
		return false;
	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (write_str(knobs[i][0], knobs[i][1]))
			return false;
	return true;
}

/* Fail the @n-th allocation of this thread from now on. */
static inline void fail_nth_arm(int fail_fd, unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	if (pwrite(fail_fd, s, len, 0) != len)
		abort();
}

/* Whether the armed failure happened (the count ran down); disarms it. */
static inline bool fail_nth_hit(int fail_fd)
{
	char s[16] = { 0 };
	ssize_t n = pread(fail_fd, s, sizeof(s) - 1, 0);

	if (pwrite(fail_fd, "0", 1, 0) != 1)
		abort();
	return n > 0 && strtoul(s, NULL, 10) == 0;
}

/* Lines of the kernel log that report a warning. */
static inline int kernel_warnings(void)
{
	return dmesg_grep_count("-E", KERNEL_WARNINGS);
}

/*
 * A reader of the kernel log from its current end, for a sweep that looks
 * for warnings after each of hundreds of injected failures: reading only
 * the records logged since takes microseconds, where kernel_warnings()'s
 * dmesg | grep took 0.36 s on the debug kernel under TCG.
 */
static inline int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * Records that report a warning among those logged since the last call on
 * @fd (kmsg_open_at_end()); -1 if the log could not be read, or if records
 * were overwritten before they were read (EPIPE), which could hide one.
 */
static inline int kmsg_new_warnings(int fd)
{
	char rec[8192];
	int count = 0;
	regex_t re;
	ssize_t n;

	if (regcomp(&re, KERNEL_WARNINGS, REG_EXTENDED | REG_NOSUB))
		return -1;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0) {
		rec[n] = '\0';
		count += !regexec(&re, rec, 0, NULL, 0);
	}
	regfree(&re);
	return n < 0 && errno != EAGAIN ? -1 : count;
}

#endif /* NNP_FAIL_NTH_H */
