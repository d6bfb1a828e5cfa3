/* SPDX-License-Identifier: MIT */
/* libnnp communicator handles, shared by setup (comm.c) and collectives. */
#ifndef NNP_COMM_H
#define NNP_COMM_H

#include <stdint.h>

#include "internal.h"

struct nnp_comm {
	nnp_device_t *dev;
	uint32_t id;		/* the driver's communicator id */
	int rank;
	int nranks;
	/* By peer rank: this chip's port to it and from it, -1 if no link. */
	int *send_port;
	int *recv_port;
};

#endif /* NNP_COMM_H */
