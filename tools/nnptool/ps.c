// SPDX-License-Identifier: MIT
/*
 * nnptool ps: the processes using nnp devices, as nvidia-smi lists them:
 * for each open device file (one client, one device context), its
 * process, device, memory and engine time, read from the file's
 * /proc/PID/fdinfo/FD (the keys of the kernel's drm-usage-stats.rst that
 * nnp.ko prints: docs/uapi.md, "fdinfo"). A file reached through several
 * descriptors of one process (dup) is listed once; one shared by several
 * processes (fork) under each of them. Other users' processes are seen
 * only by root. Since driver interface 1.9 each file's communicators
 * follow: id, rank of how many, and the name the job gave it.
 */
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "json_out.h"
#include "nnptool.h"
#include "text_out.h"

struct client {
	long pid;
	char comm[32];
	char node[64];		/* /dev/accel/accelN */
	char pdev[16];		/* 0000:00:04.0 */
	uint64_t id;		/* drm-client-id */
	uint64_t mem[2];	/* drm-total-device, drm-total-host, bytes */
	uint64_t busy_ns[2];	/* drm-engine-copy, drm-engine-collective */
	/*
	 * nnp-comm-ID: "RANK/NRANKS[ NAME]", by the driver's id order; a
	 * transit, no rank, "-/NRANKS" (driver 1.12).
	 */
	struct comm_line {
		unsigned int id, rank, nranks;
		bool transit;
		char name[32];		/* "" for none */
	} comms[64];
	unsigned int ncomms;
};

struct clients {
	struct client *c;
	size_t n, cap;
};

/* A value with the unit drm-usage-stats allows for sizes: KiB, MiB. */
static uint64_t size_value(const char *v)
{
	char *end;
	uint64_t n = strtoull(v, &end, 10);

	while (*end == ' ')
		end++;
	if (!strncmp(end, "KiB", 3))
		n <<= 10;
	else if (!strncmp(end, "MiB", 3))
		n <<= 20;
	return n;
}

/* One nnp-comm-@id key's @v into @c; a line of another form is skipped. */
static void comm_line(struct client *c, const char *id, const char *v)
{
	struct comm_line *l = &c->comms[c->ncomms];
	const char *name;
	int used = 0;

	if (c->ncomms == sizeof(c->comms) / sizeof(c->comms[0]) ||
	    sscanf(id, "%u", &l->id) != 1)
		return;
	l->transit = sscanf(v, "-/%u%n", &l->nranks, &used) == 1;
	l->rank = 0;
	if (!l->transit && sscanf(v, "%u/%u%n", &l->rank, &l->nranks, &used) != 2)
		return;
	name = v + used;
	snprintf(l->name, sizeof(l->name), "%s", *name == ' ' ? name + 1 : "");
	c->ncomms++;
}

/* Fill @c from fdinfo file @path; false if it is no nnp device's. */
static bool read_fdinfo(const char *path, struct client *c)
{
	static const char *const keys[] = {
		"drm-total-device", "drm-total-host",
		"drm-engine-copy", "drm-engine-collective",
	};
	bool nnp = false;
	char line[256];
	FILE *f = fopen(path, "r");
	size_t k;

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		*v++ = '\0';
		v += strspn(v, " \t");
		v[strcspn(v, "\n")] = '\0';
		if (!strcmp(line, "drm-driver"))
			nnp = !strcmp(v, "nnp");
		else if (!strcmp(line, "drm-client-id"))
			c->id = strtoull(v, NULL, 10);
		else if (!strcmp(line, "drm-pdev"))
			snprintf(c->pdev, sizeof(c->pdev), "%s", v);
		else if (!strncmp(line, "nnp-comm-", 9))
			comm_line(c, line + 9, v);
		for (k = 0; k < 4; k++)
			if (!strcmp(line, keys[k]))
				*(k < 2 ? &c->mem[k] : &c->busy_ns[k - 2]) =
					size_value(v);
	}
	fclose(f);
	return nnp;
}

static bool listed(const struct clients *l, long pid, uint64_t id)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->c[i].pid == pid && l->c[i].id == id)
			return true;
	return false;
}

static int add(struct clients *l, const struct client *c)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct client *n = realloc(l->c, cap * sizeof(*n));

		if (!n)
			return -1;
		l->c = n;
		l->cap = cap;
	}
	l->c[l->n++] = *c;
	return 0;
}

/* The nnp files process @pid holds; -1 only when out of memory. */
static int scan_pid(struct clients *l, long pid)
{
	char dir[64], path[PATH_MAX], comm[32] = "?";
	struct dirent *e;
	int ret = 0;
	FILE *f;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%ld/fdinfo", pid);
	d = opendir(dir);
	if (!d)
		return 0;
	snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	while (!ret && (e = readdir(d))) {
		struct client c = { .pid = pid };
		ssize_t n;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (!read_fdinfo(path, &c) || listed(l, pid, c.id))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/fd/%s", pid, e->d_name);
		n = readlink(path, c.node, sizeof(c.node) - 1);
		c.node[n > 0 ? n : 0] = '\0';
		snprintf(c.comm, sizeof(c.comm), "%s", comm);
		ret = add(l, &c);
	}
	closedir(d);
	return ret;
}

