// SPDX-License-Identifier: MIT
/* Text from a traced program (NVTX names, kernel names, host names, command
 * lines) made safe for a terminal: control characters shown as escapes, so
 * that a newline cannot break a table's row and an ESC cannot drive the
 * terminal. */
#ifndef CT_TERM_ESCAPE_H
#define CT_TERM_ESCAPE_H

#include <stddef.h>

/* A malloc'd, NUL-terminated copy of s[0..n) where \n \r \t are written
 * "\n" "\r" "\t", other C0 controls, DEL and bytes that are not valid
 * UTF-8 "\xHH", and the C1 controls U+0080..U+009F "\u0080".."\u009f";
 * everything else (printable ASCII, valid UTF-8) as it is. *cols: the
 * result's width in columns (one per character). Exits on no memory. */
char *term_escape(const char *s, size_t n, size_t *cols);

#endif
