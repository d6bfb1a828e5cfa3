// SPDX-License-Identifier: MIT
/* nnptool helpers shared by the subcommands. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "json_out.h"
#include "nnptool.h"

int nnptool_fail(const char *what, nnp_result_t r)
{
	/* The call that failed said why; the result's text alone may not. */
	const char *why = nnp_get_last_error();

	if (*why)
		fprintf(stderr, "nnptool: %s: %s (%s)\n", what, nnp_strerror(r), why);
	else
		fprintf(stderr, "nnptool: %s: %s\n", what, nnp_strerror(r));
	return NNPTOOL_EXIT_ERROR;
}

int nnptool_each_device_start(const struct nnptool_cmd *cmd,
			      struct nnptool_opts *o, int argc, char **argv,
			      const char *key, struct each_device *e)
{
	nnp_result_t r;
	int c;

	c = nnptool_getopt(cmd, o, argc, argv);
	if (c != NNPTOOL_OPTS_DONE)
		return nnptool_opts_exit(c);
	r = nnp_device_count(&e->count);
	if (r != NNP_SUCCESS)
		return nnptool_fail(cmd->name, r);
	e->doc = e->arr = NULL;
	if (o->json) {
		e->doc = jo_obj(NULL, NULL);
		e->arr = jo_arr(e->doc, key);
	}
	return -1;
}

nnp_result_t nnptool_model(nnp_device_t *dev, struct nnp_device_model *m,
			   bool *modeled)
{
	nnp_result_t r;

	m->size = sizeof(*m);
	r = nnp_device_get_model(dev, m);
	*modeled = r == NNP_SUCCESS;
	return r == NNP_ERROR_NOT_SUPPORTED ? NNP_SUCCESS : r;
}

int nnptool_open(const char *spec, nnp_device_t **dev)
{
	nnp_result_t r;
	char *end;
	long idx;

	if (strchr(spec, '/')) {
		r = nnp_device_open_path(spec, dev);
	} else {
		idx = strtol(spec, &end, 10);
		if (!*spec || *end || idx < 0 || idx > 0xffff)
			r = NNP_ERROR_INVALID_ARGUMENT;
		else
			r = nnp_device_open((int)idx, dev);
	}
	if (r == NNP_SUCCESS)
		return NNPTOOL_EXIT_OK;
	fprintf(stderr, "nnptool: device '%s': %s\n", spec, nnp_strerror(r));
	return NNPTOOL_EXIT_ERROR;
}

void fw_version_str(unsigned int v, char *buf, size_t len)
{
	snprintf(buf, len, "%u.%u.%u", NNP_VERSION_MAJOR(v),
		 NNP_VERSION_MINOR(v), NNP_VERSION_PATCH(v));
}

int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	char *end;

	if (!*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 0);
	switch (*end) {
	case 'G':
		v <<= 10;
		/* fall through */
	case 'M':
		v <<= 10;
		/* fall through */
	case 'K':
		v <<= 10;
		end++;
		break;
	}
	if (*end)
		return -1;
	*out = (size_t)v;
	return 0;
}

int nnptool_write_file(const char *cmd, const char *path,
		       void (*body)(FILE *f, const void *arg), const void *arg)
{
	char tmp[4096];
	FILE *f = NULL;
	int bad, fd;

	/*
	 * A name of our own making beside @path, then renamed over it: a
	 * fixed one (PATH.tmp) could be another user's link to a file of
	 * root's, in a directory they may write (node-exporter's, say).
	 */
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >= sizeof(tmp)) {
		fprintf(stderr, "nnptool: %s: %s: name too long\n", cmd, path);
		return NNPTOOL_EXIT_ERROR;
	}
	fd = mkstemp(tmp);
	if (fd >= 0 && fchmod(fd, 0644) == 0)
		f = fdopen(fd, "w");
	if (f) {
		body(f, arg);
		bad = ferror(f);
		bad |= fclose(f);
		if (!bad && !rename(tmp, path))
			return NNPTOOL_EXIT_OK;
	}
	/* The name the user gave, not the temporary one's random letters. */
	fprintf(stderr, "nnptool: %s: %s: %s\n", cmd, path, strerror(errno));
	if (fd >= 0) {
		if (!f)
			close(fd);
		remove(tmp);
	}
	return NNPTOOL_EXIT_ERROR;
}
