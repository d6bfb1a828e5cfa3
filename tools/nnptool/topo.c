// SPDX-License-Identifier: MIT
/*
 * nnptool topo: the devices' link matrix, in the spirit of nvidia-smi topo
 * -m. Each cell says how device ROW reaches device COLUMN over links that
 * are up: Ln, n direct links; Hn, n hops through other chips; - no path.
 * Then the links that leave this host, to chips of other chassis of a POD
 * (socket links): from which device and port, to which chip and port, up
 * or down.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "json_out.h"
#include "nnptool.h"
#include "topo_read.h"

static void cell(const struct topo *t, int i, int j, char *buf, size_t len)
{
	if (i == j)
		snprintf(buf, len, "X");
	else if (t->links[i][j])
		snprintf(buf, len, "L%d", t->links[i][j]);
	else if (t->hops[i][j] > 0)
		snprintf(buf, len, "H%d", t->hops[i][j]);
	else
		snprintf(buf, len, "-");
}

static void print_json(const struct topo *t)
{
	struct json_object *doc = jo_obj(NULL, NULL), *devs, *d, *matrix, *links,
			   *hops, *m, *l, *h;
	char c[16];
	int i, j;

	devs = jo_arr(doc, "devices");
	for (i = 0; i < t->n; i++) {
		d = jo_obj(devs, NULL);
		jo_int(d, "index", i);
		jo_u64(d, "chip_id", t->chip[i]);
		jo_int(d, "numa_node", t->numa[i]);
	}
	matrix = jo_arr(doc, "matrix");
	links = jo_arr(doc, "links");
	hops = jo_arr(doc, "hops");
	for (i = 0; i < t->n; i++) {
		m = jo_arr(matrix, NULL);
		l = jo_arr(links, NULL);
		h = jo_arr(hops, NULL);
		for (j = 0; j < t->n; j++) {
			cell(t, i, j, c, sizeof(c));
			jo_str(m, NULL, c);
			jo_int(l, NULL, t->links[i][j]);
			jo_int(h, NULL, t->hops[i][j]);
		}
	}
	links = jo_arr(doc, "links_out");
	for (i = 0; i < t->nout; i++) {
		l = jo_obj(links, NULL);
		jo_int(l, "index", t->out[i].dev);
		jo_int(l, "port", (int)t->out[i].port);
		jo_u64(l, "peer_chip", t->out[i].peer_chip);
		jo_u64(l, "peer_port", t->out[i].peer_port);
		jo_bool(l, "up", t->out[i].up);
	}
	jo_line(stdout, doc);
}

static void print_table(const struct topo *t)
{
	char c[16], name[16];
	int i, j;

	printf("%-6s", "");
	for (j = 0; j < t->n; j++) {
		snprintf(name, sizeof(name), "dev%d", j);
		printf(" %5s", name);
	}
	printf("  %4s  %4s\n", "CHIP", "NUMA");
	for (i = 0; i < t->n; i++) {
		snprintf(name, sizeof(name), "dev%d", i);
		printf("%-6s", name);
		for (j = 0; j < t->n; j++) {
			cell(t, i, j, c, sizeof(c));
			printf(" %5s", c);
		}
		if (t->numa[i] < 0)
			printf("  %4" PRIu32 "  %4s\n", t->chip[i], "N/A");
		else
			printf("  %4" PRIu32 "  %4d\n", t->chip[i], t->numa[i]);
	}
	printf("\nLegend:\n"
	       "  X   = self\n"
	       "  Ln  = joined by n inter-chip links that are up\n"
	       "  Hn  = reached in n hops through other chips\n"
	       "  -   = no path over links that are up\n");
	if (!t->nout)
		return;
	printf("\nLinks to chips of other hosts:\n");
	for (i = 0; i < t->nout; i++)
		printf("  dev%d port %u -> chip %" PRIu32 " port %" PRIu32 "  %s\n",
		       t->out[i].dev, t->out[i].port, t->out[i].peer_chip,
		       t->out[i].peer_port, t->out[i].up ? "up" : "down");
}

int topo_fail(nnp_result_t r)
{
	fprintf(stderr, "nnptool: topo: %s (%s)\n", nnp_get_last_error(),
		nnp_strerror(r));
	return NNPTOOL_EXIT_ERROR;
}

int cmd_topo(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pick", required_argument, NULL, 'p' },
		{ "free", required_argument, NULL, 'f' },
		{ "path", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nnptool_cmd cmd = {
		"topo", "[--json] [--pick K|RxC [--free LIST] | --path A,B]",
		"p:f:r:", opts, 0, 0,
	};
	const char *shape = NULL, *free_list = NULL, *pair = NULL;
	struct topo *t;
	int ret;

	while ((ret = nnptool_getopt(&cmd, o, argc, argv)) > 0) {
		if (ret == 'p')
			shape = optarg;
		else if (ret == 'f')
			free_list = optarg;
		else
			pair = optarg;
	}
	if (ret != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(ret);
	if (free_list && !shape) {
		fprintf(stderr, "nnptool: topo: --free needs --pick\n");
		return NNPTOOL_EXIT_USAGE;
	}
	if (pair && shape) {
		fprintf(stderr, "nnptool: topo: --path and --pick are two questions: ask one\n");
		return NNPTOOL_EXIT_USAGE;
	}
	if (pair)
		return topo_route(&cmd, o, pair);
	if (shape)
		return topo_pick(&cmd, o, shape, free_list);
	t = malloc(sizeof(*t));
	if (!t)
		return nnptool_fail("topo", NNP_ERROR_OUT_OF_MEMORY);
	ret = topo_read(t, "topo", false);
	if (!ret) {
		if (o->json)
			print_json(t);
		else
			print_table(t);
	}
	free(t);
	return ret;
}
