// SPDX-License-Identifier: MIT
#include "strtab.h"

#include <stdlib.h>
#include <string.h>

uint64_t ct_hash_bytes(const void *data, size_t n)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ (n * 0xff51afd7ed558ccdull);
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
		p += 8;
		n -= 8;
	}
	uint64_t w = 0;
	memcpy(&w, p, n);
	h = (h ^ w) * 0x94d049bb133111ebull;
	h ^= h >> 29;
	return h ? h : 1;
}

int ct_strtab_init(struct ct_strtab *t, size_t arena_max, uint32_t first_sid)
{
	memset(t, 0, sizeof *t);
	t->cap = 1024;
	t->hash = calloc(t->cap, sizeof *t->hash);
	t->sid = calloc(t->cap, sizeof *t->sid);
	t->off = calloc(t->cap, sizeof *t->off);
	t->amax = arena_max;
	t->next_sid = first_sid;
	if (!t->hash || !t->sid || !t->off) {
		ct_strtab_free(t);
		return -1;
	}
	return 0;
}

void ct_strtab_free(struct ct_strtab *t)
{
	free(t->hash);
	free(t->sid);
	free(t->off);
	free(t->arena);
	memset(t, 0, sizeof *t);
}

static int grow_table(struct ct_strtab *t)
{
	size_t ncap = t->cap * 2;
	uint64_t *h = calloc(ncap, sizeof *h);
	uint32_t *s = calloc(ncap, sizeof *s), *o = calloc(ncap, sizeof *o);
	if (!h || !s || !o) {
		free(h), free(s), free(o);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->hash[i])
			continue;
		size_t j = t->hash[i] & (ncap - 1);
		while (h[j])
			j = (j + 1) & (ncap - 1);
		h[j] = t->hash[i], s[j] = t->sid[i], o[j] = t->off[i];
	}
	free(t->hash), free(t->sid), free(t->off);
	t->hash = h, t->sid = s, t->off = o, t->cap = ncap;
	return 0;
}

/* The slot of str, or the empty slot where it would go. */
static size_t slot(const struct ct_strtab *t, const char *str, uint32_t len, uint64_t h)
{
	size_t mask = t->cap - 1, i = h & mask;
	for (; t->hash[i]; i = (i + 1) & mask) {
		if (t->hash[i] != h)
			continue;
		uint32_t l;
		memcpy(&l, t->arena + t->off[i], 4);
		if (l == len && !memcmp(t->arena + t->off[i] + 4, str, len))
			break;
	}
	return i;
}

uint32_t ct_strtab_find(const struct ct_strtab *t, const char *str, uint32_t len)
{
	if (!t->hash)
		return 0;
	size_t i = slot(t, str, len, ct_hash_bytes(str, len));
	return t->hash[i] ? t->sid[i] : 0;
}

uint32_t ct_strtab_intern(struct ct_strtab *t, const char *str, uint32_t len, int force, int *is_new)
{
	*is_new = 0;
	uint64_t h = ct_hash_bytes(str, len);
	size_t mask = t->cap - 1, i = slot(t, str, len, h);
	if (t->hash[i])
		return t->sid[i];
	size_t need = (size_t)len + 4;
	if (!force && t->alen + need > t->amax)
		return 0;
	if (t->alen + need > t->acap || !t->arena) {
		size_t ncap = t->acap ? t->acap : 4096;
		while (ncap < t->alen + need)
			ncap *= 2;
		char *a = realloc(t->arena, ncap);
		if (!a)
			return 0;
		t->arena = a, t->acap = ncap;
	}
	if ((t->n + 1) * 2 > t->cap) {
		if (grow_table(t))
			return 0;
		mask = t->cap - 1;
		for (i = h & mask; t->hash[i]; i = (i + 1) & mask)
			;
	}
	memcpy(t->arena + t->alen, &len, 4);
	memcpy(t->arena + t->alen + 4, str, len);
	t->hash[i] = h;
	t->off[i] = (uint32_t)t->alen;
	t->sid[i] = t->next_sid++;
	t->alen += need;
	t->n++;
	*is_new = 1;
	return t->sid[i];
}
