/* SPDX-License-Identifier: MIT */
/*
 * What a guest test knows about the VM it runs in: tools/nnp-vm exports the
 * number of chips and their memory size, and gives chip ids 0..N-1.
 */
#ifndef NNP_GUEST_ENV_H
#define NNP_GUEST_ENV_H

#include <stdint.h>
#include <stdlib.h>

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
#define GUEST_FW_BUILD		"nnp-fwsim 1.1.0"

#endif /* NNP_GUEST_ENV_H */
