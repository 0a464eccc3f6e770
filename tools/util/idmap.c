// SPDX-License-Identifier: MIT
#include "util/idmap.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static void grow(struct idmap *m)
{
	struct idmap old = *m;
	m->cap = m->cap ? m->cap * 2 : 256;
	m->s = xcalloc(m->cap, sizeof *m->s);
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

int64_t idmap_get_overflow(const struct idmap *m, uint64_t key)
{
	for (size_t i = idmap_home(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->s[i].key == key)
			return m->s[i].val;
		if (!m->s[i].key)
			return -1;
	}
}

static void put_overflow(struct idmap *m, uint64_t key, int64_t val)
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

/* Whether key was in the overflow map (then it is no longer). */
static int del_overflow(struct idmap *m, uint64_t key)
{
	if (!m->n)
		return 0;
	size_t mask = m->cap - 1, i = idmap_home(m, key);
	while (m->s[i].key != key) {
		if (!m->s[i].key)
			return 0;
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
	return 1;
}

void idmap_put(struct idmap *m, uint64_t key, int64_t val)
{
	if (!m->dcap) {
		m->dcap = IDMAP_DIRECT;
		m->d = xcalloc(m->dcap, sizeof *m->d);
	}
	struct idmap_slot *s = idmap_direct(m, key);
	if (s->key == key) {
		s->val = val;
		return;
	}
	/* A key lives in one place: where it already is, else its direct
	 * slot when free. */
	if (m->n && idmap_get_overflow(m, key) >= 0) {
		put_overflow(m, key, val);
		return;
	}
	if (!s->key)
		*s = (struct idmap_slot){key, val};
	else
		put_overflow(m, key, val);
}

void idmap_del(struct idmap *m, uint64_t key)
{
	if (!m->dcap || !key)
		return;
	struct idmap_slot *s = idmap_direct(m, key);
	if (s->key == key)
		*s = (struct idmap_slot){0, 0};
	else
		del_overflow(m, key);
}

void idmap_clear(struct idmap *m)
{
	if (m->d)
		memset(m->d, 0, m->dcap * sizeof *m->d);
	if (m->n)
		memset(m->s, 0, m->cap * sizeof *m->s), m->n = 0;
}

void idmap_free(struct idmap *m)
{
	free(m->d);
	free(m->s);
	m->d = m->s = NULL, m->n = m->cap = m->dcap = 0;
}
