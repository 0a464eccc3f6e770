// SPDX-License-Identifier: MIT
#include "stats/quant.h"
#include "util/pack.h"
#include "util/xalloc.h"

#include <math.h>
#include <string.h>

#define SUB 128 /* steps per power of two */
#define QUANT_BUCKETS (SUB + 57 * SUB)

/* Magnitudes below SUB have a bucket each; above, bucket (e, top 7 bits
 * after the leading one). */
static size_t bucket(uint64_t m)
{
	if (m < SUB)
		return (size_t)m;
	unsigned e = 63u - (unsigned)__builtin_clzll(m); /* >= 7 */
	return (size_t)(e - 6) * SUB + (size_t)((m >> (e - 7)) & (SUB - 1));
}

/* The middle of a bucket's magnitudes. */
static double middle(size_t b)
{
	if (b < SUB)
		return (double)b;
	unsigned e = (unsigned)(b / SUB) + 6;
	double lo = (double)((uint64_t)(SUB + b % SUB) << (e - 7));
	return lo + (double)(1ull << (e - 7)) / 2 - 0.5;
}

static void hist_add(struct quant *q, int64_t x)
{
	uint64_t m = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
	q->hist[(x >= 0) * QUANT_BUCKETS + bucket(m)]++;
}

static void to_hist(struct quant *q)
{
	q->hist = xcalloc(2 * QUANT_BUCKETS, sizeof *q->hist);
	for (size_t i = 0; i < q->n; i++)
		hist_add(q, q->v[i]);
	free(q->v);
	q->v = NULL;
	q->cap = 0;
}

void quant_add(struct quant *q, int64_t x)
{
	if (q->hist) {
		hist_add(q, x);
		q->n++;
		return;
	}
	if (q->n == (q->exact ? q->exact : QUANT_EXACT)) {
		to_hist(q);
		hist_add(q, x);
		q->n++;
		return;
	}
	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 8;
		q->v = xrealloc(q->v, q->cap * sizeof *q->v);
	}
	q->v[q->n++] = x;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The value of rank r (from 0) in the histogram. */
static double hist_rank(const struct quant *q, size_t r)
{
	size_t seen = 0;
	for (size_t b = QUANT_BUCKETS; b-- > 0;) { /* negatives, largest magnitude first */
		seen += q->hist[b];
		if (seen > r)
			return -middle(b);
	}
	for (size_t b = 0; b < QUANT_BUCKETS; b++) {
		seen += q->hist[QUANT_BUCKETS + b];
		if (seen > r)
			return middle(b);
	}
	return 0;
}

double quant_median(struct quant *q)
{
	if (!q->n)
		return 0;
	if (q->hist)
		return (hist_rank(q, (q->n - 1) / 2) + hist_rank(q, q->n / 2)) / 2;
	qsort(q->v, q->n, sizeof *q->v, cmp_i64);
	return ((double)q->v[(q->n - 1) / 2] + (double)q->v[q->n / 2]) / 2;
}

void quant_free(struct quant *q)
{
	size_t exact = q->exact;
	free(q->v);
	free(q->hist);
	memset(q, 0, sizeof *q);
	q->exact = exact;
}

/* The histogram's counts do not depend on the order of the values, nor on
 * when the exact values were folded into it. */
void quant_merge(struct quant *dst, struct quant *src)
{
	if (!src->hist) {
		for (size_t i = 0; i < src->n; i++)
			quant_add(dst, src->v[i]);
	} else {
		if (!dst->hist)
			to_hist(dst);
		for (size_t b = 0; b < 2 * QUANT_BUCKETS; b++)
			dst->hist[b] += src->hist[b];
		dst->n += src->n;
	}
	quant_free(src);
}

double moments_stddev(const struct moments *m)
{
	if (m->n < 2)
		return 0;
	/* n * sum(x^2) - sum(x)^2 = n (n - 1) variance: exact while it fits
	 * in 128 bits (values below 2^44 and fewer than 2^30 of them); beyond,
	 * in long double. */
	sumsq_t s = m->sum, n = m->n;
	long double num;
	if (m->sumsq <= ~(sumsq_t)0 / n && s * s <= n * m->sumsq)
		num = (long double)(n * m->sumsq - s * s);
	else
		num = (long double)m->sumsq * (long double)m->n - (long double)m->sum * (long double)m->sum;
	if (num < 0)
		num = 0;
	return sqrt((double)(num / ((long double)m->n * (long double)(m->n - 1))));
}

void quant_pack(const struct quant *q, struct pack *b)
{
	pk_u64(b, q->n);
	pk_u64(b, q->exact);
	pk_u64(b, q->hist != NULL);
	if (q->hist)
		pk_bytes(b, q->hist, 2 * QUANT_BUCKETS * sizeof *q->hist);
	else
		pk_bytes(b, q->v, q->n * sizeof *q->v);
}

void quant_unpack(struct quant *q, struct pack *b)
{
	memset(q, 0, sizeof *q);
	size_t n = (size_t)up_u64(b);
	q->exact = (size_t)up_u64(b);
	int hist = (int)up_u64(b);
	size_t bytes = hist ? 2 * QUANT_BUCKETS * sizeof *q->hist : n * sizeof *q->v;
	if (b->bad || bytes > b->n - b->at) {
		b->bad = 1;
		return;
	}
	if (hist) {
		q->hist = xcalloc(2 * QUANT_BUCKETS, sizeof *q->hist);
		up_bytes(b, q->hist, bytes);
	} else if (n) {
		q->v = xmalloc(bytes);
		q->cap = n;
		up_bytes(b, q->v, bytes);
	}
	q->n = n;
}