static int by_pid_then_id(const void *a, const void *b)
{
	const struct client *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void comms_json(struct json_object *o, const struct client *c)
{
	struct json_object *list = jo_arr(o, "communicators"), *e;
	unsigned int i;

	for (i = 0; i < c->ncomms; i++) {
		e = jo_obj(list, NULL);
		jo_u64(e, "id", c->comms[i].id);
		if (c->comms[i].name[0])
			jo_str(e, "name", c->comms[i].name);
		else
			jo_null(e, "name");
		if (c->comms[i].transit)
			jo_null(e, "rank");
		else
			jo_u64(e, "rank", c->comms[i].rank);
		jo_u64(e, "nranks", c->comms[i].nranks);
	}
}

static void print_json(const struct clients *l)
{
	struct json_object *doc = jo_obj(NULL, NULL), *list, *o;
	size_t i;

	list = jo_arr(doc, "clients");
	for (i = 0; i < l->n; i++) {
		const struct client *c = &l->c[i];

		o = jo_obj(list, NULL);
		jo_int(o, "pid", c->pid);
		jo_str(o, "command", c->comm);
		jo_str(o, "node", c->node);
		jo_str(o, "pci_address", c->pdev);
		jo_u64(o, "client_id", c->id);
		jo_u64(o, "device_mem", c->mem[0]);
		jo_u64(o, "host_mem", c->mem[1]);
		jo_u64(o, "copy_busy_ns", c->busy_ns[0]);
		jo_u64(o, "collective_busy_ns", c->busy_ns[1]);
		comms_json(o, c);
	}
	jo_line(stdout, doc);
}

/*
 * The COMMUNICATORS column: NAME:RANK/NRANKS (#ID for one with no name,
 * "-" for RANK of a transit), comma-separated; "-" for none.
 */
static void print_comms(const struct client *c)
{
	unsigned int i;

	for (i = 0; i < c->ncomms; i++) {
		const struct comm_line *l = &c->comms[i];
		char name[4 * sizeof(l->name)], rank[16] = "-";

		text_for_terminal(l->name, name, sizeof(name));
		if (!l->transit)
			snprintf(rank, sizeof(rank), "%u", l->rank);
		if (name[0])
			printf("%s%s:%s/%u", i ? "," : "", name, rank, l->nranks);
		else
			printf("%s#%u:%s/%u", i ? "," : "", l->id, rank, l->nranks);
	}
	printf("%s\n", c->ncomms ? "" : "-");
}

static void print_table(const struct clients *l)
{
	size_t i;

	printf("%-7s %-15s %-18s %-12s %6s %12s %12s %12s %12s  %s\n", "PID",
	       "COMMAND", "NODE", "PCI", "CLIENT", "DEVICE KiB", "HOST KiB",
	       "COPY US", "COLL US", "COMMUNICATORS");
	for (i = 0; i < l->n; i++) {
		const struct client *c = &l->c[i];
		/* Each byte may take 4: other users name their processes. */
		char comm[4 * sizeof(c->comm)], node[4 * sizeof(c->node)];
		char pdev[4 * sizeof(c->pdev)];

		text_for_terminal(c->comm, comm, sizeof(comm));
		text_for_terminal(c->node, node, sizeof(node));
		text_for_terminal(c->pdev, pdev, sizeof(pdev));
		printf("%-7ld %-15s %-18s %-12s %6" PRIu64 " %12" PRIu64 " %12"
		       PRIu64 " %12" PRIu64 " %12" PRIu64 "  ", c->pid, comm,
		       node, pdev, c->id, c->mem[0] >> 10, c->mem[1] >> 10,
		       c->busy_ns[0] / 1000, c->busy_ns[1] / 1000);
		print_comms(c);
	}
}

int cmd_ps(struct nnptool_opts *o, int argc, char **argv)
{
	static const struct nnptool_cmd cmd = { .name = "ps", .args = "[--json]" };
	struct clients l = { 0 };
	struct dirent *e;
	int ret;
	DIR *proc;

	ret = nnptool_getopt(&cmd, o, argc, argv);
	if (ret != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(ret);
	proc = opendir("/proc");
	if (!proc) {
		perror("nnptool: ps: /proc");
		return NNPTOOL_EXIT_ERROR;
	}
	while (!ret && (e = readdir(proc)))
		if (isdigit((unsigned char)e->d_name[0]))
			ret = scan_pid(&l, strtol(e->d_name, NULL, 10));
	closedir(proc);
	if (ret) {
		fprintf(stderr, "nnptool: ps: out of memory\n");
		free(l.c);
		return NNPTOOL_EXIT_ERROR;
	}
	if (l.n)
		qsort(l.c, l.n, sizeof(*l.c), by_pid_then_id);
	if (o->json)
		print_json(&l);
	else
		print_table(&l);
	free(l.c);
	return NNPTOOL_EXIT_OK;
}
