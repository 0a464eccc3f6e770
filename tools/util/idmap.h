// SPDX-License-Identifier: MIT
/* A map from 64-bit ids to 32-bit indices, for ids that are counters
 * (above a few low bits of type code) handed out in blocks, as the NCCL
 * source's handles are, and of which only a recent window is held at any
 * time. An id first goes to its slot in a direct-mapped table (slot =
 * counter modulo the table's size): consecutive ids lie in consecutive
 * slots, so the ids of recent records share cache lines, a lookup is one
 * load and a delete one store. An id whose slot holds another id (the
 * held ids span more counters than the table, or the ids are not
 * counters) goes to a hash map that keeps runs of 8 ids in one bucket.
 * Any ids work; counters are only faster. Key 0 is reserved. */
#ifndef CT_IDMAP_H
#define CT_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap_slot {
	uint64_t key;
	int64_t val;
};

struct idmap {
	struct idmap_slot *d; /* direct: slot (key >> shift) & (dcap - 1) */
	size_t dcap;          /* a power of two, or 0 until the first put */
	struct idmap_slot *s; /* overflow: ids whose direct slot was taken */
	size_t n, cap;        /* cap: a power of two, or 0 */
	unsigned shift; /* low bits of an id that are not part of its run (a type code) */
};

/* Slots of the direct table (2^17: the NCCL join holds ids of up to about
 * 100k consecutive counters). */
#define IDMAP_DIRECT (1u << 17)

/* Overflow slot of key: runs of 8 ids share a bucket. */
static inline size_t idmap_home(const struct idmap *m, uint64_t key)
{
	uint64_t g = key >> m->shift, b = g >> 3;
	b ^= b >> 33;
	b *= 0xff51afd7ed558ccdull;
	b ^= b >> 33;
	return (size_t)(b << 3 | (g & 7)) & (m->cap - 1);
}

static inline struct idmap_slot *idmap_direct(const struct idmap *m, uint64_t key)
{
	return &m->d[(key >> m->shift) & (m->dcap - 1)];
}

int64_t idmap_get_overflow(const struct idmap *m, uint64_t key);

/* The value under key, or -1. */
static inline int64_t idmap_get(const struct idmap *m, uint64_t key)
{
	if (!m->dcap)
		return -1;
	const struct idmap_slot *s = idmap_direct(m, key);
	if (s->key == key)
		return s->val;
	return m->n ? idmap_get_overflow(m, key) : -1;
}

/* Sets key (not 0) to val. */
void idmap_put(struct idmap *m, uint64_t key, int64_t val);
void idmap_del(struct idmap *m, uint64_t key);
/* Forgets every key (keeps the tables). */
void idmap_clear(struct idmap *m);
void idmap_free(struct idmap *m);

#endif
