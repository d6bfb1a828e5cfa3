/* SPDX-License-Identifier: MIT */
/* nnptool: shared declarations of its subcommands and output helpers. */
#ifndef NNPTOOL_H
#define NNPTOOL_H

#include <stdbool.h>
#include <stdio.h>

#include <nnp/nnp.h>

/* Exit codes */
#define NNPTOOL_EXIT_OK		0
#define NNPTOOL_EXIT_ERROR	1	/* the operation failed */
#define NNPTOOL_EXIT_USAGE	2	/* bad command line */

struct nnptool_opts {
	bool json;
};

int cmd_list(const struct nnptool_opts *o, int argc, char **argv);
int cmd_info(const struct nnptool_opts *o, int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_memtest(const struct nnptool_opts *o, int argc, char **argv);
int cmd_bench(const struct nnptool_opts *o, int argc, char **argv);
int cmd_links(const struct nnptool_opts *o, int argc, char **argv);
/* nnptool bench allreduce|broadcast|allgather|reduce_scatter [OPTIONS] */
int cmd_bench_coll(int argc, char **argv);

/* "64M", "4096", "1G": bytes; returns 0, or -1 if not a size. */
int parse_size(const char *s, size_t *out);

/* Report a failed libnnp call on stderr; returns NNPTOOL_EXIT_ERROR. */
int nnptool_fail(const char *what, nnp_result_t r);

/*
 * Open DEV given as an index ("0") or a node path ("/dev/accel/accel0").
 * Returns an exit code: on failure the reason is already on stderr.
 */
int nnptool_open(const char *spec, nnp_device_t **dev);

/* Write @s as a JSON string literal. */
void json_string(FILE *f, const char *s);

/* "1.0.0" from a packed firmware version. */
void fw_version_str(unsigned int v, char *buf, size_t len);

#endif /* NNPTOOL_H */
