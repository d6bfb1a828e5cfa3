// SPDX-License-Identifier: MIT
/*
 * nnptool's JSON writer (tools/nnptool/json_out.c) byte for byte: the
 * one-line layout every --json command prints and the CDI spec's layout,
 * and strings escaped as JSON requires, which matters where nnptool
 * prints what a user chose: a process's name in `nnptool ps`, a device
 * path in `nnptool reset`.
 *
 * In detail (docs/testing.md has the summary):
 * a string of '"', '\\', '/', U+0001, '\n', '\t', U+001F, U+007F and a
 * two-byte and a four-byte UTF-8 character is `"\"\\/\u0001\n\t\u001f"`
 * then DEL and the UTF-8 bytes as they are; a key is escaped the same
 * way; members in the order added, ", " and ": " between them; integers
 * from INT64_MIN to UINT64_MAX exact; jo_fixed() writes "%.3f"'s digits;
 * true, false, null; empty containers `{}` and `[]`; the pretty layout
 * of a CDI-like spec, exact, with an empty array staying `[]`
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "json_out.h"

/* @doc as jo_write writes it, freed. */
static char *written(struct json_object *doc, bool pretty)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	assert_non_null(f);
	jo_write(f, doc, pretty);
	assert_int_equal(0, fclose(f));
	json_object_put(doc);
	return text;
}

static void expect(struct json_object *doc, bool pretty, const char *want)
{
	char *got = written(doc, pretty);

	assert_string_equal(want, got);
	free(got);
}

static void strings_escaped(void **state)
{
	struct json_object *a = jo_arr(NULL, NULL);

	(void)state;
	jo_str(a, NULL, "\"\\/\x01\n\t\x1f\x7f \xc3\xa9 \xf0\x9f\x98\x80");
	jo_str(a, NULL, "");
	expect(a, false, "[\"\\\"\\\\/\\u0001\\n\\t\\u001f\x7f \xc3\xa9 "
	       "\xf0\x9f\x98\x80\", \"\"]");
}

static void keys_escaped(void **state)
{
	struct json_object *o = jo_obj(NULL, NULL);

	(void)state;
	jo_int(o, "a\"b\\c\n", 1);
	expect(o, false, "{\"a\\\"b\\\\c\\n\": 1}");
}

static void one_line_layout(void **state)
{
	struct json_object *o = jo_obj(NULL, NULL), *in;

	(void)state;
	jo_int(o, "index", 3);
	jo_int(o, "min", INT64_MIN);
	jo_u64(o, "max", UINT64_MAX);
	jo_fixed(o, "gbps", 1.23456, 3);
	jo_fixed(o, "small", 0.0000004, 6);
	jo_fixed(o, "inf", 1.0 / 0.0, 3);
	jo_bool(o, "ok", true);
	jo_bool(o, "bad", false);
	jo_null(o, "model");
	in = jo_arr(o, "rows");
	jo_int(jo_obj(in, NULL), "size", 8);
	jo_int(in, NULL, -1);
	jo_obj(o, "empty");
	jo_arr(o, "none");
	expect(o, false, "{\"index\": 3, \"min\": -9223372036854775808, "
	       "\"max\": 18446744073709551615, \"gbps\": 1.235, "
	       "\"small\": 0.000000, \"inf\": null, \"ok\": true, \"bad\": false, "
	       "\"model\": null, \"rows\": [{\"size\": 8}, -1], \"empty\": {}, "
	       "\"none\": []}");
}

/* The CDI spec's shape: nnptool cdi's output must not change. */
static void pretty_layout(void **state)
{
	struct json_object *o = jo_obj(NULL, NULL), *devs, *d, *edits, *m;

	(void)state;
	jo_str(o, "cdiVersion", "0.6.0");
	devs = jo_arr(o, "devices");
	d = jo_obj(devs, NULL);
	jo_str(d, "name", "0");
	jo_str(jo_obj(jo_arr(jo_obj(d, "containerEdits"), "deviceNodes"), NULL),
	       "path", "/dev/accel/accel0");
	jo_str(jo_obj(devs, NULL), "name", "all");
	edits = jo_obj(o, "containerEdits");
	m = jo_arr(edits, "mounts");
	jo_str(jo_obj(m, NULL), "hostPath", "/usr/lib/libnnp.so.0");
	jo_str(m, NULL, "x");
	jo_arr(edits, "none");
	expect(o, true, "{\n"
	       "  \"cdiVersion\": \"0.6.0\",\n"
	       "  \"devices\": [\n"
	       "    {\"name\": \"0\", \"containerEdits\": {\"deviceNodes\": "
	       "[{\"path\": \"/dev/accel/accel0\"}]}},\n"
	       "    {\"name\": \"all\"}\n"
	       "  ],\n"
	       "  \"containerEdits\": {\n"
	       "    \"mounts\": [\n"
	       "      {\"hostPath\": \"/usr/lib/libnnp.so.0\"},\n"
	       "      \"x\"\n"
	       "    ],\n"
	       "    \"none\": []\n"
	       "  }\n"
	       "}");
}

static void line_ends_in_a_newline(void **state)
{
	struct json_object *o = jo_obj(NULL, NULL);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	jo_str(o, "device", "3");
	jo_line(f, o);
	assert_int_equal(0, fclose(f));
	assert_string_equal("{\"device\": \"3\"}\n", text);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strings_escaped),
		cmocka_unit_test(keys_escaped),
		cmocka_unit_test(one_line_layout),
		cmocka_unit_test(pretty_layout),
		cmocka_unit_test(line_ends_in_a_newline),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
