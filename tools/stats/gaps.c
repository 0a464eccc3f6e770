// SPDX-License-Identifier: MIT
/* gpu_gaps: the idle gaps of each GPU longer than --min-gap (default
 * 1 ms): per GPU their count and total, and the GAPS_TOP longest with what
 * the CPU was running when each began: the innermost NVTX range or CUDA
 * call, on the thread that launched the work that ended the gap, at the
 * gap's start (model/cpu_at.h answers; the launch flow names the thread).
 * Idle is the time between the union of the GPU's work (busy.c), from its
 * first work's start to its last work's end. */
#include "model/cpu_at.h"
#include "read/gpu_fields.h"
#include "stats/busy.h"
#include "stats/stats.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64
#define GAPS_TOP 10

struct gap {
	uint64_t a, b;
	int64_t tid;
	int known, is_call;
	char name[CPU_AT_NAME];
};

struct ggpu {
	uint64_t device;
	struct busy *busy;
	uint64_t count, total;
	struct gap top[GAPS_TOP]; /* longest first */
	unsigned ntop;
	int64_t last_tid; /* the last launching thread known on this GPU */
	struct gg *gg;
};

struct grow { /* a GPU's results, kept after its file */
	int64_t rank;
	uint64_t device, count, total;
	int64_t off;
	struct gap top[GAPS_TOP];
	unsigned ntop;
};

struct gg {
	const struct stats_opts *opts;
	uint64_t min_gap;
	struct tfile *t;
	int kernels; /* its NCCL GPU time is its NCCL kernels' (breakdown.c) */
	struct cpu_at *cpu;
	struct ggpu gpus[MAX_GPUS];
	unsigned ngpu;
	int staged;
	struct {
		const struct m_track *tr;
		struct ggpu *g;
		uint64_t ts, end;
	} st;
	struct grow *rows;
	size_t nrows, caprows;
	struct busy_late late; /* work the sweep had passed, all files */
};

static void on_seg(void *ctx, uint64_t a, uint64_t b, unsigned mask, const struct busy_iv *next)
{
	struct ggpu *g = ctx;
	struct gg *gg = g->gg;
	if (mask || !next || b - a < gg->min_gap || b == a)
		return;
	g->count++;
	g->total += b - a;
	if (g->ntop == GAPS_TOP && g->top[GAPS_TOP - 1].b - g->top[GAPS_TOP - 1].a >= b - a)
		return;
	struct gap x = {a, b, next->tid ? next->tid : g->last_tid, 0, 0, ""};
	struct cpu_range r;
	if (x.tid && cpu_at_query(gg->cpu, x.tid, a, &r)) {
		x.known = 1, x.is_call = r.is_call;
		memcpy(x.name, r.name, sizeof x.name);
	}
	unsigned i = g->ntop < GAPS_TOP ? g->ntop++ : GAPS_TOP - 1;
	while (i && g->top[i - 1].b - g->top[i - 1].a < b - a) {
		g->top[i] = g->top[i - 1];
		i--;
	}
	g->top[i] = x;
}

static struct ggpu *gpu_of(struct gg *gg, uint64_t device)
{
	for (unsigned i = 0; i < gg->ngpu; i++)
		if (gg->gpus[i].device == device)
			return &gg->gpus[i];
	if (gg->ngpu == MAX_GPUS)
		return &gg->gpus[MAX_GPUS - 1];
	struct ggpu *g = &gg->gpus[gg->ngpu++];
	memset(g, 0, sizeof *g);
	g->device = device, g->gg = gg;
	g->busy = busy_new(on_seg, g);
	return g;
}

static void unstage(struct gg *gg, int64_t tid)
{
	if (!gg->staged)
		return;
	gg->staged = 0;
	struct ggpu *g = gg->st.g;
	if (tid)
		g->last_tid = tid;
	busy_add(g->busy, gg->st.tr, gg->st.ts, gg->st.end, BUSY_COMPUTE, tid);
}

static void end_file(struct gg *gg)
{
	if (!gg->t)
		return;
	unstage(gg, 0);
	for (unsigned i = 0; i < gg->ngpu; i++) {
		struct ggpu *g = &gg->gpus[i];
		busy_finish(g->busy);
		struct busy_late l = busy_late(g->busy);
		gg->late.n += l.n, gg->late.ns += l.ns;
		busy_free(g->busy);
		if (gg->nrows == gg->caprows) {
			gg->caprows = gg->caprows ? gg->caprows * 2 : 16;
			gg->rows = xrealloc(gg->rows, gg->caprows * sizeof *gg->rows);
		}
		struct grow *r = &gg->rows[gg->nrows++];
		r->rank = gg->t->shown_rank, r->device = g->device, r->off = gg->t->off_ns;
		r->count = g->count, r->total = g->total, r->ntop = g->ntop;
		memcpy(r->top, g->top, sizeof r->top);
	}
	cpu_at_free(gg->cpu);
	gg->cpu = NULL;
	gg->ngpu = 0;
	gg->t = NULL;
}

