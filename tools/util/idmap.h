/* A hash map from 64-bit ids to 32-bit indices, for ids that come in runs
 * (counters handed out in blocks, as the NCCL source's handles are): ids
 * that differ only in their low bits land in one bucket of 8 neighbouring
 * slots, and a slot holds key and value together, so looking up the ids
 * of recent records mostly hits cache lines already loaded (hmap.h
 * scatters every id, two cache misses each). Any ids work; runs are only
 * faster. Key 0 is reserved. */
#ifndef CT_IDMAP_H
#define CT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap_slot {
	uint64_t key;
	int64_t val;
};

struct idmap {
	struct idmap_slot *s;
	size_t n, cap; /* cap: a power of two, or 0 */
	unsigned shift; /* low bits of an id that are not part of its run (a type code) */
};

/* Slot of key with the map's layout: runs of 8 ids share a bucket. */
static inline size_t idmap_home(const struct idmap *m, uint64_t key)
{
	uint64_t g = key >> m->shift, b = g >> 3;
	b ^= b >> 33;
	b *= 0xff51afd7ed558ccdull;
	b ^= b >> 33;
	return (size_t)(b << 3 | (g & 7)) & (m->cap - 1);
}

/* The value under key, or -1. */
static inline int64_t idmap_get(const struct idmap *m, uint64_t key)
{
	if (!m->cap)
		return -1;
	for (size_t i = idmap_home(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (m->s[i].key == key)
			return m->s[i].val;
		if (!m->s[i].key)
			return -1;
	}
}

/* Sets key (not 0) to val. */
void idmap_put(struct idmap *m, uint64_t key, int64_t val);
void idmap_del(struct idmap *m, uint64_t key);
void idmap_free(struct idmap *m);

#endif
