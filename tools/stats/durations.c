// SPDX-License-Identifier: MIT
#include "stats/durations.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static struct dur_agg *find(struct durations *s, const char *key, const char *style)
{
	uint64_t h = hash_str(key);
	h += !h; /* hmap's key 0 is reserved */
	size_t first = (uintptr_t)hmap_get(&s->index, h);
	for (size_t i = first; i; i = s->v[i - 1].next) {
		struct dur_agg *a = &s->v[i - 1];
		if (a->style == style && !strcmp(a->key, key))
			return a;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	struct dur_agg *a = &s->v[s->n++];
	memset(a, 0, sizeof *a);
	a->key = xstrdup(key);
	a->style = style;
	a->min = UINT64_MAX;
	a->next = first;
	hmap_put(&s->index, h, (void *)(uintptr_t)s->n);
	return a;
}

void dur_add(struct durations *s, const char *key, const char *style, uint64_t d)
{
	struct dur_agg *a = find(s, key, style);
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->d = xrealloc(a->d, a->cap * sizeof *a->d);
	}
	a->d[a->n++] = d;
	a->total += d;
	a->sumsq += (sumsq_t)d * d;
	if (d < a->min)
		a->min = d;
	if (d > a->max)
		a->max = d;
}

void dur_free(struct durations *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].d);
		free(s->v[i].key);
	}
	free(s->v);
	hmap_free(&s->index);
	memset(s, 0, sizeof *s);
}

void dur_merge(struct durations *dst, struct durations *src)
{
	for (size_t i = 0; i < src->n; i++) {
		struct dur_agg *s = &src->v[i], *a = find(dst, s->key, s->style);
		if (a->n + s->n > a->cap) {
			a->cap = a->n + s->n;
			a->d = xrealloc(a->d, a->cap * sizeof *a->d);
		}
		memcpy(a->d + a->n, s->d, s->n * sizeof *s->d);
		a->n += s->n;
		a->total += s->total;
		a->sumsq += s->sumsq;
		if (s->min < a->min)
			a->min = s->min;
		if (s->max > a->max)
			a->max = s->max;
		free(s->d);
		free(s->key);
	}
	free(src->v);
	hmap_free(&src->index);
	memset(src, 0, sizeof *src);
}

void dur_pack(const struct durations *s, struct pack *b, const char *const *styles)
{
	pk_u64(b, s->n);
	for (size_t i = 0; i < s->n; i++) {
		const struct dur_agg *a = &s->v[i];
		uint64_t style = 0;
		for (size_t k = 0; a->style && styles && styles[k]; k++)
			if (styles[k] == a->style)
				style = k + 1;
		pk_str(b, a->key);
		pk_u64(b, style);
		pk_u64(b, a->n);
		pk_bytes(b, a->d, a->n * sizeof *a->d);
	}
}

void dur_unpack(struct durations *s, struct pack *b, const char *const *styles)
{
	uint64_t n = up_u64(b);
	for (uint64_t i = 0; i < n && !b->bad; i++) {
		char *key = up_str(b);
		uint64_t style = up_u64(b), nd = up_u64(b);
		if (!key || nd > (b->n - b->at) / sizeof(uint64_t)) {
			b->bad = 1;
			free(key);
			return;
		}
		struct dur_agg *a = find(s, key, style && styles ? styles[style - 1] : NULL);
		free(key);
		for (uint64_t k = 0; k < nd; k++) {
			uint64_t d;
			UP(b, d);
			dur_add(s, a->key, a->style, d);
		}
	}
}

static void swap(uint64_t *v, size_t i, size_t j)
{
	uint64_t t = v[i];
	v[i] = v[j], v[j] = t;
}

/* The k-th smallest of v[0..n) (from 0), v reordered so that nothing
 * before v[k] is larger: selection by three-way partitions around the
 * median of three (linear time on the data seen here; equal values, as
 * durations often are, end a round at once). */
static uint64_t select_k(uint64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		uint64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
		uint64_t p = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		/* v[lo..lt) < p, v[lt..i) == p, v(gt..hi] > p; p is in the range,
		 * so gt never passes below lt */
		size_t lt = lo, i = lo, gt = hi;
		while (i <= gt) {
			if (v[i] < p)
				swap(v, lt++, i++);
			else if (v[i] > p)
				swap(v, i, gt--);
			else
				i++;
		}
		if (k < lt)
			hi = lt - 1;
		else if (k > gt)
			lo = gt + 1;
		else
			return p;
	}
	return v[k];
}

static double median_of(uint64_t *v, size_t n)
{
	uint64_t hi = select_k(v, n, n / 2);
	if (n % 2)
		return (double)hi;
	uint64_t lo = v[0]; /* the largest of v[0..n/2) */
	for (size_t i = 1; i < n / 2; i++)
		lo = v[i] > lo ? v[i] : lo;
	return ((double)lo + (double)hi) / 2;
}

static int cmp_total(const void *x, const void *y)
{
	const struct dur_agg *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->key, b->key);
}

struct table *dur_table(struct durations *s, const char *title, const char *count_col,
			const char *name_col, int with_style,
			int (*in_total)(const struct dur_agg *a))
{
	const char *cols[] = {"Time (%)", "Total Time (ns)", count_col, "Avg (ns)", "Med (ns)",
			      "Min (ns)", "Max (ns)",	     "StdDev (ns)", "Style",   name_col};
	if (!with_style)
		cols[8] = name_col;
	struct table *t = table_new(title, with_style ? 10 : 9, cols);
	if (s->n > 1) /* (an empty report has no array at all) */
		qsort(s->v, s->n, sizeof *s->v, cmp_total);
	uint64_t all = 0;
	for (size_t i = 0; i < s->n; i++)
		if (!in_total || in_total(&s->v[i]))
			all += s->v[i].total;
	for (size_t i = 0; i < s->n; i++) {
		struct dur_agg *a = &s->v[i];
		double avg = (double)a->total / (double)a->n;
		double med = median_of(a->d, a->n);
		struct moments m = {a->n, a->total, a->sumsq};
		int counted = !in_total || in_total(a);
		table_row(t);
		if (counted) /* rows left out of the total (steps) have no share: blank */
			table_f(t, all ? 100.0 * (double)a->total / (double)all : 0, 1);
		else
			table_null(t);
		table_u64(t, a->total);
		table_u64(t, a->n);
		table_f(t, avg, 1);
		table_f(t, med, 1);
		table_u64(t, a->min);
		table_u64(t, a->max);
		table_f(t, moments_stddev(&m), 1);
		if (with_style)
			table_str(t, a->style ? a->style : "");
		table_str(t, a->key);
		table_take_samples(t, i, a->d, a->n); /* for cuptrace diff's test */
		free(a->key);
	}
	free(s->v);
	hmap_free(&s->index);
	memset(s, 0, sizeof *s);
	return t;
}
