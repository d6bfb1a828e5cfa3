/* SPDX-License-Identifier: MIT */
/*
 * nnptool's JSON: documents built with json-c and written in nnptool's
 * layout, which json-c's own writer has no flag for: ", " between members
 * and elements and ": " after a key, all on one line; or for the CDI spec,
 * objects one member per line and arrays one element per line, indented
 * by two spaces. Every key and every value that holds no other (strings,
 * numbers, true, false, null) is json-c's own text: its string escaping,
 * with '/' left as it is.
 *
 * Each jo_ function below but the writers makes a value and adds it to
 * @parent: under @key if @parent is an object, at its end if it is an
 * array (@key NULL). @parent owns it from then on. With a NULL @parent
 * the value is a document's root. Out of memory, nnptool says so and
 * exits 1 rather than print a document that lacks a part.
 */
#ifndef NNPTOOL_JSON_OUT_H
#define NNPTOOL_JSON_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

/* Containers: returned, to be filled. */
struct json_object *jo_obj(struct json_object *parent, const char *key);
struct json_object *jo_arr(struct json_object *parent, const char *key);

void jo_int(struct json_object *parent, const char *key, int64_t v);
void jo_u64(struct json_object *parent, const char *key, uint64_t v);
void jo_str(struct json_object *parent, const char *key, const char *s);
void jo_bool(struct json_object *parent, const char *key, bool v);
void jo_null(struct json_object *parent, const char *key);
/* @s, or null for NULL. */
void jo_str_or_null(struct json_object *parent, const char *key, const char *s);
/*
 * A number written with @decimals digits after the point, as "%.*f"; an
 * infinity or NaN, which JSON cannot hold, as null.
 */
void jo_fixed(struct json_object *parent, const char *key, double v,
	      int decimals);

/* @doc into @f, on one line or (@pretty) as the CDI spec is laid out. */
void jo_write(FILE *f, struct json_object *doc, bool pretty);

/* @doc on one line and a newline into @f; then @doc is freed. */
void jo_line(FILE *f, struct json_object *doc);

#endif /* NNPTOOL_JSON_OUT_H */
