/* SPDX-License-Identifier: MIT */
/*
 * How a stream's wait polls its completion ring before it sleeps on the
 * queue's interrupt (spin.c).
 */
#ifndef NNP_SPIN_H
#define NNP_SPIN_H

#include <stdint.h>

struct nnp_spin {
	int64_t spin_ns;	/* poll without pause for this long, */
	int64_t poll_ns;	/* then yield between polls until this long */
};

/*
 * The policy for a process that may run on @cpus CPUs, one of
 * @local_ranks ranks on this node (0: not known), with NNP_SPIN_US
 * @spin_us (NULL: unset).
 */
struct nnp_spin nnp_spin_choose(const char *spin_us, int cpus, int local_ranks);
/* nnp_spin_choose() with what this process sees: its affinity, its launcher. */
struct nnp_spin nnp_spin_policy(void);

#endif /* NNP_SPIN_H */
