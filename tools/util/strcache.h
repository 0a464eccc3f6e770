// SPDX-License-Identifier: MIT
/* JSON-escaped text of a file's strings, made once per string id (names
 * repeat millions of times in a trace). */
#ifndef CT_STRCACHE_H
#define CT_STRCACHE_H

#include <stddef.h>
#include <stdint.h>

struct strcache {
	char **v;
	uint32_t *len;
	size_t n;
};

/* Turns the raw text into what is to be escaped (a demangler): returns a
 * malloc'd string, its length in *outn. NULL prep: the text as it is. */
typedef char *(*str_prep)(const char *s, size_t n, size_t *outn);

/* The escaped text (no quotes) of string reference sid with raw text s.
 * Strings that are not interned are escaped anew each call; the result is
 * valid until the next call on this thread. */
const char *strcache_get(struct strcache *c, uint64_t sid, const char *s, uint32_t len, str_prep prep,
			 uint32_t *outlen);
/* Frees the cache, and the calling thread's text of the last inline string. */
void strcache_free(struct strcache *c);

#endif
