// SPDX-License-Identifier: MIT
/*
 * Waiting that shares the CPUs. A wait polls its completion ring for up to
 * NNP_SPIN_US (50 us by default) before it sleeps in QUEUE_WAIT: a
 * completion that comes that soon costs no interrupt and no wake-up. But
 * ranks that outnumber the CPUs they may run on would spin each other
 * out: the rank a collective waits for cannot run while the others poll.
 * So such a rank polls without pause only briefly, then gives its CPU up
 * between polls (sched_yield(), as Open MPI's mpi_yield_when_idle does),
 * then sleeps. It knows it is one of many from its launcher: Open MPI's
 * OMPI_COMM_WORLD_LOCAL_SIZE, torchrun's LOCAL_WORLD_SIZE, MPICH's
 * MPI_LOCALNRANKS; and its CPUs from its affinity mask.
 */
#include <sched.h>
#include <stdlib.h>

#include "spin.h"

/* How long a wait polls before it sleeps, unless NNP_SPIN_US. */
#define SPIN_DEFAULT_US		50
#define SPIN_MAX_US		10000
/* An oversubscribed rank's poll without pause, for what is about to come. */
#define SPIN_SHARED_US		5

/* @s as a number 0..@max, or -1. */
static long parse(const char *s, long max)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	v = strtol(s, &end, 10);
	return *end || v < 0 || v > max ? -1 : v;
}

struct nnp_spin nnp_spin_choose(const char *spin_us, int cpus, int local_ranks)
{
	long us = parse(spin_us, SPIN_MAX_US);
	struct nnp_spin p;

	if (us < 0)
		us = SPIN_DEFAULT_US;
	p.poll_ns = us * 1000;
	p.spin_ns = p.poll_ns;
	if (cpus > 0 && local_ranks > cpus && us > SPIN_SHARED_US)
		p.spin_ns = SPIN_SHARED_US * 1000;
	return p;
}

static int local_ranks(void)
{
	static const char *const vars[] = {
		"OMPI_COMM_WORLD_LOCAL_SIZE", "LOCAL_WORLD_SIZE", "MPI_LOCALNRANKS",
	};
	unsigned int i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		long n = parse(getenv(vars[i]), 1 << 20);

		if (n > 0)
			return (int)n;
	}
	return 0;
}

struct nnp_spin nnp_spin_policy(void)
{
	cpu_set_t set;
	int cpus = 0;

	if (!sched_getaffinity(0, sizeof(set), &set))
		cpus = CPU_COUNT(&set);
	return nnp_spin_choose(getenv("NNP_SPIN_US"), cpus, local_ranks());
}
