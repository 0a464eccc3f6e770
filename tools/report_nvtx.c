/* nvtx_sum: time spent in each NVTX range (push/pop and start/end), like
 * `nsys stats --report nvtx_sum`. One row per range name; durations are
 * kept in full so the median is exact. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct agg {
	char *key;
	const char *style;
	uint64_t *d;
	size_t n, cap;
	uint64_t total, min, max;
};

struct nvtx_sum {
	struct agg *v;
	size_t n, cap;
	size_t *index; /* open addressing: hash -> v index + 1 */
	size_t icap;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void *begin(void)
{
	struct nvtx_sum *st = calloc(1, sizeof *st);
	if (!st)
		exit(1);
	return st;
}

static void reindex(struct nvtx_sum *st)
{
	free(st->index);
	st->icap = st->icap ? st->icap * 2 : 256;
	st->index = calloc(st->icap, sizeof *st->index);
	if (!st->index)
		exit(1);
	for (size_t k = 0; k < st->n; k++) {
		size_t i = hash_str(st->v[k].key) & (st->icap - 1);
		while (st->index[i])
			i = (i + 1) & (st->icap - 1);
		st->index[i] = k + 1;
	}
}

static struct agg *find(struct nvtx_sum *st, const char *key, const char *style)
{
	if (st->icap) {
		for (size_t i = hash_str(key) & (st->icap - 1); st->index[i]; i = (i + 1) & (st->icap - 1)) {
			struct agg *a = &st->v[st->index[i] - 1];
			if (!strcmp(a->key, key) && a->style == style)
				return a;
		}
	}
	if (st->n == st->cap) {
		st->cap = st->cap ? st->cap * 2 : 64;
		st->v = realloc(st->v, st->cap * sizeof *st->v);
		if (!st->v)
			exit(1);
	}
	struct agg *a = &st->v[st->n++];
	memset(a, 0, sizeof *a);
	a->key = strdup(key);
	a->style = style;
	a->min = UINT64_MAX;
	if (st->n * 2 > st->icap)
		reindex(st);
	else {
		size_t i = hash_str(key) & (st->icap - 1);
		while (st->index[i])
			i = (i + 1) & (st->icap - 1);
		st->index[i] = st->n;
	}
	return a;
}

void range_label(const struct span *s, char *buf, size_t len)
{
	if (s->domain.len)
		snprintf(buf, len, "%.*s:%.*s", (int)s->domain.len, s->domain.s, (int)s->name.len,
			 s->name.s);
	else
		snprintf(buf, len, "%.*s", (int)s->name.len, s->name.s);
}

static void span(void *p, struct tfile *t, const struct span *s)
{
	(void)t;
	struct nvtx_sum *st = p;
	char key[512];
	const char *style;
	if (s->kind == SP_RANGE)
		style = "PushPop";
	else if (s->kind == SP_ASYNC)
		style = "StartEnd";
	else if (s->kind == SP_STEP)
		style = "Step";
	else
		return;
	if (s->kind == SP_STEP)
		snprintf(key, sizeof key, "ProfilerStep");
	else
		range_label(s, key, sizeof key);
	struct agg *a = find(st, key, style);
	uint64_t d = s->end - s->ts;
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 16;
		a->d = realloc(a->d, a->cap * sizeof *a->d);
		if (!a->d)
			exit(1);
	}
	a->d[a->n++] = d;
	a->total += d;
	if (d < a->min)
		a->min = d;
	if (d > a->max)
		a->max = d;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static int cmp_total(const void *x, const void *y)
{
	const struct agg *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int end(void *p, struct table **out)
{
	struct nvtx_sum *st = p;
	static const char *cols[] = {"Time (%)", "Total Time (ns)", "Instances", "Avg (ns)",
				     "Med (ns)", "Min (ns)", "Max (ns)", "StdDev (ns)", "Style", "Range"};
	struct table *t = table_new("nvtx_sum: NVTX range summary", 10, cols);
	qsort(st->v, st->n, sizeof *st->v, cmp_total);
	uint64_t all = 0;
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->v[i].style, "Step"))
			all += st->v[i].total;
	for (size_t i = 0; i < st->n; i++) {
		struct agg *a = &st->v[i];
		qsort(a->d, a->n, sizeof *a->d, cmp_u64);
		double avg = (double)a->total / (double)a->n;
		double med = a->n % 2 ? (double)a->d[a->n / 2]
				      : ((double)a->d[a->n / 2 - 1] + (double)a->d[a->n / 2]) / 2;
		double var = 0;
		for (size_t k = 0; k < a->n; k++)
			var += ((double)a->d[k] - avg) * ((double)a->d[k] - avg);
		double sd = a->n > 1 ? sqrt(var / (double)(a->n - 1)) : 0;
		int is_step = !strcmp(a->style, "Step");
		table_row(t);
		table_f(t, is_step || !all ? 0 : 100.0 * (double)a->total / (double)all, 1);
		table_u64(t, a->total);
		table_u64(t, a->n);
		table_f(t, avg, 1);
		table_f(t, med, 1);
		table_u64(t, a->min);
		table_u64(t, a->max);
		table_f(t, sd, 1);
		table_str(t, a->style);
		table_str(t, a->key);
		free(a->d);
		free(a->key);
	}
	free(st->v);
	free(st->index);
	free(st);
	out[0] = t;
	return 1;
}

const struct report report_nvtx_sum = {
	"nvtx_sum", "time in each NVTX range (Time %, total, instances, avg, median, min, max, stddev)",
	begin, span, NULL, end,
};
