// SPDX-License-Identifier: MIT
/* Medians in bounded memory: values are kept exactly up to QUANT_EXACT of
 * them (the median is then exact); beyond, they fold into a log histogram
 * with 128 steps per power of two (the median is then within 0.4% of the
 * true one). Values are signed (a launch latency may be negative). */
#ifndef CT_QUANT_H
#define CT_QUANT_H

#include <stddef.h>
#include <stdint.h>

#define QUANT_EXACT 4096

struct quant {
	int64_t *v; /* exact values while n <= QUANT_EXACT (or exact) */
	size_t n, cap;
	size_t exact; /* 0: QUANT_EXACT; set before the first value */
	uint32_t *hist; /* [2][QUANT_BUCKETS]: negative, non-negative; NULL while exact */
};

void quant_add(struct quant *q, int64_t x);
/* The median (mean of the two middle values for an even count); 0 when empty. */
double quant_median(struct quant *q);
void quant_free(struct quant *q);
/* Adds src's values to dst, as if added after dst's, and frees src. */
void quant_merge(struct quant *dst, struct quant *src);
/* q as bytes for another process (util/pack.h), and back: unpack makes q
 * anew, whatever its fields held (a record read back as bytes). */
struct pack;
void quant_pack(const struct quant *q, struct pack *b);
void quant_unpack(struct quant *q, struct pack *b);

/* Sums for an exact standard deviation whatever the order of the values
 * (so that parts of the inputs merge to the same figure). */
__extension__ typedef unsigned __int128 sumsq_t;
struct moments {
	uint64_t n, sum;
	sumsq_t sumsq;
};
static inline void moments_add(struct moments *m, uint64_t x)
{
	m->n++;
	m->sum += x;
	m->sumsq += (sumsq_t)x * x;
}
static inline void moments_merge(struct moments *dst, const struct moments *src)
{
	dst->n += src->n;
	dst->sum += src->sum;
	dst->sumsq += src->sumsq;
}
/* The sample standard deviation (n - 1); 0 for fewer than 2 values. */
double moments_stddev(const struct moments *m);

#endif
