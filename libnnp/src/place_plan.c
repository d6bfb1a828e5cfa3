// SPDX-License-Identifier: MIT
/*
 * libnnp placement, the search: which of the free chips a job should run
 * on, from their port tables. Jobs on ICL rings and meshes must be
 * scheduled on adjacent accelerators (after kube-nnp): K chips that form a
 * ring of links that are up, or an R x C torus. Best fit: the smallest
 * part of joined free chips that can hold the job goes first, so that
 * larger parts stay whole for larger jobs.
 */
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "place.h"

/*
 * part[r]: the lowest chip of the part of joined chips that r is in;
 * size[p]: how many chips part p has.
 */
static void find_parts(const struct nnp_rank_info *info, uint32_t n,
		       uint32_t *part, uint32_t *size)
{
	uint32_t *queue = size;	/* a part's chips, until all are found */
	uint32_t r, head, tail, i;

	for (r = 0; r < n; r++)
		part[r] = n;
	for (r = 0; r < n; r++) {
		if (part[r] != n)
			continue;
		part[r] = r;
		queue[0] = r;
		for (head = 0, tail = 1; head < tail; head++)
			for (i = 0; i < n; i++)
				if (part[i] == n &&
				    (nnp_rank_port_to(info, queue[head], i) >= 0 ||
				     nnp_rank_port_to(info, i, queue[head]) >= 0)) {
					part[i] = r;
					queue[tail++] = i;
				}
	}
	for (r = 0; r < n; r++)
		size[r] = 0;
	for (r = 0; r < n; r++)
		size[part[r]]++;
}

/*
 * The chips to start from, best fit first: those of parts that hold @k
 * or more, the smallest such part first (the lowest first among equals),
 * each part's chips in index order. Returns how many.
 */
static uint32_t order_starts(const uint32_t *part, const uint32_t *size,
			     uint32_t n, uint32_t k, uint32_t *starts)
{
	uint32_t count = 0, want, r, p;

	for (want = k; want <= n; want++)
		for (p = 0; p < n; p++) {
			if (part[p] != p || size[p] != want)
				continue;
			for (r = p; r < n; r++)
				if (part[r] == p)
					starts[count++] = r;
		}
	return count;
}

/* "3, 2, 1": the parts' sizes, largest first, into @buf. */
static void part_sizes(const uint32_t *part, const uint32_t *size, uint32_t n,
		       char *buf, size_t len)
{
	size_t used = 0;
	uint32_t want, p;

	buf[0] = '\0';
	for (want = n; want > 0; want--)
		for (p = 0; p < n && used < len; p++)
			if (part[p] == p && size[p] == want)
				used += snprintf(buf + used, len - used, "%s%u",
						 used ? ", " : "", want);
}

static nnp_result_t say_none(const uint32_t *part, const uint32_t *size,
			     uint32_t n, uint32_t rows, uint32_t cols,
			     bool gave_up)
{
	uint32_t k = rows * cols, biggest = 0, p;
	char shape[48], sizes[256];

	for (p = 0; p < n; p++)
		if (size[p] > biggest && part[p] == p)
			biggest = size[p];
	if (rows == 1 || cols == 1)
		snprintf(shape, sizeof(shape), "ring of %u", k);
	else
		snprintf(shape, sizeof(shape), "%ux%u torus", rows, cols);
	if (biggest < k) {
		part_sizes(part, size, n, sizes, sizeof(sizes));
		return nnp_fail(NNP_ERROR_NO_PATH,
				"no %s: the %u free chips' links that are up join at most %u of them (parts of %s)",
				shape, n, biggest, sizes);
	}
	if (gave_up)
		return nnp_fail(NNP_ERROR_NO_PATH,
				"no %s found among the %u free chips before the search gave up",
				shape, n);
	return nnp_fail(NNP_ERROR_NO_PATH,
			"no %s among the %u free chips: their links that are up join %u of them, but not as one%s",
			shape, n, biggest,
			rows > 1 && cols > 1 ?
			" (each row and column a ring; one of 2 chips needs two links)" : "");
}

nnp_result_t nnp_place_plan(const struct nnp_rank_info *info, uint32_t n,
			    uint32_t rows, uint32_t cols, uint32_t *out)
{
	uint32_t k = rows * cols, nstarts, *part, *size, *starts;
	nnp_result_t res = NNP_ERROR_OUT_OF_MEMORY;
	bool gave_up = false;

	if (k > n)
		return nnp_fail(NNP_ERROR_NO_DEVICE, "%u chips asked for, %u free",
				k, n);
	if (rows == 1 || cols == 1)
		cols = k, rows = 1;
	part = calloc(n, sizeof(*part));
	size = calloc(n, sizeof(*size));
	starts = calloc(n, sizeof(*starts));
	if (part && size && starts) {
		find_parts(info, n, part, size);
		nstarts = order_starts(part, size, n, k, starts);
		res = nnp_grid_pick(info, n, starts, nstarts, cols, rows, out,
				    &gave_up);
		if (res == NNP_ERROR_NO_PATH)
			res = say_none(part, size, n, rows, cols, gave_up);
	}
	free(part);
	free(size);
	free(starts);
	return res;
}

