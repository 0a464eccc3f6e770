// SPDX-License-Identifier: MIT
/* GPU reports of `cuptrace stats`, like `nsys stats`:
 *   cuda_gpu_kern_sum      time in each kernel (demangled name)
 *   cuda_gpu_mem_time_sum  time in memory copies and memsets, by operation
 *   cuda_api_sum           time in each CUDA runtime and driver call
 * Same columns as nvtx_sum; durations are kept to give exact medians. */
#include "stats/durations.h"
#include "stats/named.h"
#include "stats/quant.h"
#include "stats/stats.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct dsum {
	const char *title, *count_col, *name_col;
	unsigned what; /* which report */
	struct durations d;
};

enum { R_KERN, R_MEM, R_API };

/* Adds a duration under a name that is not NUL-terminated. */
static void add_sref(struct dsum *st, const struct sref *r, uint64_t d)
{
	char buf[512], *key = r->len < sizeof buf ? buf : xmalloc(r->len + 1);
	memcpy(key, r->s, r->len);
	key[r->len] = 0;
	dur_add(&st->d, key, NULL, d);
	if (key != buf)
		free(key);
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

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	struct dsum *st = p;
	(void)t;
	if (ev->type != ME_SLICE)
		return;
	uint64_t d = ev->end > ev->ts ? ev->end - ev->ts : 0;
	if (st->what == R_KERN && ev->cat == MC_KERNEL)
		add_sref(st, &ev->gpu.name, d);
	else if (st->what == R_MEM && ev->cat == MC_MEMCPY)
		dur_add(&st->d, copy_op(ev->gpu.kind), NULL, d);
	else if (st->what == R_MEM && ev->cat == MC_MEMSET)
		dur_add(&st->d, "[CUDA memset]", NULL, d);
	else if (st->what == R_API && (ev->cat == MC_RUNTIME || ev->cat == MC_DRIVER))
		add_sref(st, &ev->api.name, d);
}

static void drop(void *part)
{
	dur_free(&((struct dsum *)part)->d);
	free(part);
}

static void merge(void *p, void *part)
{
	struct dsum *st = part;
	dur_merge(&((struct dsum *)p)->d, &st->d);
	free(st);
}

static void pack(void *part, struct pack *b)
{
	dur_pack(&((struct dsum *)part)->d, b, NULL);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct dsum *st = p, *part = xcalloc(1, sizeof *part);
	*part = (struct dsum){st->title, st->count_col, st->name_col, st->what, {0}};
	dur_unpack(&part->d, b, NULL);
	return part;
}

static int end(void *p, struct table **out)
{
	struct dsum *st = p;
	int n = 0;
	/* no GPU data in these inputs: the report does not apply */
	if (st->d.n)
		out[n++] = dur_table(&st->d, st->title, st->count_col, st->name_col, 0, NULL);
	free(st);
	return n;
}

static void *make(unsigned what, const char *title, const char *count_col, const char *name_col)
{
	struct dsum *st = xcalloc(1, sizeof *st);
	st->what = what;
	st->title = title;
	st->count_col = count_col;
	st->name_col = name_col;
	return st;
}

static void *begin_kern(const struct stats_opts *opts)
{
	(void)opts;
	return make(R_KERN, "cuda_gpu_kern_sum: GPU kernel summary", "Instances", "Name");
}

static void *begin_mem(const struct stats_opts *opts)
{
	(void)opts;
	return make(R_MEM, "cuda_gpu_mem_time_sum: GPU memory operations by time", "Count",
	            "Operation");
}

static void *begin_api(const struct stats_opts *opts)
{
	(void)opts;
	return make(R_API, "cuda_api_sum: CUDA API summary", "Num Calls", "Name");
}

const struct report report_cuda_gpu_kern_sum = {
    "cuda_gpu_kern_sum", "time in each GPU kernel (demangled name)", begin_kern, event, end,
    .merge = merge, .pack = pack, .unpack = unpack, .drop = drop,
};
const struct report report_cuda_gpu_mem_time_sum = {
    "cuda_gpu_mem_time_sum",
    "time in GPU memory copies and memsets, by operation",
    begin_mem,
    event,
    end,
    .merge = merge, .pack = pack, .unpack = unpack, .drop = drop,
};
const struct report report_cuda_api_sum = {
    "cuda_api_sum", "time in each CUDA runtime and driver call", begin_api, event, end,
    .merge = merge, .pack = pack, .unpack = unpack, .drop = drop,
};

