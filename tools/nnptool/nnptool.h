/* SPDX-License-Identifier: MIT */
/* nnptool: shared declarations of its subcommands and output helpers. */
#ifndef NNPTOOL_H
#define NNPTOOL_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <nnp/nnp.h>

struct json_object;

/* Exit codes */
#define NNPTOOL_EXIT_OK		0
#define NNPTOOL_EXIT_ERROR	1	/* the operation failed */
#define NNPTOOL_EXIT_USAGE	2	/* bad command line */

struct nnptool_opts {
	bool json;
};

/* One device as nnptool metrics and watch see it at one moment. */
struct dev_sample {
	int index;
	struct nnp_device_info info;
	struct nnp_port_info ports[NNP_MAX_PORTS];
	unsigned int nports;
	char sysfs[96];		/* /sys/class/accel/accelN/device */
	uint64_t mem_used;	/* bytes */
	uint64_t busy_ns;	/* since the device's last reset */
	uint64_t resets;
	bool has_sensors;	/* hwmon: */
	uint64_t temp_mc;	/* millidegrees Celsius */
	uint64_t power_uw;	/* microwatts */
};

/*
 * The commands. @argv[0] is the command's name ("list"; "copy" and the
 * collectives' names for cmd_bench_copy and cmd_bench_coll), so getopt_long
 * reads @argc and @argv as they are. Each returns an exit code.
 */
int cmd_list(struct nnptool_opts *o, int argc, char **argv);
int cmd_info(struct nnptool_opts *o, int argc, char **argv);
int cmd_reset(struct nnptool_opts *o, int argc, char **argv);
int cmd_memtest(struct nnptool_opts *o, int argc, char **argv);
int cmd_bench(struct nnptool_opts *o, int argc, char **argv);
int cmd_bench_copy(struct nnptool_opts *o, int argc, char **argv);
/* nnptool bench allreduce|broadcast|allgather|reduce_scatter [OPTIONS] */
int cmd_bench_coll(struct nnptool_opts *o, int argc, char **argv);
int cmd_links(struct nnptool_opts *o, int argc, char **argv);
int cmd_topo(struct nnptool_opts *o, int argc, char **argv);
int cmd_metrics(struct nnptool_opts *o, int argc, char **argv);
int cmd_watch(struct nnptool_opts *o, int argc, char **argv);
int cmd_cdi(struct nnptool_opts *o, int argc, char **argv);
int cmd_gres(struct nnptool_opts *o, int argc, char **argv);
int cmd_ps(struct nnptool_opts *o, int argc, char **argv);
int cmd_coredump(struct nnptool_opts *o, int argc, char **argv);
int cmd_comms(struct nnptool_opts *o, int argc, char **argv);
int cmd_job(struct nnptool_opts *o, int argc, char **argv);

/* One command's command line, for nnptool_getopt. */
struct nnptool_cmd {
	const char *name;		/* "memtest", "bench copy" */
	const char *args;		/* "[DEV] [--size SIZE]" */
	const char *shortopts;		/* getopt's; NULL: none */
	const struct option *longopts;	/* getopt_long's; NULL: none */
	int min_args, max_args;		/* operands after the options */
};

/* What nnptool_getopt returns besides the command's own options. */
#define NNPTOOL_OPTS_DONE	0	/* options over, operands counted */
#define NNPTOOL_OPTS_HELP	(-1)	/* usage printed for --help: exit 0 */
#define NNPTOOL_OPTS_BAD	(-2)	/* bad command line, said: exit 2 */

/*
 * The next option of the command, by getopt_long, with -j/--json (which
 * sets o->json) and -h/--help added to its own, so every command takes
 * them. At the end, checks that there are min_args to max_args operands
 * (at argv[optind] on). Options and operands may come in any order.
 */
int nnptool_getopt(const struct nnptool_cmd *cmd, struct nnptool_opts *o,
		   int argc, char **argv);

/* The exit code of a NNPTOOL_OPTS_HELP or NNPTOOL_OPTS_BAD. */
int nnptool_opts_exit(int c);

