// SPDX-License-Identifier: MIT
/*
 * nnptool's text for a terminal (tools/nnptool/text_out.c) byte for byte:
 * what `nnptool ps` prints of names other users chose.
 *
 * In detail (docs/testing.md has the summary):
 * printable ASCII passes as it is; ESC, BEL, CR, LF, TAB, DEL, a UTF-8
 * C1 control (U+009B, CSI) and the backslash become \xHH; a string that
 * does not fit is cut before the piece that would overflow, never in the
 * middle of an escape, and the output is always terminated
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "text_out.h"

static void printable_ascii_as_is(void **state)
{
	char out[128];

	(void)state;
	text_for_terminal("fdinfo_test /dev/accel/accel0 ~!@#$%^&*()_+{}|:\"<>?",
			  out, sizeof(out));
	assert_string_equal("fdinfo_test /dev/accel/accel0 ~!@#$%^&*()_+{}|:\"<>?",
			    out);
	text_for_terminal("", out, sizeof(out));
	assert_string_equal("", out);
}

static void controls_escaped(void **state)
{
	char out[128];

	(void)state;
	/* A window title, a bell, a forged second line, a C1 CSI in UTF-8. */
	text_for_terminal("\x1b]0;root\x07\r\n\tx\x7f\\\xc2\x9b" "2J", out,
			  sizeof(out));
	assert_string_equal("\\x1b]0;root\\x07\\x0d\\x0a\\x09x\\x7f\\x5c\\xc2\\x9b2J",
			    out);
}

static void cut_short_never_mid_escape(void **state)
{
	char out[9];

	(void)state;
	memset(out, 'Z', sizeof(out));
	/* "ab" and one escape take 6 bytes; the next escape would not fit. */
	text_for_terminal("ab\x1b\x1b", out, sizeof(out));
	assert_string_equal("ab\\x1b", out);
	text_for_terminal("abcdefghijk", out, sizeof(out));
	assert_string_equal("abcde", out);
	text_for_terminal("\x1b", out, 1);
	assert_string_equal("", out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(printable_ascii_as_is),
		cmocka_unit_test(controls_escaped),
		cmocka_unit_test(cut_short_never_mid_escape),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
