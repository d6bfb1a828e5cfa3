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
#include <sys/klog.h>
#include <unistd.h>

#include "guest_env.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define FAULT_DIR	"/sys/kernel/debug/"
/* What scripts/guest-init.sh fails a run on, record by record. */
#define KERNEL_WARNINGS	"WARNING:|BUG:|Oops|general protection|Call Trace:|" \
	"UBSAN:|KASAN:|ODEBUG:|INFO: (possible|trying to register|lockdep)|" \
	"possible (circular|recursive) locking|inconsistent lock state|" \
	"list_add corruption|refcount_t:"

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
 * WARN() messages a sweep expects, each once: the kernel's own defects
 * that an injected failure sets off, which the sweep steps over (see
 * probe_failnth_test.c). Each one found is consumed.
 */
#define KNOWN_WARNS_MAX	16

struct known_warns {
	char msg[KNOWN_WARNS_MAX][64];
	int count;
};

/* Whether @msg is one of @known's, consuming it if so. */
static inline bool known_warn_take(struct known_warns *known, const char *msg)
{
	int i;

	for (i = 0; known && i < known->count; i++)
		if (known->msg[i][0] && !strcmp(known->msg[i], msg)) {
			known->msg[i][0] = '\0';
			return true;
		}
	return false;
}

/*
 * Records that report a warning among those logged since the last call on
 * @fd (kmsg_open_at_end()); -1 if the log could not be read, or if records
 * were overwritten before they were read (EPIPE), which could hide one.
 * A WARN() whose message (the record before its "WARNING:" line) is one
 * of @known's is not counted, nor the "Call Trace:" that follows it;
 * @known may be NULL. When one was stepped over and nothing else found,
 * the kernel's log buffer is cleared (dmesg -C), so that the run's last
 * look at it (guest-init.sh) does not fail on what was checked here:
 * readers of /dev/kmsg, this one too, still get every record.
 */
static inline int kmsg_new_warnings(int fd, struct known_warns *known)
{
	char recs[2][8192];	/* this record and the one before */
	const char *prev = "";
	bool known_trace = false, took = false;
	int count = 0, i = 0;
	regex_t re;
	ssize_t n;

	if (regcomp(&re, KERNEL_WARNINGS, REG_EXTENDED | REG_NOSUB))
		return -1;
	while ((n = read(fd, recs[i], sizeof(recs[i]) - 1)) > 0) {
		/* "prio,seq,usec,flags;message\n", then key=value lines */
		char *msg;

		recs[i][n] = '\0';
		msg = strchr(recs[i], ';');
		msg = msg ? msg + 1 : recs[i];
		msg[strcspn(msg, "\n")] = '\0';
		if (!strncmp(msg, "WARNING:", 8) && known_warn_take(known, prev))
			known_trace = took = true;
		else if (known_trace && !strcmp(msg, "Call Trace:"))
			known_trace = false;
		else
			count += !regexec(&re, msg, 0, NULL, 0);
		prev = msg;
		i ^= 1;
	}
	regfree(&re);
	if (n < 0 && errno != EAGAIN)
		return -1;
	if (took && !count && klogctl(5 /* SYSLOG_ACTION_CLEAR */, NULL, 0))
		return -1;
	return count;
}

#endif /* NNP_FAIL_NTH_H */
