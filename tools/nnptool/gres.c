// SPDX-License-Identifier: MIT
/*
 * nnptool gres [-o FILE] [--name nnp|gpu] [--no-links]: the gres.conf lines that
 * describe this node's chips to Slurm as generic resources (GRES) of name
 * nnp (or gpu), type nnpt: one line a chip, with its device file and, in
 * Links=, how many links that are up join it to each chip, in the order
 * of the lines (-1 for itself), Slurm's measure of how well two devices
 * are connected. A link that is wired but down is left out of Links= and
 * named in a comment after its chip's line, as is a chip with no link up
 * at all. The first lines, comments, say what slurm.conf needs beside
 * them. --no-links leaves Links= out: Slurm 24.05 to 24.11 (Debian 13's)
 * sort the free devices by it the wrong way round (SchedMD's
 * gres_select_filter.c since commit de37ab428a) and so give a job the
 * least connected ones; without it they take the lowest free, in the
 * order of the lines.
 * Named gpu, the chips are GRES of Slurm's gres/gpu plugin, and Slurm
 * 22.05's ConstrainDevices keeps a job from opening chips it was not
 * given: it confines only the device files of GRES that have a plugin,
 * never those of a generic one (docs/slurm.md).
 * Default FILE: - (stdout), since gres.conf may hold other GRES too; a
 * FILE is replaced whole (nnptool_write_file()). Text whatever --json
 * says, as a gres.conf is.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nnptool.h"
#include "topo_read.h"

#define GRES_TYPE	"nnpt"

/* What write_gres() writes. */
struct gres {
	const struct topo *t;
	const char *name;	/* nnp or gpu */
	bool links;		/* write Links= */
};

/* Why device @i's links are not all in Links=, in comments. */
static void say_down(FILE *f, const struct topo *t, int i)
{
	bool any_up = false;
	int j;

	for (j = 0; j < t->n; j++)
		any_up |= t->links[i][j] > 0;
	for (j = 0; j < t->ndown; j++)
		if (t->down[j].dev == i)
			fprintf(f, "# %s (chip %" PRIu32 "): port %u to chip %" PRIu32
				" port %" PRIu32 " is down, not counted in Links\n",
				t->path[i], t->chip[i], t->down[j].port,
				t->down[j].peer_chip, t->down[j].peer_port);
	if (!any_up && t->n > 1)
		fprintf(f, "# %s (chip %" PRIu32 "): no link up to another chip of this node: fit for a job of one chip only\n",
			t->path[i], t->chip[i]);
}

static void write_gres(FILE *f, const void *arg)
{
	const struct gres *g = arg;
	const struct topo *t = g->t;
	int i, j;

	fprintf(f, "# nnp chips of this node, written by nnptool gres.\n"
		"# slurm.conf needs GresTypes=%s"
		" and, on this node's line, Gres=%s:" GRES_TYPE ":%d\n"
		"%s\n", g->name, g->name, t->n,
		g->links ? "# Links: the links up from a chip to each chip, in the order of these lines; -1 is itself." :
			   "# No Links (--no-links): Slurm then gives a job the lowest free chips, in the order of these lines.");
	for (i = 0; i < t->n; i++) {
		fprintf(f, "Name=%s Type=" GRES_TYPE " File=%s", g->name,
			t->path[i]);
		for (j = 0; g->links && j < t->n; j++)
			fprintf(f, "%s%d", j ? "," : " Links=",
				i == j ? -1 : t->links[i][j]);
		fputc('\n', f);
		say_down(f, t, i);
	}
}

int cmd_gres(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "name", required_argument, NULL, 'n' },
		{ "no-links", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	const struct nnptool_cmd cmd = {
		"gres", "[-o FILE] [--name nnp|gpu] [--no-links]", "o:", opts,
		0, 0,
	};
	struct gres g = { .name = "nnp", .links = true };
	const char *out = "-";
	struct topo *t;
	int c, ret;

	while ((c = nnptool_getopt(&cmd, o, argc, argv)) > 0) {
		if (c == 'o')
			out = optarg;
		else if (c == 'L')
			g.links = false;
		else if (!strcmp(optarg, "nnp") || !strcmp(optarg, "gpu"))
			g.name = optarg;
		else
			return nnptool_bad_value(&cmd, "--name", optarg);
	}
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	t = malloc(sizeof(*t));
	if (!t)
		return nnptool_fail("gres", NNP_ERROR_OUT_OF_MEMORY);
	g.t = t;
	ret = topo_read(t, "gres", true);
	if (!ret && !t->n) {
		fprintf(stderr, "nnptool: gres: no nnp device on this node: no lines to write\n");
		ret = NNPTOOL_EXIT_ERROR;
	}
	if (!ret && strcmp(out, "-"))
		ret = nnptool_write_file("gres", out, write_gres, &g);
	else if (!ret)
		write_gres(stdout, &g);
	free(t);
	return ret;
}
