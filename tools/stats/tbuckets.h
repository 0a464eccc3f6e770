// SPDX-License-Identifier: MIT
/* Time in fixed-width buckets on the job's timeline, from time 0: a
 * bounded number of buckets whose width doubles (pairs merge) when a later
 * time comes, so that any length of trace fits in TB_MAX buckets and every
 * width is TB_BASE_NS x 2^k (buckets of different widths merge exactly). */
#ifndef CT_TBUCKETS_H
#define CT_TBUCKETS_H

#include <stdint.h>

#define TB_MAX 200
#define TB_BASE_NS 1000ull

struct tbuckets {
	uint64_t width; /* ns; 0 until the first add */
	unsigned n;	/* buckets in use: [0, n * width) */
	uint64_t v[TB_MAX];
};

/* Adds the length of [a, b) to the buckets it meets. */
void tb_add(struct tbuckets *t, uint64_t a, uint64_t b);
/* Widens t to width (a width of t times a power of two). */
void tb_widen(struct tbuckets *t, uint64_t width);

#endif
