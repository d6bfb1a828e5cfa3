// SPDX-License-Identifier: MIT
/*
 * nnptool: every command's command line through getopt_long, with the
 * options all of them take (-j/--json, -h/--help), one wording for every
 * mistake and the exit codes the man page lists.
 */
#include <stdlib.h>
#include <string.h>

#include "nnptool.h"

/* The most options of a command (bench's collectives have 12). */
#define MAX_OWN_OPTS	16

static void usage_line(FILE *f, const struct nnptool_cmd *cmd)
{
	fprintf(f, "usage: nnptool %s%s%s\n", cmd->name, *cmd->args ? " " : "",
		cmd->args);
}

static int bad_line(const struct nnptool_cmd *cmd)
{
	usage_line(stderr, cmd);
	return NNPTOOL_OPTS_BAD;
}

/*
 * getopt's own messages would name the command as the program; these name
 * both. With opterr 0, optopt is the option's letter, or 0 for a long
 * option that does not exist, which is then argv[optind - 1].
 */
static int bad_option(const struct nnptool_cmd *cmd, int c, char **argv)
{
	if (c == ':')
		fprintf(stderr, "nnptool: %s: option '%s' needs a value\n",
			cmd->name, argv[optind - 1]);
	else if (optopt)
		fprintf(stderr, "nnptool: %s: unknown option '-%c'\n", cmd->name,
			optopt);
	else
		fprintf(stderr, "nnptool: %s: unknown option '%s'\n", cmd->name,
			argv[optind - 1]);
	return bad_line(cmd);
}

static int count_operands(const struct nnptool_cmd *cmd, int argc, char **argv)
{
	int n = argc - optind;

	if (n < cmd->min_args) {
		fprintf(stderr, "nnptool: %s: missing operand\n", cmd->name);
		return bad_line(cmd);
	}
	if (n > cmd->max_args) {
		fprintf(stderr, "nnptool: %s: extra operand '%s'\n", cmd->name,
			argv[optind + cmd->max_args]);
		return bad_line(cmd);
	}
	return NNPTOOL_OPTS_DONE;
}

int nnptool_getopt(const struct nnptool_cmd *cmd, struct nnptool_opts *o,
		   int argc, char **argv)
{
	struct option all[MAX_OWN_OPTS + 3] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
	};
	const char *own = cmd->shortopts ? cmd->shortopts : "";
	bool stop = *own == '+';	/* options end at the first operand */
	char shortopts[64];
	int n, c;

	for (n = 0; cmd->longopts && cmd->longopts[n].name; n++) {
		if (n == MAX_OWN_OPTS)
			abort();	/* a command outgrew the table */
		all[n + 2] = cmd->longopts[n];
	}
	/* ':' first: a missing value is ':', told from an unknown option. */
	snprintf(shortopts, sizeof(shortopts), "%s:jh%s", stop ? "+" : "",
		 own + stop);
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, all, NULL)) == 'j')
		o->json = true;
	if (c == 'h') {
		usage_line(stdout, cmd);
		return NNPTOOL_OPTS_HELP;
	}
	if (c == '?' || c == ':')
		return bad_option(cmd, c, argv);
	if (c != -1)
		return c;
	return count_operands(cmd, argc, argv);
}

int nnptool_opts_exit(int c)
{
	return c == NNPTOOL_OPTS_HELP ? NNPTOOL_EXIT_OK : NNPTOOL_EXIT_USAGE;
}

int nnptool_bad_value(const struct nnptool_cmd *cmd, const char *opt,
		      const char *value)
{
	fprintf(stderr, "nnptool: %s: bad %s '%s'\n", cmd->name, opt, value);
	bad_line(cmd);
	return NNPTOOL_EXIT_USAGE;
}

int nnptool_output_opt(const char *name, const char *args,
		       struct nnptool_opts *o, int argc, char **argv,
		       const char **out)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	const struct nnptool_cmd cmd = { name, args, "o:", opts, 0, 0 };
	int c;

	/* -o is the command's only option: nothing else comes back. */
	while ((c = nnptool_getopt(&cmd, o, argc, argv)) == 'o')
		*out = optarg;
	return c == NNPTOOL_OPTS_DONE ? -1 : nnptool_opts_exit(c);
}