static void *begin(const struct stats_opts *opts)
{
	struct gg *gg = xcalloc(1, sizeof *gg);
	gg->opts = opts;
	gg->min_gap = opts->min_gap;
	return gg;
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	struct gg *gg = p;
	if (gg->t != t) {
		end_file(gg);
		gg->t = t;
		gg->kernels = gpu_file_records_kernels(&t->f);
		gg->cpu = cpu_at_new();
	}
	if (gg->staged) {
		int64_t tid = 0;
		if (ev->type == ME_FLOW && ev->cat == MC_LAUNCH && ev->flow.to == gg->st.tr &&
		    ev->flow.to_ts == gg->st.ts)
			tid = ev->track->tid;
		unstage(gg, tid);
	}
	if (ev->type != ME_SLICE)
		return;
	switch (ev->cat) {
	case MC_KERNEL:
	case MC_MEMCPY:
	case MC_MEMSET:
		/* waits for its launch flow, which comes next when its call came first */
		gg->staged = 1;
		gg->st.tr = ev->track, gg->st.g = gpu_of(gg, ev->gpu.device);
		gg->st.ts = ev->ts, gg->st.end = ev->end;
		break;
	case MC_NCCL_GPU: {
		if (gg->kernels) /* only where CUPTI records no kernels (breakdown.c) */
			break;
		const struct nccl_plan *pl = ev->nccl.plan;
		uint64_t dev = pl && pl->has_kernel ? pl->kernel.device : 0;
		busy_add(gpu_of(gg, dev)->busy, ev->track, ev->ts, ev->end, BUSY_COMM, 0);
		break;
	}
	default:
		cpu_at_event(gg->cpu, ev);
	}
}

/* Rows are per file: a part's come after those of the files before. */
static void merge(void *p, void *part)
{
	struct gg *gg = p, *q = part;
	end_file(q);
	for (size_t i = 0; i < q->nrows; i++) {
		if (gg->nrows == gg->caprows) {
			gg->caprows = gg->caprows ? gg->caprows * 2 : 16;
			gg->rows = xrealloc(gg->rows, gg->caprows * sizeof *gg->rows);
		}
		gg->rows[gg->nrows++] = q->rows[i];
	}
	gg->late.n += q->late.n, gg->late.ns += q->late.ns;
	free(q->rows);
	free(q);
}

/* A file's part, its rows made (end_file: merge's own call finds it done). */
static void pack(void *part, struct pack *b)
{
	struct gg *q = part;
	end_file(q);
	pk_array(b, q->rows, q->nrows, sizeof *q->rows);
	PK(b, q->late);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct gg *q = begin(((struct gg *)p)->opts);
	q->rows = up_array(b, &q->nrows, sizeof *q->rows);
	q->caprows = q->nrows;
	UP(b, q->late);
	return q;
}

static int cmp_row(const void *x, const void *y)
{
	const struct grow *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->device < b->device ? -1 : a->device > b->device;
}

static int end(void *p, struct table **out)
{
	struct gg *gg = p;
	end_file(gg);
	if (!gg->nrows && !gg->opts->explicit_list) {
		free(gg);
		return 0;
	}
	if (gg->nrows > 1)
		qsort(gg->rows, gg->nrows, sizeof *gg->rows, cmp_row);
	/* The title is the JSON key: --min-gap is said in the note, so that
	 * the key stays the same whatever the option */
	char note[80 + BUSY_LATE_NOTE];
	int len = snprintf(note, sizeof note, "gaps of at least %llu ns (--min-gap)",
	                   (unsigned long long)gg->min_gap);
	if (gg->late.n) { /* the gaps may be too long or too many */
		memcpy(note + len, "; ", 3);
		busy_late_note(note + len + 2, sizeof note - (size_t)len - 2, gg->late);
	}
	static const char *const C1[] = {"Rank", "GPU", "Gaps", "Total (ns)", "Avg (ns)", "Max (ns)"};
	struct table *a = table_new("gpu_gaps: GPU idle gaps per GPU", 6, C1);
	static const char *const C2[] = {"Rank",      "GPU",        "Start (ns)", "Duration (ns)",
	                                 "CPU Range", "Range Kind", "Thread"};
	struct table *b = table_new("gpu_gaps: the longest gaps per GPU, with the CPU range running "
	                            "when each began", 7, C2);
	for (size_t i = 0; i < gg->nrows; i++) {
		const struct grow *r = &gg->rows[i];
		table_row(a);
		table_i64(a, r->rank);
		table_u64(a, r->device);
		table_u64(a, r->count);
		table_u64(a, r->total);
		if (r->count) {
			table_f(a, (double)r->total / (double)r->count, 1);
			table_u64(a, r->top[0].b - r->top[0].a);
		} else {
			table_null(a), table_null(a);
		}
		for (unsigned k = 0; k < r->ntop; k++) {
			const struct gap *g = &r->top[k];
			table_row(b);
			table_i64(b, r->rank);
			table_u64(b, r->device);
			table_i64(b, (int64_t)g->a + r->off);
			table_u64(b, g->b - g->a);
			if (g->known) {
				table_str(b, g->name);
				table_str(b, g->is_call ? "CUDA" : "NVTX");
			} else {
				table_null(b), table_null(b);
			}
			if (g->tid)
				table_i64(b, g->tid);
			else
				table_null(b);
		}
	}
	uint64_t any = 0;
	for (size_t i = 0; i < gg->nrows; i++)
		any += gg->rows[i].count;
	table_note(a, gg->nrows ? note : "(no GPU kernels, copies or memsets in the inputs)");
	if (!any)
		table_note(b, "(no gap that long)");
	free(gg->rows);
	free(gg);
	out[0] = a, out[1] = b;
	return 2;
}

const struct report report_gpu_gaps = {
    "gpu_gaps", "GPU idle gaps longer than --min-gap (default 1 ms), with the CPU range running",
    begin, event, end,
    .merge = merge, .pack = pack, .unpack = unpack,
};