/* A value of option @opt that is not one: said on stderr; exit code 2. */
int nnptool_bad_value(const struct nnptool_cmd *cmd, const char *opt,
		      const char *value);

/* "64M", "4096", "1G": bytes; returns 0, or -1 if not a size. */
int parse_size(const char *s, size_t *out);

/*
 * The only option of `nnptool CMD [-o FILE]`: sets *@out to FILE if given.
 * Returns -1 to go on, or the exit code (help, bad command line).
 */
int nnptool_output_opt(const char *name, const char *args,
		       struct nnptool_opts *o, int argc, char **argv,
		       const char **out);

/* What a command that goes through every device prints into. */
struct each_device {
	int count;			/* devices */
	struct json_object *doc;	/* with --json: the document */
	struct json_object *arr;	/* and its array @key; else NULL */
};

/*
 * The start of such a command: its options, then the devices counted
 * and, with --json, the document begun. Returns -1 to go on, or the exit
 * code (help, bad command line, no devices).
 */
int nnptool_each_device_start(const struct nnptool_cmd *cmd,
			      struct nnptool_opts *o, int argc, char **argv,
			      const char *key, struct each_device *e);

/* Report a failed libnnp call on stderr; returns NNPTOOL_EXIT_ERROR. */
int nnptool_fail(const char *what, nnp_result_t r);
/*
 * @body(f, @arg) written to @path whole or not at all: into a new file
 * beside it (mode 0644), renamed over it once complete, so a reader never
 * sees half of it. An exit code; what failed said on stderr.
 */
int nnptool_write_file(const char *cmd, const char *path,
		       void (*body)(FILE *f, const void *arg), const void *arg);

/*
 * Open DEV given as an index ("0") or a node path ("/dev/accel/accel0").
 * Returns an exit code: on failure the reason is already on stderr.
 */
int nnptool_open(const char *spec, nnp_device_t **dev);

/*
 * @dev's modeled clock into @m, *@modeled true; a device or driver that
 * predates it is no error: *@modeled false. Other failures returned.
 */
nnp_result_t nnptool_model(nnp_device_t *dev, struct nnp_device_model *m,
			   bool *modeled);

/*
 * pick.c: `nnptool topo --pick SHAPE [--free LIST]`, for cmd_topo; @cmd
 * names the command in usage errors. Returns an exit code.
 */
int topo_pick(const struct nnptool_cmd *cmd, const struct nnptool_opts *o,
	      const char *shape, const char *free_list);
/*
 * A libnnp placement call of `nnptool topo` failed with @r: its reason,
 * then the result's text, on stderr; the exit status.
 */
int topo_fail(nnp_result_t r);
/* nnptool topo --path A,B (route.c). */
int topo_route(const struct nnptool_cmd *cmd, const struct nnptool_opts *o,
	       const char *pair);

/* sysfs.c: /sys/class/accel/accelN/device of device node @node; -1 if none. */
int dev_sysfs_dir(const char *node, char *dir, size_t len);
int sysfs_read_str(const char *dir, const char *attr, char *buf, size_t len);
int sysfs_read_u64(const char *dir, const char *attr, uint64_t *v);
/*
 * The last part of where symbolic link @link points (a device's PCI
 * address, a driver's name); -1 if @link is no link.
 */
int sysfs_link_name(const char *link, char *buf, size_t len);
/* "0000:00:04.0", or "unknown". */
void dev_pci_address(const char *dir, char *buf, size_t len);
/* The device's NUMA node, -1 if none or unknown. */
int dev_numa_node(const char *dir);
/* Both, for device node @node: "unknown" and -1 if there is no sysfs. */
void dev_location(const char *node, char *pci, size_t len, int *numa);
/* An attribute of the device's hwmon sensors (temp1_input, power1_input). */
int dev_hwmon_read(const char *dir, const char *attr, uint64_t *v);
/* Everything about device @index now; an exit code, the reason on stderr. */
int dev_sample(int index, struct dev_sample *s);

/* "1.0.0" from a packed firmware version. */
void fw_version_str(unsigned int v, char *buf, size_t len);

#endif /* NNPTOOL_H */
