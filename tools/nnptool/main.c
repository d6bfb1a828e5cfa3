// SPDX-License-Identifier: MIT
/* nnptool: inspect, watch and hand out nnp accelerators. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "nnptool.h"

static void usage(FILE *f)
{
	fputs("usage: nnptool [--json] COMMAND [ARGS]\n"
	      "       nnptool -l SEC       (nnptool watch -l SEC)\n"
	      "\n"
	      "commands:\n"
	      "  list        one line per nnp device, with its PCI address and NUMA node\n"
	      "  info DEV    everything about one device (DEV: index or /dev/accel/accelN)\n"
	      "  reset DEV   reset the device now (root only); its open contexts are lost\n"
	      "  links       inter-chip link ports of every device: state, peer, counters\n"
	      "  topo        device-by-device matrix of links and hops\n"
	      "  watch [-l SEC] [-c COUNT]\n"
	      "              memory, busy time, link GB/s, temperature and power, every\n"
	      "              SEC seconds (default 1), COUNT times (default: until killed)\n"
	      "  metrics [-o FILE]\n"
	      "              Prometheus text format, for node-exporter's textfile collector\n"
	      "  cdi [-o FILE]\n"
	      "              a CDI spec of the devices for container runtimes\n"
	      "              (default /etc/cdi/nnp.json; - for stdout)\n"
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
	      "  -j, --json     machine-readable output (before or after the command)\n"
	      "  -l SEC         watch every SEC seconds\n"
	      "  -V, --version  nnptool's version\n"
	      "  -h, --help     this text\n"
	      "\n"
	      "exit status: 0 success, 1 failure (no driver, no device, ...), 2 usage\n",
	      f);
}

/* Take --json out of the command's own arguments: nnptool list --json. */
static int strip_json(struct nnptool_opts *o, int argc, char **argv)
{
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			o->json = true;
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return n;
}

static int run(const struct nnptool_opts *o, const char *cmd, int argc,
	       char **argv)
{
	if (!strcmp(cmd, "list"))
		return cmd_list(o, argc, argv);
	if (!strcmp(cmd, "info"))
		return cmd_info(o, argc, argv);
	if (!strcmp(cmd, "reset"))
		return cmd_reset(argc, argv);
	if (!strcmp(cmd, "links"))
		return cmd_links(o, argc, argv);
	if (!strcmp(cmd, "topo"))
		return cmd_topo(o, argc, argv);
	if (!strcmp(cmd, "watch"))
		return cmd_watch(o, argc, argv);
	if (!strcmp(cmd, "metrics"))
		return cmd_metrics(o, argc, argv);
	if (!strcmp(cmd, "cdi"))
		return cmd_cdi(o, argc, argv);
	if (!strcmp(cmd, "memtest"))
		return cmd_memtest(o, argc, argv);
	if (!strcmp(cmd, "bench"))
		return cmd_bench(o, argc, argv);
	fprintf(stderr, "nnptool: unknown command '%s'\n", cmd);
	usage(stderr);
	return NNPTOOL_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct nnptool_opts o = { 0 };
	char *watch[] = { "watch", "-l", NULL, NULL };
	int c;

	/* "+": options end at the command; its own options are its business. */
	while ((c = getopt_long(argc, argv, "+jVhl:", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			o.json = true;
			break;
		case 'V':
			printf("nnptool %s\n", NNPTOOL_VERSION);
			return NNPTOOL_EXIT_OK;
		case 'h':
			usage(stdout);
			return NNPTOOL_EXIT_OK;
		case 'l':
			watch[2] = optarg;
			break;
		default:
			usage(stderr);
			return NNPTOOL_EXIT_USAGE;
		}
	}
	if (watch[2] && optind == argc)
		return run(&o, "watch", 2, watch + 1);
	if (optind == argc || watch[2]) {
		usage(stderr);
		return NNPTOOL_EXIT_USAGE;
	}
	argc = strip_json(&o, argc - optind - 1, argv + optind + 1);
	return run(&o, argv[optind], argc, argv + optind + 1);
}
