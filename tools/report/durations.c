#include "report/durations.h"
#include "util/xalloc.h"

#include <math.h>
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
	a->key = strdup(key);
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
	if (d < a->min)
		a->min = d;
	if (d > a->max)
		a->max = d;
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

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
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
		qsort(a->d, a->n, sizeof *a->d, cmp_u64);
		double avg = (double)a->total / (double)a->n;
		double med = a->n % 2 ? (double)a->d[a->n / 2]
				      : ((double)a->d[a->n / 2 - 1] + (double)a->d[a->n / 2]) / 2;
		double var = 0;
		for (size_t k = 0; k < a->n; k++)
			var += ((double)a->d[k] - avg) * ((double)a->d[k] - avg);
		int counted = !in_total || in_total(a);
		table_row(t);
		table_f(t, counted && all ? 100.0 * (double)a->total / (double)all : 0, 1);
		table_u64(t, a->total);
		table_u64(t, a->n);
		table_f(t, avg, 1);
		table_f(t, med, 1);
		table_u64(t, a->min);
		table_u64(t, a->max);
		table_f(t, a->n > 1 ? sqrt(var / (double)(a->n - 1)) : 0, 1);
		if (with_style)
			table_str(t, a->style ? a->style : "");
		table_str(t, a->key);
		free(a->d);
		free(a->key);
	}
	free(s->v);
	hmap_free(&s->index);
	memset(s, 0, sizeof *s);
	return t;
}
