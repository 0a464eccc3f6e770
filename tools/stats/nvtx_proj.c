// SPDX-License-Identifier: MIT
/* nvtx_gpu_proj_sum: per NVTX push/pop range name, the GPU time of the work
 * launched inside it (the model's NVTX GPU projection, MC_GPU_ANNOTATION:
 * one part per stream, handed out in a row): a range instance's projection
 * runs from its first GPU operation's start to its last one's end, over
 * all streams. Columns as `nsys stats --report nvtx_gpu_proj_sum`; the
 * number of child ranges is not known here (null). */
#include "stats/named.h"
#include "stats/quant.h"
#include "stats/stats.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct pr {
	uint64_t range, ops, min, max, lvl;
	struct moments m; /* n, total projection */
	struct quant q;
};

struct np {
	const struct stats_opts *opts;
	struct named by;
	/* the instance being put together from its parts */
	uint64_t ts, end, ops;
};

static void *begin(const struct stats_opts *opts)
{
	struct np *p = xcalloc(1, sizeof *p);
	p->opts = opts;
	named_init(&p->by, sizeof(struct pr));
	return p;
}

static void event(void *ctx, struct tfile *t, const struct m_event *ev)
{
	(void)t;
	struct np *p = ctx;
	/* An unfinished range (no end of its own) is left out, as nvtx_sum
	 * leaves it out. */
	if (ev->type != ME_SLICE || ev->cat != MC_GPU_ANNOTATION || ev->span->unfinished ||
	    ev->annot.torch) /* a record_function scope's: not NVTX */
		return;
	if (ev->annot.part == 0 || ev->ts < p->ts)
		p->ts = ev->ts;
	if (ev->annot.part == 0 || ev->end > p->end)
		p->end = ev->end;
	p->ops = (ev->annot.part == 0 ? 0 : p->ops) + ev->annot.ops;
	if (ev->annot.part + 1 < ev->annot.nparts)
		return;
	const struct span *s = ev->span;
	char label[512];
	nvtx_range_label(s, label, sizeof label);
	struct pr *a = named_get(&p->by, label, strlen(label));
	uint64_t d = p->end - p->ts;
	if (!a->m.n || d < a->min)
		a->min = d;
	if (d > a->max)
		a->max = d;
	moments_add(&a->m, d);
	a->range += ev->annot.range_end > ev->annot.range_ts ? ev->annot.range_end - ev->annot.range_ts
	                                                      : 0;
	a->ops += p->ops;
	a->lvl += (uint64_t)s->depth;
	quant_add(&a->q, (int64_t)d);
}

static void merge_pr(void *into, void *from)
{
	struct pr *a = into, *b = from;
	if (b->m.n && (!a->m.n || b->min < a->min))
		a->min = b->min;
	if (b->max > a->max)
		a->max = b->max;
	moments_merge(&a->m, &b->m);
	a->range += b->range;
	a->ops += b->ops;
	a->lvl += b->lvl;
	quant_merge(&a->q, &b->q);
}

/* A range's parts come in a row inside one file: a part of the inputs
 * holds no instance half put together at its end. */
static void merge(void *ctx, void *part)
{
	struct np *p = part;
	named_merge(&((struct np *)ctx)->by, &p->by, merge_pr);
	free(p);
}

static void pack_pr(void *rec, struct pack *b)
{
	quant_pack(&((struct pr *)rec)->q, b);
}

static void unpack_pr(void *rec, struct pack *b)
{
	quant_unpack(&((struct pr *)rec)->q, b);
}

/* A part holds no instance half put together (merge's comment). */
static void pack(void *part, struct pack *b)
{
	named_pack(&((struct np *)part)->by, b, pack_pr);
}

static void *unpack(void *ctx, struct pack *b, struct inputs *in)
{
	(void)in;
	struct np *p = begin(((struct np *)ctx)->opts);
	named_unpack(&p->by, b, unpack_pr);
	return p;
}

struct order {
	size_t i;
	uint64_t total;
	const char *name;
};

static int cmp(const void *x, const void *y)
{
	const struct order *a = x, *b = y;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int end(void *ctx, struct table **out)
{
	struct np *p = ctx;
	if (!p->by.n && !p->opts->explicit_list) {
		named_free(&p->by);
		free(p);
		return 0;
	}
	static const char *const C[] = {
	    "Range",           "Style",          "Total Proj Time (ns)", "Total Range Time (ns)",
	    "Range Instances", "Proj Avg (ns)",  "Proj Med (ns)",        "Proj Min (ns)",
	    "Proj Max (ns)",   "Proj StdDev (ns)", "Total GPU Ops",      "Avg GPU Ops",
	    "Avg Range Lvl",   "Avg Num Child"};
	struct table *t = table_new("nvtx_gpu_proj_sum: NVTX range GPU projection summary", 14, C);
	struct order *o = xcalloc(p->by.n, sizeof *o);
	for (size_t i = 0; i < p->by.n; i++)
		o[i] = (struct order){i, ((struct pr *)p->by.v[i])->m.sum, p->by.keys[i]};
	qsort(o, p->by.n, sizeof *o, cmp);
	for (size_t k = 0; k < p->by.n; k++) {
		struct pr *a = p->by.v[o[k].i];
		double n = (double)a->m.n;
		table_row(t);
		table_str(t, o[k].name);
		table_str(t, "PushPop");
		table_u64(t, a->m.sum);
		table_u64(t, a->range);
		table_u64(t, a->m.n);
		table_f(t, (double)a->m.sum / n, 1);
		table_f(t, quant_median(&a->q), 1);
		table_u64(t, a->min);
		table_u64(t, a->max);
		table_f(t, moments_stddev(&a->m), 1);
		table_u64(t, a->ops);
		table_f(t, (double)a->ops / n, 1);
		table_f(t, (double)a->lvl / n, 1);
		table_null(t);
		quant_free(&a->q);
	}
	if (!p->by.n)
		table_note(t, "(no NVTX push/pop range launched GPU work in the inputs)");
	free(o);
	named_free(&p->by);
	free(p);
	out[0] = t;
	return 1;
}

const struct report report_nvtx_gpu_proj_sum = {
    "nvtx_gpu_proj_sum", "GPU time of the work launched inside each NVTX range (projection)",
    begin, event, end,
    .merge = merge, .pack = pack, .unpack = unpack,
};
