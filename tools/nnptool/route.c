// SPDX-License-Identifier: MIT
/*
 * nnptool topo --path A,B: the devices a routed message crosses from
 * device A to device B (nnp_topo_route()), as libnnp routes it for a
 * communicator of every device of the host: "0 -> 1 -> 2 (2 hops)".
 */
#include <stdio.h>
#include <stdlib.h>

#include "json_out.h"
#include "nnptool.h"

#define MAX_HOPS	64

/* "A,B", two device indices; 0, or -1 if not such a pair. */
static int parse_pair(const char *s, int *a, int *b)
{
	char *end;
	long x, y;

	if (*s < '0' || *s > '9')
		return -1;
	x = strtol(s, &end, 10);
	if (*end != ',' || end[1] < '0' || end[1] > '9')
		return -1;
	y = strtol(end + 1, &end, 10);
	if (*end || x > 0xffff || y > 0xffff)
		return -1;
	*a = (int)x;
	*b = (int)y;
	return 0;
}

int topo_route(const struct nnptool_cmd *cmd, const struct nnptool_opts *o,
	       const char *pair)
{
	int from, to, path[MAX_HOPS], hops, i;
	struct json_object *doc, *arr;
	nnp_result_t r;

	if (parse_pair(pair, &from, &to))
		return nnptool_bad_value(cmd, "A,B (two device indices)", pair);
	r = nnp_topo_route(from, to, path, MAX_HOPS, &hops);
	if (r != NNP_SUCCESS)
		return topo_fail(r);
	if (o->json) {
		doc = jo_obj(NULL, NULL);
		jo_int(doc, "from", from);
		jo_int(doc, "to", to);
		jo_int(doc, "hops", hops);
		arr = jo_arr(doc, "path");
		jo_int(arr, NULL, from);
		for (i = 0; i < hops; i++)
			jo_int(arr, NULL, path[i]);
		jo_line(stdout, doc);
		return NNPTOOL_EXIT_OK;
	}
	printf("%d", from);
	for (i = 0; i < hops; i++)
		printf(" -> %d", path[i]);
	printf(" (%d hop%s)\n", hops, hops == 1 ? "" : "s");
	return NNPTOOL_EXIT_OK;
}
