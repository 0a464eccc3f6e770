#ifndef CT_JSON_ESCAPE_H
#define CT_JSON_ESCAPE_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence at p (1..4; p[0] < 0x80: 1), or 0
 * when it is not one (bad lead byte, cut, overlong, surrogate). */
size_t utf8_seq(const unsigned char *p, size_t n);
/* Writes the escaped body of s (no quotes) at d, which has room for 6 * n
 * bytes; returns its length. */
size_t json_escape_into(char *d, const char *s, size_t n);
/* The same into a malloc'd, NUL-terminated buffer (NULL: out of memory). */
char *json_escape(const char *s, size_t n, size_t *outlen);

#endif
