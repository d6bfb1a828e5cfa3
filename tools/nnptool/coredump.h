/* SPDX-License-Identifier: MIT */
/*
 * nnptool coredump: nnp.ko's device coredump (uapi/drm/nnp_coredump.h)
 * checked and decoded (coredump.c), and the command that finds the dumps
 * in sysfs or reads them from files (coredump_cmd.c).
 */
#ifndef NNPTOOL_COREDUMP_H
#define NNPTOOL_COREDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * The most bytes read of one dump: NNP_COREDUMP_MAX_SIZE (36 KiB in
 * version 1) leaves no room for the fields later versions append, so
 * anything up to 1 MiB is read and the header's sizes decide; a larger
 * file is no coredump.
 */
#define COREDUMP_READ_MAX	(1u << 20)

/* Where a dump came from, for its title. */
struct coredump_src {
	const char *path;	/* the file read */
	const char *pci;	/* from sysfs: the failing device; else NULL */
	const char *node;	/* its /dev/accel node; NULL if none found */
};

/* Where dumps go, and how many went there. */
struct coredump_out {
	FILE *out, *err;	/* the dumps; what is wrong with them */
	bool json;		/* a JSON line each, not text */
	unsigned int shown;	/* dumps decoded: text puts a blank line between */
};

/*
 * Checks dump @buf of @len bytes and, if it holds together, writes it to
 * @o->out. Else writes why to @o->err, naming @src->path, and nothing to
 * @o->out. Returns an exit code.
 */
int coredump_decode(const struct coredump_src *src, const unsigned char *buf,
		    size_t len, struct coredump_out *o);

/* The dump in file @src->path, read (at most COREDUMP_READ_MAX) and decoded. */
int coredump_file(const struct coredump_src *src, struct coredump_out *o);

/*
 * Every dump of a device bound to nnp under @sysfs ("/sys", or a tree
 * laid out as it is), decoded, and (@clear) freed once decoded. None, or
 * one that cannot be read, decoded or freed: said on @o->err, exit code 1.
 */
int coredump_sysfs(const char *sysfs, bool clear, struct coredump_out *o);

#endif /* NNPTOOL_COREDUMP_H */
