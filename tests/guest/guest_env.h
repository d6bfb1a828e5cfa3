/* SPDX-License-Identifier: MIT */
/*
 * What a guest test knows about the VM it runs in: tools/nnp-vm exports the
 * number of chips and their memory size, and gives chip ids 0..N-1.
 */
#ifndef NNP_GUEST_ENV_H
#define NNP_GUEST_ENV_H

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <nnp/nnp.h>

static inline uint64_t guest_env_u64(const char *name)
{
	const char *v = getenv(name);

	return v ? strtoull(v, NULL, 0) : 0;
}

#define GUEST_CHIPS	((int)guest_env_u64("NNP_VM_CHIPS"))
#define GUEST_MEM_SIZE	guest_env_u64("NNP_VM_MEM_SIZE")

/* Properties every nnp device in the test VM has. */
#define GUEST_ICL_PORTS		4
#define GUEST_NUM_QUEUES	64
#define GUEST_FW_BUILD		"nnp-fwsim 1.2.0"

/*
 * A file of its own on device @index (a context of its own), for raw
 * ioctls: the device found as libnnp finds it; -1 if it cannot be opened.
 */
static inline int guest_open_fd(int index)
{
	nnp_device_t *dev;
	int fd;

	if (nnp_device_open(index, &dev) != NNP_SUCCESS)
		return -1;
	fd = dup(nnp_device_fd(dev));
	nnp_device_close(dev);
	return fd;
}

#endif /* NNP_GUEST_ENV_H */
