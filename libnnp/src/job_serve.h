/* SPDX-License-Identifier: MIT */
/* The job's root once every rank is in: the job's view (job_serve.c). */
#ifndef NNP_JOB_SERVE_H
#define NNP_JOB_SERVE_H

#include <stdint.h>

#include "boot_msg.h"
#include "netif.h"

/*
 * Serve the view of the job of @ranks (every one in, their fds and
 * sessions; @secret the sessions') at @listen_fd, bound to @where, until
 * each rank's connection closed or a new rendezvous took the socket
 * (nnp_job_serve_take()). Takes the ranks' fds and @listen_fd.
 */
void nnp_job_serve(int listen_fd, const char *where, const uint8_t *secret,
		   uint64_t epoch, struct nnp_boot_roster *ranks);

/*
 * The listening socket of a view this process serves at @addr, given up
 * for a new rendezvous there (the old view ends); -1 if none.
 */
int nnp_job_serve_take(const union nnp_sockaddr *addr);

#endif /* NNP_JOB_SERVE_H */
