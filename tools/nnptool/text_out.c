// SPDX-License-Identifier: MIT
/* nnptool's text for a terminal (text_out.h). */
#include <stdio.h>

#include "text_out.h"

void text_for_terminal(const char *in, char *out, size_t len)
{
	size_t n = 0;

	/* Room for the longest piece, "\xHH", and the terminating NUL. */
	for (; *in && n + 5 <= len; in++) {
		unsigned char c = (unsigned char)*in;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[n++] = (char)c;
		else
			n += (size_t)snprintf(out + n, len - n, "\\x%02x", c);
	}
	out[n] = '\0';
}
