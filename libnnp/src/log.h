/* SPDX-License-Identifier: MIT */
/*
 * libnnp's messages: NNP_DEBUG=WARN|INFO|TRACE lines to stderr or
 * NNP_DEBUG_FILE, and the calling thread's last error text
 * (nnp_get_last_error()).
 */
#ifndef NNP_LOG_H
#define NNP_LOG_H

#include <stdatomic.h>
#include "nnp/nnp.h"

enum nnp_log_level {
	NNP_LOG_NONE,
	NNP_LOG_WARN,	/* every failure returned to the caller */
	NNP_LOG_INFO,	/* what a job was set up with: rendezvous, ring, ports */
	NNP_LOG_TRACE,	/* each step on the way */
};

/* Is @level printed? (To skip building a costly message.) */
int nnp_log_enabled(enum nnp_log_level level);

void nnp_log(enum nnp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * The communicator rank this thread is setting up, shown in its lines;
 * -1 for none.
 */
void nnp_log_set_rank(int rank);

/*
 * Fail with @res: @fmt becomes this thread's last error and a WARN line;
 * returns @res.
 */
nnp_result_t nnp_fail(nnp_result_t res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * As nnp_fail(), but the WARN line only if *@told was false (it is set):
 * for a state a caller polls, such as a failed communicator, which would
 * otherwise log at every poll.
 */
nnp_result_t nnp_fail_once(atomic_bool *told, nnp_result_t res,
			   const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Fail with @res again, @fmt saying what the failure found in this
 * thread's last error was part of: "@fmt: last error".
 */
nnp_result_t nnp_fail_within(nnp_result_t res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* NNP_LOG_H */
