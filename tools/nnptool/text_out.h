/* SPDX-License-Identifier: MIT */
/* nnptool's text for a terminal, where the text is not nnptool's own. */
#ifndef NNPTOOL_TEXT_OUT_H
#define NNPTOOL_TEXT_OUT_H

#include <stddef.h>

/*
 * @in as @out (@len bytes) for a terminal: printable ASCII as it is, every
 * other byte and the backslash as \xHH, so that a string another user
 * chose (a process's name) cannot move the cursor, retitle the window or
 * pass for another line. Cut short rather than overflow; @len >= 1.
 */
void text_for_terminal(const char *in, char *out, size_t len);

#endif /* NNPTOOL_TEXT_OUT_H */
