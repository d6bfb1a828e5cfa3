// SPDX-License-Identifier: MIT
/*
 * nnptool topo --pick K|RxC [--free LIST]: which of the free devices a job
 * should run on, by nnp_topo_pick(): K that form a ring of links that are
 * up, or an R x C torus. The indices print as one comma-separated line in
 * ring order (row by row for a torus), what NNP_VISIBLE_DEVICES takes, so
 * that rank i of the job runs on the i-th.
 */
#include <stdlib.h>
#include <string.h>

#include "json_out.h"
#include "nnptool.h"

#define MAX_PICK	256

/* "4": a ring, *@rows 1; "2x4": 2 rows of 4. 0, or -1 if neither. */
static int parse_shape(const char *s, int *rows, int *cols)
{
	char *end;
	long a, b = 0;

	a = strtol(s, &end, 10);
	if (*end == 'x')
		b = strtol(end + 1, &end, 10);
	else
		b = a, a = 1;
	if (*s < '0' || *s > '9' || *end || a < 1 || b < 1 ||
	    a > MAX_PICK || b > MAX_PICK || a * b > MAX_PICK)
		return -1;
	*rows = (int)a;
	*cols = (int)b;
	return 0;
}

/* "0,2,5" into @devs; how many, or -1 if not such a list. "" is none. */
static int parse_list(const char *s, int *devs)
{
	int n = 0;
	char *end;
	long v;

	while (*s) {
		if (*s < '0' || *s > '9' || n == MAX_PICK)
			return -1;
		v = strtol(s, &end, 10);
		if (v > 0xffff || (*end && *end != ','))
			return -1;
		devs[n++] = (int)v;
		s = end + (*end == ',');
	}
	return n;
}

int topo_pick(const struct nnptool_cmd *cmd, const struct nnptool_opts *o,
	      const char *shape, const char *free_list)
{
	int rows, cols, nfree = 0, i, free_devs[MAX_PICK], picked[MAX_PICK];
	struct json_object *doc, *arr;
	nnp_result_t r;

	if (parse_shape(shape, &rows, &cols))
		return nnptool_bad_value(cmd, "K or RxC", shape);
	if (free_list) {
		nfree = parse_list(free_list, free_devs);
		if (nfree < 0)
			return nnptool_bad_value(cmd, "device list", free_list);
	}
	r = nnp_topo_pick(free_list ? free_devs : NULL, nfree, rows, cols, picked);
	if (r != NNP_SUCCESS)
		return topo_fail(r);
	if (o->json) {
		doc = jo_obj(NULL, NULL);
		jo_str(doc, "shape", rows == 1 || cols == 1 ? "ring" : "torus");
		jo_int(doc, "rows", rows);
		jo_int(doc, "cols", cols);
		arr = jo_arr(doc, "devices");
		for (i = 0; i < rows * cols; i++)
			jo_int(arr, NULL, picked[i]);
		jo_line(stdout, doc);
		return NNPTOOL_EXIT_OK;
	}
	for (i = 0; i < rows * cols; i++)
		printf("%s%d", i ? "," : "", picked[i]);
	printf("\n");
	return NNPTOOL_EXIT_OK;
}
