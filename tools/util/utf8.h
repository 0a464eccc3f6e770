// SPDX-License-Identifier: MIT
/* Text from a traced program made valid UTF-8, by the one rule every
 * output follows (docs/CHOICES.md): each byte that does not begin a valid
 * sequence becomes U+FFFD, so that a name reads the same in the Chrome
 * JSON, the .pftrace, the SQLite export, the events TSV and the CSV. */
#ifndef CT_UTF8_H
#define CT_UTF8_H

#include <stddef.h>

/* U+FFFD REPLACEMENT CHARACTER, as UTF-8 (3 bytes). */
#define UTF8_REPLACEMENT "\xef\xbf\xbd"

/* Length of the valid UTF-8 sequence at p (1..4; p[0] < 0x80: 1), or 0
 * when it is not one (bad lead byte, cut, overlong, surrogate). */
size_t utf8_seq(const unsigned char *p, size_t n);
/* Length of the longest valid UTF-8 prefix of s[0..n): n when all of it is. */
size_t utf8_valid(const char *s, size_t n);
/* s[0..n) with each byte that begins no valid sequence replaced by
 * U+FFFD, written at d (room for 3 * n bytes); returns its length. */
size_t utf8_fix_into(char *d, const char *s, size_t n);
/* The valid text of s[0..*n): s itself when it is valid UTF-8 (*tmp NULL,
 * nothing allocated), else a fixed, NUL-terminated copy that is also put
 * in *tmp for the caller to free. *n becomes the text's length. Exits on
 * no memory. */
const char *utf8_clean(const char *s, size_t *n, char **tmp);

#endif
