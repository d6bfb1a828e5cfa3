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
	      "  coredump [--clear] [FILE...]\n"
	      "              decode the dumps nnp.ko took before a watchdog reset (root\n"
	      "              only), or dump files; --clear frees them once decoded\n"
	      "  links       inter-chip link ports of every device: state, peer, counters\n"
	      "  topo        device-by-device matrix of links and hops\n"
	      "  ps          processes using the devices: memory and engine time each\n"
	      "  comms       communicators on the devices: rank, collective in flight and\n"
	      "              whom it waits for (yours; root: everyone's)\n"
	      "  job [--secret-file FILE] [HOST:PORT]\n"
	      "              every rank of the job at HOST:PORT (NNP_COMM_ID) and the ranks\n"
	      "              the others wait for; the secret is NNP_COMM_SECRET's or FILE's\n"
	      "  watch [-l SEC] [-c COUNT]\n"
	      "              memory, busy time, link GB/s, temperature and power, every\n"
	      "              SEC seconds (default 1), COUNT times (default: until killed)\n"
	      "  metrics [-o FILE]\n"
	      "              Prometheus text format, for node-exporter's textfile collector\n"
	      "  cdi [-o FILE]\n"
	      "              a CDI spec of the devices for container runtimes\n"
	      "              (default /etc/cdi/nnp.json; - for stdout)\n"
	      "  gres [-o FILE] [--name nnp|gpu] [--no-links]\n"
	      "              Slurm gres.conf lines for the devices, with the links\n"
	      "              up between them (default: stdout); gpu lets Slurm\n"
	      "              confine jobs to their chips; --no-links for Slurm\n"
	      "              24.05 to 24.11, which pick by them the wrong way\n"
	      "  memtest [DEV] [--size SIZE]\n"
	      "              write and verify patterns through every memory path\n"
	      "  bench copy [DEV] [--min SIZE] [--max SIZE] [--iters N]\n"
	      "              copy bandwidth per direction and size, next to host memcpy\n"
	      "  bench allreduce|broadcast|allgather|reduce_scatter|reduce|alltoall|\n"
	      "        gather|scatter|sendrecv [--min SIZE]\n"
	      "        [--max SIZE] [--step F] [--iters N] [--bytes SIZE] [--trials T]\n"
	      "        [--peer P]\n"
	      "              a collective over all devices' links, or rank 0's message\n"
	      "              to rank P (sendrecv), nccl-tests columns\n"
	      "              (best of T timings of at most N iterations per size,\n"
	      "              fewer to move about SIZE)\n"
	      "\n"
	      "options:\n"
	      "  -j, --json     machine-readable output (before or after the command)\n"
	      "                 on every command: one JSON object per line\n"
	      "  -l SEC         watch every SEC seconds\n"
	      "  -V, --version  nnptool's version\n"
	      "  -h, --help     this text; nnptool COMMAND --help: the command's usage\n"
	      "\n"
	      "exit status: 0 success, 1 failure (no driver, no device, ...), 2 usage\n",
	      f);
}

/* Runs command argv[0] on argv[1..]: its getopt_long starts afresh. */
static int run(struct nnptool_opts *o, int argc, char **argv)
{
	const char *cmd = argv[0];

	optind = 0;
	if (!strcmp(cmd, "list"))
		return cmd_list(o, argc, argv);
	if (!strcmp(cmd, "info"))
		return cmd_info(o, argc, argv);
	if (!strcmp(cmd, "reset"))
		return cmd_reset(o, argc, argv);
	if (!strcmp(cmd, "coredump"))
		return cmd_coredump(o, argc, argv);
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
	if (!strcmp(cmd, "gres"))
		return cmd_gres(o, argc, argv);
	if (!strcmp(cmd, "ps"))
		return cmd_ps(o, argc, argv);
	if (!strcmp(cmd, "comms"))
		return cmd_comms(o, argc, argv);
	if (!strcmp(cmd, "job"))
		return cmd_job(o, argc, argv);
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
		return run(&o, 3, watch);
	if (optind == argc || watch[2]) {
		usage(stderr);
		return NNPTOOL_EXIT_USAGE;
	}
	return run(&o, argc - optind, argv + optind);
}
