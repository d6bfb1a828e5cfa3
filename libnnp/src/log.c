// SPDX-License-Identifier: MIT
/*
 * libnnp's messages. NNP_DEBUG picks how much is printed (read once, at
 * the first message); NNP_DEBUG_FILE names where, with %h the host name
 * and %p the process id (as NCCL_DEBUG_FILE). Each line starts with
 * host:pid and the rank being set up, so that the lines of a job's
 * processes can be merged and still read.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "log.h"

#define LAST_ERROR_BYTES	256

static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static enum nnp_log_level log_level;
static FILE *log_file;
static char log_host[64];

static _Thread_local int log_rank = -1;
static _Thread_local char last_error[LAST_ERROR_BYTES];

static enum nnp_log_level level_from_env(void)
{
	static const char *const names[] = {
		[NNP_LOG_WARN] = "WARN", [NNP_LOG_INFO] = "INFO",
		[NNP_LOG_TRACE] = "TRACE",
	};
	const char *s = getenv("NNP_DEBUG");
	unsigned int i;

	for (i = NNP_LOG_WARN; s && i <= NNP_LOG_TRACE; i++)
		if (!strcasecmp(s, names[i]))
			return (enum nnp_log_level)i;
	return NNP_LOG_NONE;
}

/* @pattern with %h and %p expanded into @out; 0 if it does not fit. */
static int expand_file_name(const char *pattern, char *out, size_t size)
{
	size_t n = 0;

	while (*pattern) {
		char piece[64] = { *pattern };
		size_t len, step = 2;

		if (pattern[0] == '%' && pattern[1] == 'h')
			snprintf(piece, sizeof(piece), "%s", log_host);
		else if (pattern[0] == '%' && pattern[1] == 'p')
			snprintf(piece, sizeof(piece), "%d", (int)getpid());
		else
			step = 1;
		pattern += step;
		len = strlen(piece);
		if (n + len >= size)
			return 0;
		memcpy(out + n, piece, len);
		n += len;
	}
	out[n] = '\0';
	return 1;
}

static void log_init(void)
{
	/* Not for a set-user-ID program: it would write where it may. */
	const char *pattern = secure_getenv("NNP_DEBUG_FILE");
	char path[4096];
	int fd;

	if (gethostname(log_host, sizeof(log_host)))
		snprintf(log_host, sizeof(log_host), "?");
	log_host[sizeof(log_host) - 1] = '\0';
	log_level = level_from_env();
	log_file = stderr;
	if (log_level == NNP_LOG_NONE || !pattern || !*pattern)
		return;
	/* Not through a symbolic link another user planted; the user's alone (trace.c). */
	errno = ENAMETOOLONG;
	fd = expand_file_name(pattern, path, sizeof(path)) ?
	     open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	log_file = fd >= 0 ? fdopen(fd, "a") : NULL;
	if (!log_file) {
		const char *why = errno == ELOOP ?
				  "it is a symbolic link, not followed" : strerror(errno);

		if (fd >= 0)
			close(fd);
		/* Not through nnp_log(): that waits for this function. */
		log_file = stderr;
		fprintf(stderr, "%s:%d [-] NNP WARN cannot open NNP_DEBUG_FILE=%s (%s), logging to stderr\n",
			log_host, (int)getpid(), pattern, why);
		return;
	}
	setvbuf(log_file, NULL, _IOLBF, 0);
}

int nnp_log_enabled(enum nnp_log_level level)
{
	pthread_once(&log_once, log_init);
	return level != NNP_LOG_NONE && level <= log_level;
}

static void vlog(enum nnp_log_level level, const char *fmt, va_list ap)
{
	static const char *const tags[] = {
		[NNP_LOG_WARN] = "WARN", [NNP_LOG_INFO] = "INFO",
		[NNP_LOG_TRACE] = "TRACE",
	};
	char msg[1024], rank[16] = "-";

	if (!nnp_log_enabled(level))
		return;
	if (log_rank >= 0)
		snprintf(rank, sizeof(rank), "%d", log_rank);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* One call per line: stdio keeps lines of threads whole. */
	fprintf(log_file, "%s:%d [%s] NNP %s %s\n", log_host, (int)getpid(), rank,
		tags[level], msg);
}

void nnp_log(enum nnp_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

void nnp_log_set_rank(int rank)
{
	log_rank = rank;
}

static nnp_result_t vfail(atomic_bool *told, nnp_result_t res, const char *fmt,
			  va_list ap)
{
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	if (!told || !atomic_exchange(told, true))
		nnp_log(NNP_LOG_WARN, "%s: %s", last_error, nnp_strerror(res));
	return res;
}

nnp_result_t nnp_fail(nnp_result_t res, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	res = vfail(NULL, res, fmt, ap);
	va_end(ap);
	return res;
}

nnp_result_t nnp_fail_once(atomic_bool *told, nnp_result_t res,
			   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	res = vfail(told, res, fmt, ap);
	va_end(ap);
	return res;
}

nnp_result_t nnp_fail_within(nnp_result_t res, const char *fmt, ...)
{
	char what[LAST_ERROR_BYTES], inner[LAST_ERROR_BYTES];
	va_list ap;

	memcpy(inner, last_error, sizeof(inner));
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return nnp_fail(res, "%s: %s", what, inner);
}

const char *nnp_get_last_error(void)
{
	return last_error;
}
