// SPDX-License-Identifier: MIT
/* nnp-sim's reader of one trace file: see trace.h and docs/trace.md. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "nnp_hw.h"
#include "text_out.h"
#include "trace.h"

static const char *const kinds[] = {
	[TRACE_ALLREDUCE] = "allreduce", [TRACE_BROADCAST] = "broadcast",
	[TRACE_ALLGATHER] = "allgather", [TRACE_REDUCE_SCATTER] = "reduce_scatter",
	[TRACE_SEND] = "send", [TRACE_RECV] = "recv", [TRACE_REDUCE] = "reduce",
	[TRACE_ALLTOALL] = "alltoall", [TRACE_GATHER] = "gather",
	[TRACE_SCATTER] = "scatter",
};

/* Indexed by NNP_DTYPE_* and NNP_OP_*. */
static const char *const dtypes[NNP_DTYPE_COUNT] = {
	"f32", "f16", "bf16", "i32", "f64", "i64", "u8",
};
static const unsigned int dtype_sizes[NNP_DTYPE_COUNT] = { 4, 2, 2, 4, 8, 8, 1 };
static const char *const redops[NNP_OP_COUNT] = {
	"sum", "prod", "min", "max", "avg",
};

unsigned int trace_dtype_size(uint8_t dtype)
{
	return dtype_sizes[dtype];
}

/* Where a line is, for its errors. */
struct where {
	const char *path;
	unsigned int line;
};

static int bad(const struct where *w, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "nnp-sim: %s:%u: ", w->path, w->line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

static int key(const struct where *w, struct json_object *o, const char *k,
	       struct json_object **v)
{
	if (!json_object_object_get_ex(o, k, v))
		return bad(w, "no \"%s\"", k);
	return 0;
}

/* An integer of 0 or more; with @null_ok a null leaves *@known false. */
static int get_u64(const struct where *w, struct json_object *o,
		   const char *k, bool null_ok, uint64_t *out, bool *known)
{
	struct json_object *v;

	if (key(w, o, k, &v))
		return -1;
	if (null_ok && !v) {
		*known = false;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int) || json_object_get_int64(v) < 0)
		return bad(w, "\"%s\" is not %s", k,
			   null_ok ? "a non-negative integer or null" :
				     "a non-negative integer");
	*out = (uint64_t)json_object_get_int64(v);
	if (known)
		*known = true;
	return 0;
}

/* A string, or with @null_ok null (*@s NULL). */
static int get_str(const struct where *w, struct json_object *o,
		   const char *k, bool null_ok, const char **s)
{
	struct json_object *v;

	if (key(w, o, k, &v))
		return -1;
	*s = NULL;
	if (null_ok && !v)
		return 0;
	if (!json_object_is_type(v, json_type_string))
		return bad(w, "\"%s\" is not %s", k,
			   null_ok ? "a string or null" : "a string");
	*s = json_object_get_string(v);
	return 0;
}

/* @s's index in @names[@n]; else -1, said as an unknown @what. */
static int lookup(const struct where *w, const char *what,
		  const char *const *names, unsigned int n, const char *s)
{
	unsigned int i;

	char shown[4 * 64];

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	/* The trace may be another user's: its text is no terminal's command. */
	text_for_terminal(s, shown, sizeof(shown));
	return bad(w, "unknown %s \"%s\"", what, shown);
}

static int get_u32(const struct where *w, struct json_object *o,
		   const char *k, uint32_t *out)
{
	uint64_t v;

	if (get_u64(w, o, k, false, &v, NULL))
		return -1;
	if (v > UINT32_MAX)
		return bad(w, "\"%s\" is out of range", k);
	*out = (uint32_t)v;
	return 0;
}

/* One operation line's keys, in the order docs/trace.md lists them. */
static int parse_op(const struct where *w, struct json_object *o,
		    struct trace_op *op)
{
	const char *comm, *kind, *dtype, *redop, *status;
	uint64_t unused;
	bool known, ran_end;
	char *end;
	int i;

