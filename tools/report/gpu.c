/* GPU reports of `cuptrace stats`, like `nsys stats`:
 *   cuda_gpu_kern_sum      time in each kernel (demangled name)
 *   cuda_gpu_mem_time_sum  time in memory copies and memsets, by operation
 *   cuda_api_sum           time in each CUDA runtime and driver call
 * Same columns as nvtx_sum; durations are kept to give exact medians. */
#include "report/durations.h"
#include "read/gpu.h"
#include "report/stats.h"

#include <stdlib.h>
#include <string.h>

struct dsum {
	const char *title, *count_col, *name_col;
	unsigned what; /* which report */
	struct durations d;
	/* demangled names of the current file, by string id */
	const struct tfile *t;
	char **dm;
	size_t ndm;
};

enum { R_KERN, R_MEM, R_API };

static void add(struct dsum *st, const char *key, uint64_t d)
{
	dur_add(&st->d, key, NULL, d);
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

static int end(void *p, struct table **out)
{
	struct dsum *st = p;
	int n = 0;
	/* no GPU data in these inputs: the report does not apply */
	if (st->d.n)
		out[n++] = dur_table(&st->d, st->title, st->count_col, st->name_col, 0, NULL);
	forget_file(st);
	free(st);
	return n;
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
