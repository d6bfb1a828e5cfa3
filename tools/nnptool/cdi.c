// SPDX-License-Identifier: MIT
/*
 * nnptool cdi [-o FILE]: a Container Device Interface spec (CDI 0.6.0) for
 * the devices present, so that container runtimes (containerd, CRI-O,
 * podman) and Kubernetes can hand them to containers by name:
 * nnp.dev/chip=0 .. nnp.dev/chip=N-1, each also by its serial number
 * (nnp.dev/chip=NNPSIM-00000002: the same chip whatever order the nodes
 * come in), and nnp.dev/chip=all. Each device brings its /dev/accel node
 * at the host's path, which with sysfs is all libnnp needs to find and
 * number it; any of them brings libnnp and the libdrm it needs,
 * bind-mounted read-only from where this nnptool found them.
 * Default FILE: /etc/cdi/nnp.json; "-" writes to stdout. The spec is JSON
 * whatever --json says.
 */
#include <ctype.h>
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>

#include "json_out.h"
#include "nnptool.h"

#define CDI_VERSION	"0.6.0"
#define CDI_KIND	"nnp.dev/chip"
#define CDI_DEFAULT	"/etc/cdi/nnp.json"
#define MAX_LIBS	4

struct libs {
	char path[MAX_LIBS][512];
	int n;
};

/* The shared libraries the devices need: libnnp and what it links. */
static int find_lib(struct dl_phdr_info *info, size_t size, void *data)
{
	static const char *const wanted[] = { "/libnnp.so.", "/libdrm.so." };
	struct libs *l = data;
	size_t i;

	(void)size;
	for (i = 0; i < sizeof(wanted) / sizeof(*wanted); i++)
		if (strstr(info->dlpi_name, wanted[i]) && l->n < MAX_LIBS)
			snprintf(l->path[l->n++], sizeof(l->path[0]), "%s",
				 info->dlpi_name);
	return 0;
}

static void node_edit(struct json_object *nodes, const char *path)
{
	struct json_object *n = jo_obj(nodes, NULL);

	jo_str(n, "path", path);
	jo_str(n, "permissions", "rw");
}

/* A device of the spec: @name; its containerEdits' deviceNodes returned. */
static struct json_object *device_entry(struct json_object *devs,
					const char *name)
{
	struct json_object *d = jo_obj(devs, NULL);

	jo_str(d, "name", name);
	return jo_arr(jo_obj(d, "containerEdits"), "deviceNodes");
}

/* CDI device names: letters, digits, '_', '.', ':' and '-', a letter or digit first. */
static bool cdi_name_ok(const char *s)
{
	if (!isalnum((unsigned char)*s))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789_.:-") == strlen(s);
}

static void write_spec(FILE *f, char (*nodes)[64], char (*serials)[16], int n,
		       const struct libs *l)
{
	static const char *const options[] = { "ro", "nosuid", "nodev", "bind" };
	struct json_object *doc = jo_obj(NULL, NULL), *devs, *all, *mounts, *m;
	char index[16];
	size_t k;
	int i;

	jo_str(doc, "cdiVersion", CDI_VERSION);
	jo_str(doc, "kind", CDI_KIND);
	devs = jo_arr(doc, "devices");
	for (i = 0; i < n; i++) {
		snprintf(index, sizeof(index), "%d", i);
		node_edit(device_entry(devs, index), nodes[i]);
		if (cdi_name_ok(serials[i]))
			node_edit(device_entry(devs, serials[i]), nodes[i]);
	}
	all = device_entry(devs, "all");
	for (i = 0; i < n; i++)
		node_edit(all, nodes[i]);
	mounts = jo_arr(jo_obj(doc, "containerEdits"), "mounts");
	for (i = 0; i < l->n; i++) {
		m = jo_obj(mounts, NULL);
		jo_str(m, "hostPath", l->path[i]);
		jo_str(m, "containerPath", l->path[i]);
		m = jo_arr(m, "options");
		for (k = 0; k < sizeof(options) / sizeof(*options); k++)
			jo_str(m, NULL, options[k]);
	}
	jo_write(f, doc, true);
	fputc('\n', f);
	json_object_put(doc);
}

int cmd_cdi(struct nnptool_opts *o, int argc, char **argv)
{
	static char nodes[256][64], serials[256][16];
	const char *out = CDI_DEFAULT;
	struct libs libs = { .n = 0 };
	int count, i, c, bad;
	nnp_result_t r;
	FILE *f;

	c = nnptool_output_opt("cdi", "[-o FILE]", o, argc, argv, &out);
	if (c >= 0)
		return c;
	r = nnp_device_count(&count);
	if (r != NNP_SUCCESS)
		return nnptool_fail("cdi", r);
	if (count > 256)
		count = 256;
	for (i = 0; i < count; i++) {
		struct nnp_device_info info = { .size = sizeof(info) };
		nnp_device_t *dev;

		r = nnp_device_open(i, &dev);
		if (r == NNP_SUCCESS) {
			r = nnp_device_get_info(dev, &info);
			nnp_device_close(dev);
		}
		if (r != NNP_SUCCESS)
			return nnptool_fail("cdi", r);
		snprintf(nodes[i], sizeof(nodes[i]), "%s", info.path);
		snprintf(serials[i], sizeof(serials[i]), "%s", info.serial);
	}
	dl_iterate_phdr(find_lib, &libs);

	/* A runtime reads /etc/cdi, which a fresh machine may not have yet. */
	if (!strcmp(out, CDI_DEFAULT) && mkdir("/etc/cdi", 0755) && errno != EEXIST) {
		perror("/etc/cdi");
		return NNPTOOL_EXIT_ERROR;
	}
	f = strcmp(out, "-") ? fopen(out, "w") : stdout;
	if (!f) {
		perror(out);
		return NNPTOOL_EXIT_ERROR;
	}
	write_spec(f, nodes, serials, count, &libs);
	bad = ferror(f);
	if (f != stdout)
		bad |= fclose(f);
	if (bad) {
		perror(out);
		return NNPTOOL_EXIT_ERROR;
	}
	return NNPTOOL_EXIT_OK;
}
