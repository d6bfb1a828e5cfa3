/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous's sockets and clocks (boot_io.c), shared by the job's
 * root (bootstrap.c, job_serve.c), its ranks (job_rank.c) and the job
 * view's clients (job_view.c).
 */
#ifndef NNP_BOOT_IO_H
#define NNP_BOOT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nnp/nnp.h"

/* Fill @len bytes at @buf from the kernel's random source. */
nnp_result_t nnp_random_fill(void *buf, size_t len);
/* CLOCK_MONOTONIC in ms. */
int64_t nnp_now_ms(void);
/* Whether this thread's joins were cancelled (nnp_bootstrap_cancel_on()). */
bool nnp_boot_cancelled(void);
/* Send @len bytes at @buf as one message, by @deadline (nnp_now_ms()). */
nnp_result_t nnp_boot_send(int fd, const void *buf, uint32_t len, int64_t deadline);
/*
 * Receive a message of exactly @len bytes into @buf by @deadline; any
 * other length is refused unread (NNP_ERROR_IO). NNP_ERROR_TIMEOUT.
 */
nnp_result_t nnp_boot_recv(int fd, void *buf, uint32_t len, int64_t deadline);

struct nnp_boot_session;

/* What the root answered a session's open with. */
enum nnp_boot_answer {
	NNP_BOOT_HUNG_UP,	/* nothing: it closed the connection */
	NNP_BOOT_UNPROVEN,	/* no proof whole, or one that does not hold */
	NNP_BOOT_PROVEN,
};

/*
 * Open a session of @kind (NNP_BOOT_JOIN, NNP_BOOT_VIEW) with the root on
 * @fd: our nonce out, the root's back with its proof that it holds @s's
 * secret, *@answer saying whether it did. Past the proof's check the
 * root has the nonces and no more: a root that does not hold the secret
 * never hears who we are.
 */
nnp_result_t nnp_boot_open_session(int fd, struct nnp_boot_session *s,
				   uint32_t kind, int64_t deadline,
				   enum nnp_boot_answer *answer);

#endif /* NNP_BOOT_IO_H */
