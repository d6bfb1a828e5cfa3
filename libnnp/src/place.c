// SPDX-License-Identifier: MIT
/*
 * nnp_topo_pick(): placement on this host's devices, their port tables
 * read now and searched by nnp_place_plan() (place_plan.c); and
 * nnp_topo_route(): a routed message's path among them (route_plan.c).
 */
#include <stdlib.h>

#include "comm.h"
#include "internal.h"
#include "log.h"
#include "place.h"
#include "route_plan.h"

/* The free devices' indices into @devs: all if @free_devs is NULL. */
static nnp_result_t free_list(const int *free_devs, int nfree, int count,
			      int *devs, int *n)
{
	bool seen[NNP_MAX_DEVICES] = { false };
	int i;

	if (!free_devs) {
		for (i = 0; i < count; i++)
			devs[i] = i;
		*n = count;
		return NNP_SUCCESS;
	}
	if (nfree < 0 || nfree > count)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"%d free devices listed, of %d", nfree, count);
	for (i = 0; i < nfree; i++) {
		if (free_devs[i] < 0 || free_devs[i] >= count)
			return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
					"free device %d is not one of the %d devices",
					free_devs[i], count);
		if (seen[free_devs[i]])
			return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
					"free device %d is listed twice", free_devs[i]);
		seen[free_devs[i]] = true;
		devs[i] = free_devs[i];
	}
	*n = nfree;
	return NNP_SUCCESS;
}

/* The port tables of the @n devices @devs lists, into @info. */
static nnp_result_t read_tables(const int *devs, int n,
				struct nnp_rank_info *info)
{
	nnp_device_t *dev;
	nnp_result_t res;
	int i;

	for (i = 0; i < n; i++) {
		res = nnp_device_open(devs[i], &dev);
		if (res == NNP_SUCCESS) {
			res = nnp_comm_rank_info(dev, &info[i]);
			nnp_device_close(dev);
		}
		if (res != NNP_SUCCESS)
			return nnp_fail_within(res, "device %d", devs[i]);
	}
	return NNP_SUCCESS;
}

nnp_result_t nnp_topo_pick(const int *free_devs, int nfree, int rows, int cols,
			   int *picked)
{
	int devs[NNP_MAX_DEVICES], count, n = 0, i;
	uint32_t out[NNP_MAX_DEVICES];
	struct nnp_rank_info *info;
	nnp_result_t res;

	if (rows < 1 || cols < 1 || rows > NNP_MAX_DEVICES ||
	    cols > NNP_MAX_DEVICES || !picked)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"no %d x %d placement%s", rows, cols,
				picked ? "" : " into a NULL array");
	res = nnp_device_count(&count);
	if (res == NNP_SUCCESS)
		res = free_list(free_devs, nfree, count, devs, &n);
	if (res != NNP_SUCCESS)
		return res;
	info = calloc((size_t)n + 1, sizeof(*info));
	if (!info)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no memory for %d port tables", n);
	res = read_tables(devs, n, info);
	if (res == NNP_SUCCESS)
		res = nnp_place_plan(info, (uint32_t)n, (uint32_t)rows,
				     (uint32_t)cols, out);
	for (i = 0; res == NNP_SUCCESS && i < rows * cols; i++)
		picked[i] = devs[out[i]];
	free(info);
	return res;
}

nnp_result_t nnp_topo_route(int from, int to, int *path, int max, int *hops)
{
	int devs[NNP_MAX_DEVICES], count, n = 0, i;
	uint32_t way[NNP_MAX_DEVICES];
	struct nnp_rank_info *info;
	nnp_result_t res;
	uint32_t k = 0;

	res = nnp_device_count(&count);
	if (res == NNP_SUCCESS)
		res = free_list(NULL, 0, count, devs, &n);
	if (res != NNP_SUCCESS)
		return res;
	if (from < 0 || from >= n || to < 0 || to >= n || !path || !hops || max < 0)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"no route from device %d to device %d of %d%s", from, to, n,
				path && hops ? "" : " into a NULL array");
	*hops = 0;
	if (from == to)
		return NNP_SUCCESS;
	info = calloc((size_t)n, sizeof(*info));
	if (!info)
		return nnp_fail(NNP_ERROR_OUT_OF_MEMORY, "no memory for %d port tables", n);
	res = read_tables(devs, n, info);
	if (res == NNP_SUCCESS)
		k = nnp_route_path(info, (uint32_t)n, (uint32_t)from, (uint32_t)to, way);
	free(info);
	if (res != NNP_SUCCESS)
		return res;
	if (!k)
		return nnp_fail(NNP_ERROR_NO_PATH,
				"no path of up links from device %d to device %d", from, to);
	if ((int)k > max)
		return nnp_fail(NNP_ERROR_INVALID_ARGUMENT,
				"the path from device %d to device %d crosses %u devices, room for %d",
				from, to, k, max);
	for (i = 0; i < (int)k; i++)
		path[i] = (int)way[i];
	*hops = (int)k;
	return NNP_SUCCESS;
}
