// SPDX-License-Identifier: MIT
/*
 * nnptool coredump [--json] [--clear] [FILE...]: the device coredumps
 * nnp.ko took before its watchdog reset a device, from sysfs
 * (/sys/class/devcoredump/devcdN/data, root's) or from files a user kept,
 * decoded by coredump.c.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coredump.h"
#include "nnptool.h"

/* read_dump(): more than COREDUMP_READ_MAX bytes. */
#define TOO_LARGE	(-1)

/* sysfs_dump(): a dump of another driver's device. */
#define NOT_NNP		(-1)

/*
 * @path into a new *@buf, *@len bytes: at most COREDUMP_READ_MAX and one
 * more to tell a larger file, which is never read whole. Returns 0,
 * TOO_LARGE or an errno.
 */
static int read_dump(const char *path, unsigned char **buf, size_t *len)
{
	unsigned char *b = malloc(COREDUMP_READ_MAX + 1);
	int ret = 0;
	FILE *f;

	if (!b)
		return ENOMEM;
	f = fopen(path, "rb");
	if (!f) {
		ret = errno;
		free(b);
		return ret;
	}
	errno = 0;
	*len = fread(b, 1, COREDUMP_READ_MAX + 1, f);
	if (ferror(f))
		ret = errno ? errno : EIO;
	else if (*len > COREDUMP_READ_MAX)
		ret = TOO_LARGE;
	fclose(f);
	if (ret)
		free(b);
	else
		*buf = b;
	return ret;
}

int coredump_file(const struct coredump_src *src, struct coredump_out *o)
{
	unsigned char *buf = NULL;
	size_t len = 0;
	int ret = read_dump(src->path, &buf, &len);

	if (ret == TOO_LARGE) {
		fprintf(o->err, "nnptool: coredump: %s: more than %u bytes, larger than any coredump\n",
			src->path, COREDUMP_READ_MAX);
		return NNPTOOL_EXIT_ERROR;
	}
	if (ret) {
		fprintf(o->err, "nnptool: coredump: %s: %s%s\n", src->path,
			strerror(ret), ret == EACCES && src->pci ?
			" (device coredumps are root's)" : "");
		return NNPTOOL_EXIT_ERROR;
	}
	ret = coredump_decode(src, buf, len, o);
	free(buf);
	return ret;
}

/* devcd0, devcd1, ...: the kernel's names of the dumps. */
static int is_devcd(const struct dirent *e)
{
	return !strncmp(e->d_name, "devcd", 5);
}

/* @dir/@name into @buf of PATH_MAX bytes; -1 if it does not fit. */
static int sub_path(char *buf, const char *dir, const char *name)
{
	return snprintf(buf, PATH_MAX, "%s/%s", dir, name) < PATH_MAX ? 0 : -1;
}

/* The accel node of the device at @dev into @node; "" if it has none. */
static void accel_node(const char *dev, char *node, size_t len)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *dir;

	*node = '\0';
	if (sub_path(path, dev, "accel"))
		return;
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)))
		if (!strncmp(e->d_name, "accel", 5)) {
			snprintf(node, len, "/dev/accel/%s", e->d_name);
			break;
		}
	closedir(dir);
}

/* Frees dump @cd as the kernel offers: any write to its data. */
static int clear_dump(const char *data, FILE *err)
{
	int fd = open(data, O_WRONLY | O_CLOEXEC), e = 0;

	if (fd < 0 || write(fd, "1", 1) != 1)
		e = errno;
	if (fd >= 0)
		close(fd);
	if (!e)
		return NNPTOOL_EXIT_OK;
	fprintf(err, "nnptool: coredump: cannot clear %s: %s\n", data, strerror(e));
	return NNPTOOL_EXIT_ERROR;
}

/*
 * Dump @name of @dir (the devcoredump class) if its failing device is
 * bound to nnp: decoded, then (@clear) freed. An exit code, or NOT_NNP.
 */
static int sysfs_dump(const char *dir, const char *name, bool clear,
		      struct coredump_out *o)
{
	char cd[PATH_MAX], dev[PATH_MAX], data[PATH_MAX], link[PATH_MAX];
	char drv[64], pci[64], node[PATH_MAX];
	struct coredump_src src = { .path = data, .pci = pci };
	int ret;

	/* The driver's link names it: "nnp", whatever the module's path. */
	if (sub_path(cd, dir, name) || sub_path(data, cd, "data") ||
	    sub_path(dev, cd, "failing_device") || sub_path(link, dev, "driver") ||
	    sysfs_link_name(link, drv, sizeof(drv)) || strcmp(drv, "nnp"))
		return NOT_NNP;
	dev_pci_address(dev, pci, sizeof(pci));
	accel_node(dev, node, sizeof(node));
	src.node = *node ? node : NULL;
	ret = coredump_file(&src, o);
	/* One that did not decode stays, for a newer nnptool or a report. */
	if (!ret && clear)
		ret = clear_dump(data, o->err);
	return ret;
}

int coredump_sysfs(const char *sysfs, bool clear, struct coredump_out *o)
{
	char dir[PATH_MAX];
	struct dirent **cds;
	int n, i, r, found = 0, ret = NNPTOOL_EXIT_OK;

	snprintf(dir, sizeof(dir), "%s/class/devcoredump", sysfs);
	/* No class directory: no dump was ever taken, or none can be. */
	n = scandir(dir, &cds, is_devcd, versionsort);
	for (i = 0; i < n; i++) {
		r = sysfs_dump(dir, cds[i]->d_name, clear, o);
		if (r != NOT_NNP) {
			found++;
			ret = ret ? ret : r;
		}
		free(cds[i]);
	}
	if (n >= 0)
		free(cds);
	if (found)
		return ret;
	fprintf(o->err, "nnptool: coredump: no device coredump of an nnp device\n");
	return NNPTOOL_EXIT_ERROR;
}

int cmd_coredump(struct nnptool_opts *opts, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "clear", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct nnptool_cmd cmd = {
		"coredump", "[--json] [--clear] [FILE...]", NULL, longopts, 0, INT_MAX,
	};
	struct coredump_out o = { .out = stdout, .err = stderr };
	int c, ret = NNPTOOL_EXIT_OK;
	bool clear = false;

	while ((c = nnptool_getopt(&cmd, opts, argc, argv)) == 'c')
		clear = true;
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	o.json = opts->json;
	if (optind == argc)
		return coredump_sysfs("/sys", clear, &o);
	if (clear) {
		fprintf(stderr, "nnptool: coredump: --clear frees the dumps in sysfs: give no FILE with it\n");
		return NNPTOOL_EXIT_USAGE;
	}
	/* Each file in turn: one that is no dump does not hide the others. */
	for (; optind < argc; optind++) {
		struct coredump_src src = { .path = argv[optind] };

		if (coredump_file(&src, &o))
			ret = NNPTOOL_EXIT_ERROR;
	}
	return ret;
}
