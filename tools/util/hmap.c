#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdlib.h>

static void grow(struct hmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	uint64_t *keys = calloc(ncap, sizeof *keys);
	void **vals = calloc(ncap, sizeof *vals);
	if (!keys || !vals)
		xoom();
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

void hmap_free(struct hmap *m)
{
	free(m->keys);
	free(m->vals);
	m->keys = NULL, m->vals = NULL, m->n = m->cap = 0;
}
