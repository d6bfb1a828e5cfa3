// SPDX-License-Identifier: MIT
/* nnptool: inspect nnp accelerators. */
#include <stdlib.h>
#include <string.h>

#include "nnptool.h"

static void usage(FILE *f)
{
	fputs("usage: nnptool [--json] COMMAND [ARGS]\n"
	      "\n"
	      "commands:\n"
	      "  list        one line per nnp device\n"
	      "  info DEV    everything about one device (DEV: index or /dev/accel/accelN)\n"
	      "  reset DEV   reset the device now (root only); its open contexts are lost\n"
	      "  links       inter-chip link ports of every device: state, peer, counters\n"
	      "  memtest [DEV] [--size SIZE]\n"
	      "              write and verify patterns through every memory path\n"
	      "  bench copy [DEV] [--max SIZE] [--iters N]\n"
	      "              copy bandwidth per direction and size, next to host memcpy\n"
	      "  bench allreduce|broadcast|allgather|reduce_scatter [--min SIZE]\n"
	      "        [--max SIZE] [--step F] [--iters N] [--bytes SIZE] [--trials T]\n"
	      "              a collective over all devices' links, nccl-tests columns\n"
	      "              (best of T timings of at most N iterations per size,\n"
	      "              fewer to move about SIZE)\n"
	      "\n"
	      "options:\n"
	      "  --json      machine-readable output\n"
	      "  -h, --help  this text\n"
	      "\n"
	      "exit status: 0 success, 1 failure (no driver, no device, ...), 2 usage\n",
	      f);
}

int main(int argc, char **argv)
{
	struct nnptool_opts o = { 0 };
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json")) {
			o.json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return NNPTOOL_EXIT_OK;
		} else {
			fprintf(stderr, "nnptool: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return NNPTOOL_EXIT_USAGE;
		}
	}
	if (i == argc) {
		usage(stderr);
		return NNPTOOL_EXIT_USAGE;
	}
	/* Options may also follow the command: nnptool list --json. */
	for (int j = i + 1; j < argc; j++) {
		if (!strcmp(argv[j], "--json")) {
			o.json = true;
			memmove(&argv[j], &argv[j + 1], (argc - j) * sizeof(*argv));
			argc--;
			j--;
		}
	}
	if (!strcmp(argv[i], "list"))
		return cmd_list(&o, argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "info"))
		return cmd_info(&o, argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "reset"))
		return cmd_reset(argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "links"))
		return cmd_links(&o, argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "memtest"))
		return cmd_memtest(&o, argc - i - 1, argv + i + 1);
	if (!strcmp(argv[i], "bench"))
		return cmd_bench(&o, argc - i - 1, argv + i + 1);
	fprintf(stderr, "nnptool: unknown command '%s'\n", argv[i]);
	usage(stderr);
	return NNPTOOL_EXIT_USAGE;
}
