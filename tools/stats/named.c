// SPDX-License-Identifier: MIT
#include "stats/named.h"
#include "util/pack.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

void named_init(struct named *m, size_t size)
{
	memset(m, 0, sizeof *m);
	m->size = size;
}

static uint64_t hash(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h + !h; /* hmap's key 0 is reserved */
}

void *named_get(struct named *m, const char *s, size_t len)
{
	uint64_t h = hash(s, len);
	size_t first = (uintptr_t)hmap_get(&m->index, h);
	for (size_t i = first; i; i = m->next[i - 1])
		if (!strncmp(m->keys[i - 1], s, len) && !m->keys[i - 1][len])
			return m->v[i - 1];
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->v = xrealloc(m->v, m->cap * sizeof *m->v);
		m->keys = xrealloc(m->keys, m->cap * sizeof *m->keys);
		m->next = xrealloc(m->next, m->cap * sizeof *m->next);
	}
	char *k = xrealloc(NULL, len + 1);
	memcpy(k, s, len);
	k[len] = 0;
	m->keys[m->n] = k;
	m->v[m->n] = xcalloc(1, m->size);
	m->next[m->n] = first;
	m->n++;
	hmap_put(&m->index, h, (void *)(uintptr_t)m->n);
	return m->v[m->n - 1];
}

void named_free(struct named *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i]), free(m->keys[i]);
	free(m->v), free(m->keys), free(m->next);
	hmap_free(&m->index);
	memset(m, 0, sizeof *m);
}

void named_merge(struct named *dst, struct named *src, void (*fn)(void *into, void *from))
{
	for (size_t i = 0; i < src->n; i++)
		fn(named_get(dst, src->keys[i], strlen(src->keys[i])), src->v[i]);
	named_free(src);
}

void named_pack(const struct named *m, struct pack *b, void (*fn)(void *rec, struct pack *b))
{
	pk_u64(b, m->n);
	for (size_t i = 0; i < m->n; i++) {
		pk_str(b, m->keys[i]);
		pk_bytes(b, m->v[i], m->size);
		if (fn)
			fn(m->v[i], b);
	}
}

void named_unpack(struct named *m, struct pack *b, void (*fn)(void *rec, struct pack *b))
{
	uint64_t n = up_u64(b);
	for (uint64_t i = 0; i < n && !b->bad; i++) {
		char *key = up_str(b);
		if (!key) {
			b->bad = 1;
			return;
		}
		void *rec = named_get(m, key, strlen(key));
		free(key);
		up_bytes(b, rec, m->size);
		if (fn)
			fn(rec, b);
	}
}
