#include "util/idmap.h"
#include "util/xalloc.h"

#include <stdlib.h>

static void grow(struct idmap *m)
{
	struct idmap old = *m;
	m->cap = m->cap ? m->cap * 2 : 256;
	m->s = calloc(m->cap, sizeof *m->s);
	if (!m->s)
		xoom();
	for (size_t k = 0; k < old.cap; k++) {
		if (!old.s[k].key)
			continue;
		size_t i = idmap_home(m, old.s[k].key);
		while (m->s[i].key)
			i = (i + 1) & (m->cap - 1);
		m->s[i] = old.s[k];
	}
	free(old.s);
}

void idmap_put(struct idmap *m, uint64_t key, int64_t val)
{
	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	size_t i = idmap_home(m, key);
	while (m->s[i].key && m->s[i].key != key)
		i = (i + 1) & (m->cap - 1);
	if (!m->s[i].key)
		m->n++;
	m->s[i] = (struct idmap_slot){key, val};
}

void idmap_del(struct idmap *m, uint64_t key)
{
	if (!m->cap || !key)
		return;
	size_t mask = m->cap - 1, i = idmap_home(m, key);
	while (m->s[i].key != key) {
		if (!m->s[i].key)
			return;
		i = (i + 1) & mask;
	}
	/* Entries after the hole that probed past it move back into it, so
	 * that no lookup stops at the hole too early. */
	for (size_t j = (i + 1) & mask; m->s[j].key; j = (j + 1) & mask) {
		size_t home = idmap_home(m, m->s[j].key);
		if (i < j ? i < home && home <= j : i < home || home <= j)
			continue; /* its home is after the hole: it stays */
		m->s[i] = m->s[j];
		i = j;
	}
	m->s[i] = (struct idmap_slot){0, 0};
	m->n--;
}

void idmap_free(struct idmap *m)
{
	free(m->s);
	m->s = NULL, m->n = m->cap = 0;
}