/* ---- cuda_gpu_mem_size_sum: bytes per memory operation (MB = 10^6 B) */

struct msz {
	uint64_t min, max;
	struct moments m; /* n, total bytes */
	struct quant q;
};

struct msize {
	const struct stats_opts *opts;
	struct named by;
};

static void *begin_size(const struct stats_opts *opts)
{
	struct msize *m = xcalloc(1, sizeof *m);
	m->opts = opts;
	named_init(&m->by, sizeof(struct msz));
	return m;
}

static void event_size(void *p, struct tfile *t, const struct m_event *ev)
{
	(void)t;
	struct msize *m = p;
	if (ev->type != ME_SLICE || (ev->cat != MC_MEMCPY && ev->cat != MC_MEMSET))
		return;
	const char *op = ev->cat == MC_MEMSET ? "[CUDA memset]" : copy_op(ev->gpu.kind);
	struct msz *a = named_get(&m->by, op, strlen(op));
	uint64_t b = ev->gpu.bytes;
	if (!a->m.n || b < a->min)
		a->min = b;
	if (b > a->max)
		a->max = b;
	moments_add(&a->m, b);
	quant_add(&a->q, (int64_t)b);
}

static void merge_msz(void *into, void *from)
{
	struct msz *a = into, *b = from;
	if (b->m.n && (!a->m.n || b->min < a->min))
		a->min = b->min;
	if (b->max > a->max)
		a->max = b->max;
	moments_merge(&a->m, &b->m);
	quant_merge(&a->q, &b->q);
}

static void pack_msz(void *rec, struct pack *b)
{
	quant_pack(&((struct msz *)rec)->q, b);
}

static void unpack_msz(void *rec, struct pack *b)
{
	quant_unpack(&((struct msz *)rec)->q, b);
}

static void pack_size(void *part, struct pack *b)
{
	named_pack(&((struct msize *)part)->by, b, pack_msz);
}

static void *unpack_size(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct msize *m = begin_size(((struct msize *)p)->opts);
	named_unpack(&m->by, b, unpack_msz);
	return m;
}

static void merge_size(void *p, void *part)
{
	struct msize *m = part;
	named_merge(&((struct msize *)p)->by, &m->by, merge_msz);
	free(m);
}

struct sorder {
	size_t i;
	uint64_t total;
	const char *name;
};

static int cmp_sorder(const void *x, const void *y)
{
	const struct sorder *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int end_size(void *p, struct table **out)
{
	struct msize *m = p;
	if (!m->by.n && !m->opts->explicit_list) {
		named_free(&m->by);
		free(m);
		return 0;
	}
	static const char *const C[] = {"Total (MB)", "Count",	     "Avg (MB)",    "Med (MB)",
	                                "Min (MB)",   "Max (MB)",    "StdDev (MB)", "Operation"};
	struct table *t = table_new("cuda_gpu_mem_size_sum: GPU memory operations by size", 8, C);
	struct sorder *o = xcalloc(m->by.n, sizeof *o);
	for (size_t i = 0; i < m->by.n; i++)
		o[i] = (struct sorder){i, ((struct msz *)m->by.v[i])->m.sum, m->by.keys[i]};
	qsort(o, m->by.n, sizeof *o, cmp_sorder);
	for (size_t k = 0; k < m->by.n; k++) {
		struct msz *a = m->by.v[o[k].i];
		table_row(t);
		table_f(t, (double)a->m.sum / 1e6, 3);
		table_u64(t, a->m.n);
		table_f(t, (double)a->m.sum / (double)a->m.n / 1e6, 3);
		table_f(t, quant_median(&a->q) / 1e6, 3);
		table_f(t, (double)a->min / 1e6, 3);
		table_f(t, (double)a->max / 1e6, 3);
		table_f(t, moments_stddev(&a->m) / 1e6, 3);
		table_str(t, o[k].name);
		quant_free(&a->q);
	}
	if (!m->by.n)
		table_note(t, "(no memory copies or memsets in the inputs)");
	free(o);
	named_free(&m->by);
	free(m);
	out[0] = t;
	return 1;
}

const struct report report_cuda_gpu_mem_size_sum = {
    "cuda_gpu_mem_size_sum", "bytes of GPU memory copies and memsets, by operation (MB = 10^6 B)",
    begin_size, event_size, end_size,
    .merge = merge_size, .pack = pack_size, .unpack = unpack_size,
};
