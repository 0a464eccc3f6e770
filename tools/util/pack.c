// SPDX-License-Identifier: MIT
#include "util/pack.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void pk_bytes(struct pack *p, const void *v, size_t n)
{
	if (p->n + n > p->cap) {
		p->cap = p->cap ? p->cap : 4096;
		while (p->n + n > p->cap)
			p->cap *= 2;
		p->b = xrealloc(p->b, p->cap);
	}
	if (n)
		memcpy(p->b + p->n, v, n);
	p->n += n;
}

void pk_u64(struct pack *p, uint64_t v)
{
	pk_bytes(p, &v, sizeof v);
}

void pk_str(struct pack *p, const char *s)
{
	size_t n = s ? strlen(s) + 1 : 0;
	pk_u64(p, n);
	pk_bytes(p, s, n);
}

void up_bytes(struct pack *p, void *v, size_t n)
{
	if (p->bad || n > p->n - p->at) {
		p->bad = 1;
		memset(v, 0, n);
		return;
	}
	memcpy(v, p->b + p->at, n);
	p->at += n;
}

uint64_t up_u64(struct pack *p)
{
	uint64_t v;
	up_bytes(p, &v, sizeof v);
	return v;
}

char *up_str(struct pack *p)
{
	uint64_t n = up_u64(p);
	if (!n || p->bad || n > p->n - p->at) {
		p->bad |= n != 0;
		return NULL;
	}
	char *s = xmalloc(n);
	up_bytes(p, s, n);
	s[n - 1] = 0;
	return s;
}

void pk_free(struct pack *p)
{
	free(p->b);
	memset(p, 0, sizeof *p);
}

void pk_array(struct pack *p, const void *v, size_t n, size_t size)
{
	pk_u64(p, n);
	pk_bytes(p, v, n * size);
}

void *up_array(struct pack *p, size_t *n, size_t size)
{
	uint64_t k = up_u64(p);
	*n = 0;
	if (p->bad || !k || k > (p->n - p->at) / size) {
		p->bad |= k != 0;
		return NULL;
	}
	void *v = xmalloc(k * size);
	up_bytes(p, v, k * size);
	*n = k;
	return v;
}