	*op = (struct trace_op){ .line = w->line };
	if (get_u64(w, o, "seq", false, &op->seq, NULL) ||
	    get_str(w, o, "comm", false, &comm) ||
	    get_u32(w, o, "rank", &op->rank) ||
	    get_u32(w, o, "nranks", &op->nranks) ||
	    get_str(w, o, "op", false, &kind) ||
	    get_str(w, o, "dtype", false, &dtype) ||
	    get_u64(w, o, "count", false, &op->count, NULL) ||
	    get_u64(w, o, "bytes", false, &op->bytes, NULL) ||
	    get_str(w, o, "redop", true, &redop) ||
	    get_u64(w, o, "root", true, &unused, &known) ||
	    get_u64(w, o, "peer", true, &unused, &known) ||
	    get_u64(w, o, "issue_ns", false, &op->issue_ns, NULL) ||
	    get_u64(w, o, "wait_ns", false, &op->wait_ns, NULL) ||
	    get_u64(w, o, "done_ns", false, &op->done_ns, NULL) ||
	    get_u64(w, o, "gap_ns", false, &unused, NULL) ||
	    get_u64(w, o, "dev_start_ns", true, &op->dev_start_ns, &op->ran) ||
	    get_u64(w, o, "dev_end_ns", true, &op->dev_end_ns, &ran_end) ||
	    get_str(w, o, "status", false, &status))
		return -1;
	op->comm = strtoull(comm, &end, 16);
	if (strlen(comm) != 16 || *end)
		return bad(w, "\"comm\" is not 16 hex digits");
	if (!op->nranks || op->rank >= op->nranks)
		return bad(w, "rank %u of %u", op->rank, op->nranks);
	i = lookup(w, "op", kinds, sizeof(kinds) / sizeof(kinds[0]), kind);
	if (i < 0)
		return -1;
	op->kind = (enum trace_kind)i;
	i = lookup(w, "dtype", dtypes, NNP_DTYPE_COUNT, dtype);
	if (i < 0)
		return -1;
	op->dtype = (uint8_t)i;
	if (op->kind == TRACE_ALLREDUCE || op->kind == TRACE_REDUCE_SCATTER ||
	    op->kind == TRACE_REDUCE) {
		if (!redop)
			return bad(w, "\"redop\" is null for a reduction");
		i = lookup(w, "redop", redops, NNP_OP_COUNT, redop);
		if (i < 0)
			return -1;
		op->redop = (uint8_t)i;
	}
	if (op->issue_ns > op->wait_ns || op->wait_ns > op->done_ns)
		return bad(w, "not issue_ns <= wait_ns <= done_ns");
	op->ok = !strcmp(status, "ok");
	op->ran = op->ran && ran_end;
	if (op->ok && !op->ran)
		return bad(w, "\"dev_start_ns\" or \"dev_end_ns\" is null, status \"ok\"");
	return 0;
}

enum line_error { LINE_OK, LINE_TRUNCATED, LINE_NOT_OBJECT };

/*
 * @len bytes of a line as a JSON object into *@o; a line cut off in the
 * middle of its object (the file's end, or a crash) is truncated.
 */
static enum line_error parse_line(const char *text, size_t len,
				  struct json_object **o)
{
	struct json_tokener *tok = json_tokener_new();
	enum json_tokener_error e;
	size_t at;

	*o = NULL;
	if (!tok)
		return LINE_NOT_OBJECT;
	*o = json_tokener_parse_ex(tok, text, (int)len);
	e = json_tokener_get_error(tok);
	at = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (e == json_tokener_continue)
		return LINE_TRUNCATED;
	/* Nothing but white space after the object. */
	while (*o && at < len && strchr(" \t\r\n", text[at]))
		at++;
	if (!*o || at < len || !json_object_is_type(*o, json_type_object)) {
		json_object_put(*o);
		*o = NULL;
		return LINE_NOT_OBJECT;
	}
	return LINE_OK;
}

/* The first line: {"nnp_trace": 1, ...}. */
static int parse_header(const struct where *w, const char *text, size_t len)
{
	struct json_object *o, *v;
	int rc = 0;

	if (parse_line(text, len, &o))
		return bad(w, "not a trace: the first line is not a JSON object");
	if (!json_object_object_get_ex(o, "nnp_trace", &v))
		rc = bad(w, "not a trace: no \"nnp_trace\" in the first line");
	else if (!json_object_is_type(v, json_type_int))
		rc = bad(w, "\"nnp_trace\" is not an integer");
	else if (json_object_get_int64(v) != TRACE_VERSION)
		rc = bad(w, "trace format version %lld; this nnp-sim reads version %d",
			 (long long)json_object_get_int64(v), TRACE_VERSION);
	json_object_put(o);
	return rc;
}

static int add_op(struct trace_file *f, const struct trace_op *op, size_t *cap)
{
	if (f->nops == *cap) {
		size_t n = *cap ? 2 * *cap : 64;
		struct trace_op *ops = realloc(f->ops, n * sizeof(*ops));

		if (!ops)
			return -1;
		f->ops = ops;
		*cap = n;
	}
	f->ops[f->nops++] = *op;
	return 0;
}

int trace_read(const char *path, struct trace_file *f)
{
	struct where w = { .path = path };
	FILE *in = fopen(path, "r");
	char *text = NULL;
	size_t size = 0, cap = 0;
	ssize_t len;
	int rc = 0;

	*f = (struct trace_file){ .path = path };
	if (!in) {
		fprintf(stderr, "nnp-sim: %s: %m\n", path);
		return -1;
	}
	while (!rc && (len = getline(&text, &size, in)) >= 0) {
		struct json_object *o;
		struct trace_op op;

		w.line++;
		if (w.line == 1) {
			rc = parse_header(&w, text, (size_t)len);
			continue;
		}
		switch (parse_line(text, (size_t)len, &o)) {
		case LINE_TRUNCATED:
			rc = bad(&w, "truncated: the line ends inside its object");
			continue;
		case LINE_NOT_OBJECT:
			rc = bad(&w, "not a JSON object");
			continue;
		case LINE_OK:
			break;
		}
		rc = parse_op(&w, o, &op);
		json_object_put(o);
		if (!rc && add_op(f, &op, &cap))
			rc = bad(&w, "out of memory");
	}
	if (!rc && !w.line) {
		fprintf(stderr, "nnp-sim: %s: empty, not a trace\n", path);
		rc = -1;
	}
	free(text);
	fclose(in);
	if (rc)
		trace_free(f);
	return rc;
}

void trace_free(struct trace_file *f)
{
	free(f->ops);
	f->ops = NULL;
	f->nops = 0;
}
