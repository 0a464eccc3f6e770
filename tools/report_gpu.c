/* GPU reports of `cuptrace stats`, like `nsys stats`:
 *   cuda_gpu_kern_sum      time in each kernel (demangled name)
 *   cuda_gpu_mem_time_sum  time in memory copies and memsets, by operation
 *   cuda_api_sum           time in each CUDA runtime and driver call
 * Same columns as nvtx_sum; durations are kept to give exact medians. */
#include "gpu.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct dagg {
	char *key;
	uint64_t *d;
	size_t n, cap;
	uint64_t total, min, max;
};

struct dsum {
	const char *title, *count_col, *name_col;
	unsigned what; /* which report */
	struct dagg *v;
	size_t n, cap;
	size_t *index, icap;
	/* demangled names of the current file, by string id */
	const struct tfile *t;
	char **dm;
	size_t ndm;
};

enum { R_KERN, R_MEM, R_API };

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void reindex(struct dsum *st)
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

static void add(struct dsum *st, const char *key, uint64_t d)
{
	struct dagg *a = NULL;
	if (st->icap) {
		for (size_t i = hash_str(key) & (st->icap - 1); st->index[i];
		     i = (i + 1) & (st->icap - 1))
			if (!strcmp(st->v[st->index[i] - 1].key, key)) {
				a = &st->v[st->index[i] - 1];
				break;
			}
	}
	if (!a) {
		if (st->n == st->cap) {
			st->cap = st->cap ? st->cap * 2 : 64;
			st->v = realloc(st->v, st->cap * sizeof *st->v);
			if (!st->v)
				exit(1);
		}
		a = &st->v[st->n++];
		memset(a, 0, sizeof *a);
		a->key = strdup(key);
		a->min = UINT64_MAX;
		if (st->n * 2 > st->icap) {
			reindex(st);
		} else {
			size_t i = hash_str(key) & (st->icap - 1);
			while (st->index[i])
				i = (i + 1) & (st->icap - 1);
			st->index[i] = st->n;
		}
	}
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

static void forget_file(struct dsum *st)
{
	for (size_t i = 0; i < st->ndm; i++)
		free(st->dm[i]);
	free(st->dm);
	st->dm = NULL;
	st->ndm = 0;
}

/* The demangled name of a kernel (cached by string id per file). */
static const char *kernel_name(struct dsum *st, const struct tfile *t, const struct ct_event *ev,
                               unsigned i, char **tmp)
{
	size_t n;
	uint64_t sid = ev->v[i];
	if (sid < CT_SID_FIRST)
		return *tmp = gpu_demangle(ev->s[i], ev->sl[i], &n);
	if (st->t != t) {
		forget_file(st);
		st->t = t;
	}
	size_t k = sid - CT_SID_FIRST;
	if (k >= st->ndm) {
		size_t ncap = st->ndm ? st->ndm * 2 : 256;
		while (ncap <= k)
			ncap *= 2;
		st->dm = realloc(st->dm, ncap * sizeof *st->dm);
		if (!st->dm)
			exit(1);
		memset(st->dm + st->ndm, 0, (ncap - st->ndm) * sizeof *st->dm);
		st->ndm = ncap;
	}
	if (!st->dm[k])
		st->dm[k] = gpu_demangle(ev->s[i], ev->sl[i], &n);
	return st->dm[k];
}

static const char *copy_op(uint64_t kind)
{
	switch (kind) {
	case 1:
		return "[CUDA memcpy Host-to-Device]";
	case 2:
		return "[CUDA memcpy Device-to-Host]";
	case 8:
		return "[CUDA memcpy Device-to-Device]";
	case 9:
		return "[CUDA memcpy Host-to-Host]";
	case 10:
		return "[CUDA memcpy Peer-to-Peer]";
	default:
		return "[CUDA memcpy Array]";
	}
}

static void event(void *p, struct tfile *t, const struct ct_event *ev)
{
	struct dsum *st = p;
	const struct gpu_fields *f = gpu_fields();
	const uint64_t *v = ev->v;
	char *tmp = NULL;
	if (st->what == R_KERN && ev->kind == CT_EV_KERNEL) {
		uint64_t ts = v[f->k.ts], end = v[f->k.end];
		add(st, kernel_name(st, t, ev, f->k.name, &tmp), end > ts ? end - ts : 0);
	} else if (st->what == R_MEM && ev->kind == CT_EV_MEMCPY) {
		uint64_t ts = v[f->m.ts], end = v[f->m.end];
		add(st, copy_op(v[f->m.kind]), end > ts ? end - ts : 0);
	} else if (st->what == R_MEM && ev->kind == CT_EV_MEMSET) {
		uint64_t ts = v[f->s.ts], end = v[f->s.end];
		add(st, "[CUDA memset]", end > ts ? end - ts : 0);
	} else if (st->what == R_API && ev->kind == CT_EV_CUDA_API) {
		uint64_t ts = v[f->a.ts], end = v[f->a.end];
		char name[256];
		snprintf(name, sizeof name, "%.*s", (int)ev->sl[f->a.name], ev->s[f->a.name]);
		add(st, name, end > ts ? end - ts : 0);
	}
	free(tmp);
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static int cmp_total(const void *x, const void *y)
{
	const struct dagg *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->key, b->key);
}

static int end(void *p, struct table **out)
{
	struct dsum *st = p;
	if (!st->n) {
		/* no GPU data in these inputs: the report does not apply */
		forget_file(st);
		free(st->index);
		free(st);
		return 0;
	}
	const char *cols[] = {"Time (%)", "Total Time (ns)", st->count_col, "Avg (ns)",  "Med (ns)",
	                      "Min (ns)", "Max (ns)",        "StdDev (ns)", st->name_col};
	struct table *t = table_new(st->title, 9, cols);
	qsort(st->v, st->n, sizeof *st->v, cmp_total);
	uint64_t all = 0;
	for (size_t i = 0; i < st->n; i++)
		all += st->v[i].total;
	for (size_t i = 0; i < st->n; i++) {
		struct dagg *a = &st->v[i];
		qsort(a->d, a->n, sizeof *a->d, cmp_u64);
		double avg = (double)a->total / (double)a->n;
		double med = a->n % 2 ? (double)a->d[a->n / 2]
		                      : ((double)a->d[a->n / 2 - 1] + (double)a->d[a->n / 2]) / 2;
		double var = 0;
		for (size_t k = 0; k < a->n; k++)
			var += ((double)a->d[k] - avg) * ((double)a->d[k] - avg);
		table_row(t);
		table_f(t, all ? 100.0 * (double)a->total / (double)all : 0, 1);
		table_u64(t, a->total);
		table_u64(t, a->n);
		table_f(t, avg, 1);
		table_f(t, med, 1);
		table_u64(t, a->min);
		table_u64(t, a->max);
		table_f(t, a->n > 1 ? sqrt(var / (double)(a->n - 1)) : 0, 1);
		table_str(t, a->key);
		free(a->d);
		free(a->key);
	}
	forget_file(st);
	free(st->v);
	free(st->index);
	free(st);
	out[0] = t;
	return 1;
}

static void *make(unsigned what, const char *title, const char *count_col, const char *name_col)
{
	struct dsum *st = calloc(1, sizeof *st);
	if (!st)
		exit(1);
	st->what = what;
	st->title = title;
	st->count_col = count_col;
	st->name_col = name_col;
	return st;
}

static void *begin_kern(void)
{
	return make(R_KERN, "cuda_gpu_kern_sum: GPU kernel summary", "Instances", "Name");
}

static void *begin_mem(void)
{
	return make(R_MEM, "cuda_gpu_mem_time_sum: GPU memory operations by time", "Count",
	            "Operation");
}

static void *begin_api(void)
{
	return make(R_API, "cuda_api_sum: CUDA API summary", "Num Calls", "Name");
}

const struct report report_cuda_gpu_kern_sum = {
    "cuda_gpu_kern_sum", "time in each GPU kernel (demangled name)", begin_kern, NULL, event, end,
};
const struct report report_cuda_gpu_mem_time_sum = {
    "cuda_gpu_mem_time_sum",
    "time in GPU memory copies and memsets, by operation",
    begin_mem,
    NULL,
    event,
    end,
};
const struct report report_cuda_api_sum = {
    "cuda_api_sum", "time in each CUDA runtime and driver call", begin_api, NULL, event, end,
};
