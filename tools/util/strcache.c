// SPDX-License-Identifier: MIT
#include "util/strcache.h"
#include "cuptrace/format.h"
#include "util/json_escape.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static char *escape(const char *s, uint32_t len, str_prep prep, size_t *n)
{
	char *d = prep ? prep(s, len, n) : NULL;
	char *e = d ? json_escape(d, *n, n) : json_escape(s, len, n);
	free(d);
	return e;
}

/* The last inline (uninterned) string's text, per thread: freed with a
 * cache (a worker thread that ended with it held leaked it). */
static __thread char *scratch;

const char *strcache_get(struct strcache *c, uint64_t sid, const char *s, uint32_t len, str_prep prep,
			 uint32_t *outlen)
{
	size_t n;
	if (sid < CT_SID_FIRST) {
		free(scratch);
		scratch = escape(s, len, prep, &n);
		*outlen = (uint32_t)n;
		return scratch;
	}
	size_t k = sid - CT_SID_FIRST;
	if (k >= c->n) {
		size_t ncap = c->n ? c->n : 256;
		while (ncap <= k)
			ncap *= 2;
		c->v = xrealloc(c->v, ncap * sizeof *c->v);
		c->len = xrealloc(c->len, ncap * sizeof *c->len);
		memset(c->v + c->n, 0, (ncap - c->n) * sizeof *c->v);
		c->n = ncap;
	}
	if (!c->v[k]) {
		c->v[k] = escape(s, len, prep, &n);
		c->len[k] = (uint32_t)n;
	}
	*outlen = c->len[k];
	return c->v[k];
}

void strcache_free(struct strcache *c)
{
	free(scratch);
	scratch = NULL;
	for (size_t k = 0; k < c->n; k++)
		free(c->v[k]);
	free(c->v);
	free(c->len);
	memset(c, 0, sizeof *c);
}
