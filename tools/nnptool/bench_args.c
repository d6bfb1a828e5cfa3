// SPDX-License-Identifier: MIT
/*
 * nnptool bench's collectives: the command line, in nccl-tests' letters
 * where it has them, each value checked against what the benchmark can
 * use before any device is opened.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench_coll.h"
#include "nnptool.h"

/* getopt_long's values of the long-only options: past every character. */
enum { OPT_BYTES = 256, OPT_TRIALS, OPT_PEER, OPT_CSV };

const struct option bench_long_opts[] = {
	{ "min", required_argument, NULL, 'b' },
	{ "max", required_argument, NULL, 'e' },
	{ "step", required_argument, NULL, 'f' },
	{ "iters", required_argument, NULL, 'n' },
	{ "agg", required_argument, NULL, 'm' },
	{ "type", required_argument, NULL, 'd' },
	{ "op", required_argument, NULL, 'o' },
	{ "root", required_argument, NULL, 'r' },
	{ "check", required_argument, NULL, 'c' },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "trials", required_argument, NULL, OPT_TRIALS },
	{ "peer", required_argument, NULL, OPT_PEER },
	{ "csv", no_argument, NULL, OPT_CSV },
	{ NULL, 0, NULL, 0 },
};

/* @name's index in @names (-1 for "all"), or -2 if none. */
static int named(const char *name, const char *(*names)(int), int last)
{
	int i;

	if (!strcmp(name, "all"))
		return -1;
	for (i = 0; i <= last; i++)
		if (!strcmp(name, names(i)))
			return i;
	return -2;
}

static const char *type_at(int i)
{
	return dtype_name((nnp_dtype_t)i);
}

static const char *op_at(int i)
{
	return redop_name((nnp_redop_t)i);
}

/* A number option's value, @least to 100000; -1 if not one. */
static int number(const char *arg, unsigned long least, unsigned long *out)
{
	char *end;

	*out = strtoul(arg, &end, 0);
	return *end || *arg == '-' || *out < least || *out > 100000 ? -1 : 0;
}

/* One option of @c; 0, or the exit code of a bad value. */
static int parse_one(const struct nnptool_cmd *cmd, int c,
		     struct bench_setup *b, struct bench_args *z)
{
	size_t *to = c == 'b' ? &z->min : c == 'e' ? &z->max :
		     c == OPT_BYTES ? &b->bytes : NULL;

	if (to)
		return parse_size(optarg, to) || *to < 8 ?
		       nnptool_bad_value(cmd, "SIZE (8 or more)", optarg) : 0;
	switch (c) {
	case 'd':
		b->type_arg = optarg;
		z->type = named(optarg, type_at, NNP_INT64);
		return z->type == -2 ? nnptool_bad_value(cmd,
			"TYPE (float, half, bfloat16, int32, double, int64 or all)", optarg) : 0;
	case 'o':
		b->op_arg = z->op_arg = optarg;
		z->op = named(optarg, op_at, NNP_AVG);
		return z->op == -2 ? nnptool_bad_value(cmd,
			"OP (sum, prod, min, max, avg or all)", optarg) : 0;
	case OPT_CSV:
		z->csv = true;
		return 0;
	case 'f':
		return number(optarg, 2, &z->step) ?
		       nnptool_bad_value(cmd, "F (2 to 100000)", optarg) : 0;
	case 'n':
		return number(optarg, 1, &b->iters) ?
		       nnptool_bad_value(cmd, "N (1 to 100000)", optarg) : 0;
	case 'm':
		return number(optarg, 1, &b->agg) || b->agg > 1024 ?
		       nnptool_bad_value(cmd, "N (1 to 1024)", optarg) : 0;
	case 'r':
		z->root_arg = optarg;
		return number(optarg, 0, &z->root) ?
		       nnptool_bad_value(cmd, "ROOT (0 to 100000)", optarg) : 0;
	case 'c':
		if (strcmp(optarg, "0") && strcmp(optarg, "1"))
			return nnptool_bad_value(cmd, "0 or 1", optarg);
		b->check = *optarg == '1';
		return 0;
	case OPT_PEER:
		z->peer_arg = optarg;
		return number(optarg, 1, &z->peer) ?
		       nnptool_bad_value(cmd, "P (1 to 100000)", optarg) : 0;
	default:
		return number(optarg, 1, &b->trials) ?
		       nnptool_bad_value(cmd, "T (1 to 100000)", optarg) : 0;
	}
}

/* An option the benchmark has no use for: said; exit code 2. */
static int misplaced(const struct nnptool_cmd *cmd, const char *opt,
		     const char *whose)
{
	fprintf(stderr, "nnptool: %s: %s is %s\n", cmd->name, opt, whose);
	return NNPTOOL_EXIT_USAGE;
}

int bench_parse(const struct nnptool_cmd *cmd, struct nnptool_opts *o,
		int argc, char **argv, struct bench_setup *b, struct bench_args *z)
{
	enum coll c = b->coll;
	int opt, ret;

	while ((opt = nnptool_getopt(cmd, o, argc, argv)) > 0)
		if ((ret = parse_one(cmd, opt, b, z)))
			return ret;
	if (opt != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(opt);
	if (z->peer_arg && c != SENDRECV)
		return misplaced(cmd, "--peer", "sendrecv's");
	if (z->root_arg && !coll_has_root(c))
		return misplaced(cmd, "-r/--root", "broadcast's, reduce's, gather's and scatter's");
	if (z->op_arg && !coll_reduces(c))
		return misplaced(cmd, "-o/--op", "allreduce's, reduce_scatter's and reduce's");
	if (z->csv && o->json)
		return misplaced(cmd, "--csv", "not for --json too");
	if (z->min > z->max)
		return nnptool_bad_value(cmd, "SIZE (8 to --max)", "--min");
	if (z->max > SIZE_MAX / b->agg) {
		fprintf(stderr, "nnptool: %s: -m %lu of --max %zu B overflow\n",
			cmd->name, b->agg, z->max);
		return NNPTOOL_EXIT_USAGE;
	}
	return -1;
}

