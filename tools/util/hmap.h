// SPDX-License-Identifier: MIT
/* A hash map from 64-bit keys to pointers (open addressing, linear
 * probing), for the tools' lookups by id: tracks by thread or stream,
 * strings by id. Key 0 is reserved; callers that need it add 1. */
#ifndef CT_HMAP_H
#define CT_HMAP_H

#include <stddef.h>
#include <stdint.h>

struct hmap {
	uint64_t *keys;
	void **vals;
	size_t n, cap; /* cap: a power of two, or 0 */
};

static inline size_t hmap_mix(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (size_t)v;
}

/* The value under key, or NULL. */
static inline void *hmap_get(const struct hmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = hmap_mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

/* Sets key to val (replacing what was there). */
void hmap_put(struct hmap *m, uint64_t key, void *val);
/* Removes key, if there. */
void hmap_del(struct hmap *m, uint64_t key);
void hmap_free(struct hmap *m);

#endif
