/* SPDX-License-Identifier: MIT */
/*
 * Timing for the benchmarks of the firmware alone (call_check_fw.c,
 * group_fw.c): a monotonic clock and the median of many blocks, so that
 * the host's drift and a stray slow block weigh little.
 */
#ifndef NNP_FW_TIMING_H
#define NNP_FW_TIMING_H

#include <stddef.h>
#include <stdlib.h>
#include <time.h>

static inline double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the @n values at @v, which it sorts. */
static inline double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif /* NNP_FW_TIMING_H */
