// SPDX-License-Identifier: MIT
/* nnptool's JSON writer over json-c's documents (json_out.h). */
#include <math.h>
#include <stdlib.h>

#include "json_out.h"

/* A leaf as json-c writes it, but "/dev/accel", not "\/dev\/accel". */
#define LEAF_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

static void out_of_memory(void)
{
	fputs("nnptool: out of memory\n", stderr);
	exit(1);
}

/*
 * @v (NULL only for null) into @parent; json-c's constructors and adders
 * fail only when out of memory.
 */
static struct json_object *add(struct json_object *parent, const char *key,
			       struct json_object *v, bool is_null)
{
	int r;

	if (!v && !is_null)
		out_of_memory();
	if (!parent)
		return v;
	if (json_object_is_type(parent, json_type_array))
		r = json_object_array_add(parent, v);
	else
		r = json_object_object_add(parent, key, v);
	if (r)
		out_of_memory();
	return v;
}

struct json_object *jo_obj(struct json_object *parent, const char *key)
{
	return add(parent, key, json_object_new_object(), false);
}

struct json_object *jo_arr(struct json_object *parent, const char *key)
{
	return add(parent, key, json_object_new_array(), false);
}

void jo_int(struct json_object *parent, const char *key, int64_t v)
{
	add(parent, key, json_object_new_int64(v), false);
}

void jo_u64(struct json_object *parent, const char *key, uint64_t v)
{
	add(parent, key, json_object_new_uint64(v), false);
}

void jo_str(struct json_object *parent, const char *key, const char *s)
{
	add(parent, key, json_object_new_string(s), false);
}

void jo_bool(struct json_object *parent, const char *key, bool v)
{
	add(parent, key, json_object_new_boolean(v), false);
}

void jo_null(struct json_object *parent, const char *key)
{
	add(parent, key, NULL, true);
}

void jo_str_or_null(struct json_object *parent, const char *key, const char *s)
{
	if (s)
		jo_str(parent, key, s);
	else
		jo_null(parent, key);
}

void jo_fixed(struct json_object *parent, const char *key, double v,
	      int decimals)
{
	char text[64];

	/* JSON has no inf or NaN (a bandwidth over a time of 0): null. */
	if (!isfinite(v)) {
		jo_null(parent, key);
		return;
	}
	snprintf(text, sizeof(text), "%.*f", decimals, v);
	add(parent, key, json_object_new_double_s(v, text), false);
}

static void write_key(FILE *f, const char *key)
{
	struct json_object *k = add(NULL, NULL, json_object_new_string(key), false);

	fputs(json_object_to_json_string_ext(k, LEAF_FLAGS), f);
	json_object_put(k);
}

/* What comes before member or element @i of a container at @depth. */
static void before(FILE *f, size_t i, int depth, bool pretty)
{
	if (pretty)
		fprintf(f, "%s\n%*s", i ? "," : "", 2 * (depth + 1), "");
	else if (i)
		fputs(", ", f);
}

/* The end of a container at @depth of @n members or elements. */
static void close_with(FILE *f, char c, size_t n, int depth, bool pretty)
{
	if (pretty && n)
		fprintf(f, "\n%*s", 2 * depth, "");
	fputc(c, f);
}

/* Pretty: an array's elements are one line each, whatever they hold. */
static void write_value(FILE *f, struct json_object *v, int depth, bool pretty)
{
	struct json_object_iter it;
	size_t i = 0, n;

	switch (json_object_get_type(v)) {
	case json_type_object:
		fputc('{', f);
		json_object_object_foreachC(v, it) {
			before(f, i++, depth, pretty);
			write_key(f, it.key);
			fputs(": ", f);
			write_value(f, it.val, depth + 1, pretty);
		}
		close_with(f, '}', i, depth, pretty);
		break;
	case json_type_array:
		n = json_object_array_length(v);
		fputc('[', f);
		for (i = 0; i < n; i++) {
			before(f, i, depth, pretty);
			write_value(f, json_object_array_get_idx(v, i), depth + 1,
				    false);
		}
		close_with(f, ']', n, depth, pretty);
		break;
	default:
		fputs(json_object_to_json_string_ext(v, LEAF_FLAGS), f);
	}
}

void jo_write(FILE *f, struct json_object *doc, bool pretty)
{
	write_value(f, doc, 0, pretty);
}

void jo_line(FILE *f, struct json_object *doc)
{
	jo_write(f, doc, false);
	fputc('\n', f);
	json_object_put(doc);
}
