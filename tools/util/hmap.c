// SPDX-License-Identifier: MIT
#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdlib.h>

static void grow(struct hmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = xcalloc(ncap, sizeof *keys);
	void **vals = xcalloc(ncap, sizeof *vals);
	for (size_t k = 0; k < m->cap; k++) {
		if (!m->keys[k])
			continue;
		size_t i = hmap_mix(m->keys[k]) & (ncap - 1);
		while (keys[i])
			i = (i + 1) & (ncap - 1);
		keys[i] = m->keys[k];
		vals[i] = m->vals[k];
	}
	free(m->keys);
	free(m->vals);
	m->keys = keys, m->vals = vals, m->cap = ncap;
}

void hmap_put(struct hmap *m, uint64_t key, void *val)
{
	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	size_t i = hmap_mix(key) & (m->cap - 1);
	while (m->keys[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i])
		m->n++;
	m->keys[i] = key;
	m->vals[i] = val;
}

void hmap_del(struct hmap *m, uint64_t key)
{
	if (!m->cap || !key)
		return;
	size_t mask = m->cap - 1, i = hmap_mix(key) & mask;
	while (m->keys[i] != key) {
		if (!m->keys[i])
			return;
		i = (i + 1) & mask;
	}
	/* Entries after the hole that probed past it move back into it, so
	 * that no lookup stops at the hole too early. */
	for (size_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		size_t home = hmap_mix(m->keys[j]) & mask;
		if (i < j ? i < home && home <= j : i < home || home <= j)
			continue; /* its home is after the hole: it stays */
		m->keys[i] = m->keys[j];
		m->vals[i] = m->vals[j];
		i = j;
	}
	m->keys[i] = 0;
	m->vals[i] = NULL;
	m->n--;
}

void hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL, m->vals = NULL, m->n = m->cap = 0;
}
