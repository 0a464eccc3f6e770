// SPDX-License-Identifier: MIT
#ifndef CT_JSON_ESCAPE_H
#define CT_JSON_ESCAPE_H

#include "util/utf8.h" /* utf8_seq */

#include <stddef.h>

/* Writes the escaped body of s (no quotes) at d, which has room for 6 * n
 * bytes; returns its length. */
size_t json_escape_into(char *d, const char *s, size_t n);
/* The same into a malloc'd, NUL-terminated buffer. */
char *json_escape(const char *s, size_t n, size_t *outlen);

#endif
