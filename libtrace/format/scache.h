// SPDX-License-Identifier: MIT
/* The encoder's cache of short strings it interned before: their id
 * without hashing the bytes, probing the string table and comparing with
 * memcmp (together ~30 % of the writer's CPU per NVTX event without it).
 * Direct-mapped on the string's first 24 bytes read as three words; a miss
 * costs only the intern it stands in front of. */
#ifndef CT_SCACHE_H
#define CT_SCACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CT_SCACHE_MAX 24 /* longest string cached, bytes */
#define CT_SCACHE_N   256

struct ct_scache {
	uint64_t w[3]; /* the bytes, zero after the string's end */
	uint32_t len; /* 0: empty */
	uint32_t sid;
};

/* The key of s[0..n) into w, or 0 when s cannot be cached: empty, longer
 * than CT_SCACHE_MAX, or whole words from s would pass `end` (strings in
 * ring records start on a word and records end on one, so a record's
 * last string may be read by words up to its padding, which is masked). */
static inline int ct_scache_key(const char *s, uint32_t n, const char *end, uint64_t w[3])
{
	if (n == 0 || n > CT_SCACHE_MAX || (size_t)(end - s) < ((n + 7u) & ~7u))
		return 0;
	w[0] = w[1] = w[2] = 0;
	for (unsigned i = 0; i < 3; i++)
		if (8 * i < n)
			memcpy(&w[i], s + 8 * i, 8);
	if (n & 7) /* keep the string's bytes of the last word */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		w[(n - 1) / 8] &= ~0ull >> (64 - 8 * (n & 7));
#else
		w[(n - 1) / 8] &= ~0ull << (64 - 8 * (n & 7));
#endif
	return 1;
}

static inline struct ct_scache *ct_scache_slot(struct ct_scache *c, const uint64_t w[3],
					       uint32_t n)
{
	uint64_t h = (w[0] ^ (w[1] * 0x9e3779b97f4a7c15ull) ^ (w[2] * 0xc2b2ae3d27d4eb4full) ^ n) *
		     0xff51afd7ed558ccdull;
	return &c[h >> 56]; /* the top 8 bits: CT_SCACHE_N is 256 */
}

static inline int ct_scache_hit(const struct ct_scache *e, const uint64_t w[3], uint32_t n)
{
	return e->len == n && e->w[0] == w[0] && e->w[1] == w[1] && e->w[2] == w[2];
}

#endif
