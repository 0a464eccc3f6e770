// SPDX-License-Identifier: MIT
/* One run of cuptrace diff read: its inputs opened and read once through
 * the reports diff compares (the driver of cuptrace stats, collect.c), and
 * a report of its own, the span: first to last event of each rank. */
#include "job/clocks.h"
#include "stats/collect.h"
#include "stats/diff.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* ---- the span of each rank */

struct span_rank {
	int64_t rank;
	uint64_t lo, hi; /* ns since the job's base */
};

struct span_st {
	struct span_rank *v;
	size_t n;
};

static void *span_begin(const struct stats_opts *opts)
{
	(void)opts;
	return xcalloc(1, sizeof(struct span_st));
}

static struct span_rank *span_of(struct span_st *s, int64_t rank)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].rank == rank)
			return &s->v[i];
	s->v = xrealloc(s->v, (s->n + 1) * sizeof *s->v);
	s->v[s->n] = (struct span_rank){rank, UINT64_MAX, 0};
	return &s->v[s->n++];
}

static void span_add(struct span_st *s, int64_t rank, uint64_t lo, uint64_t hi)
{
	struct span_rank *r = span_of(s, rank);
	r->lo = lo < r->lo ? lo : r->lo;
	r->hi = hi > r->hi ? hi : r->hi;
}

static void span_event(void *p, struct tfile *t, const struct m_event *ev)
{
	if (ev->type != ME_SLICE && ev->type != ME_ASYNC && ev->type != ME_INSTANT)
		return;
	uint64_t end = ev->end > ev->ts ? ev->end : ev->ts;
	span_add(p, t->shown_rank, ev->ts + (uint64_t)t->off_ns, end + (uint64_t)t->off_ns);
}

static void span_merge(void *p, void *part)
{
	struct span_st *q = part;
	for (size_t i = 0; i < q->n; i++)
		span_add(p, q->v[i].rank, q->v[i].lo, q->v[i].hi);
	free(q->v);
	free(q);
}

/* A file's spans as bytes for rank 0 (the ranks of an MPI job share the
 * files out only when every report can send its parts: collect.c). */
static void span_pack(void *part, struct pack *b)
{
	struct span_st *q = part;
	pk_array(b, q->v, q->n, sizeof *q->v);
}

static void *span_unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)p, (void)in;
	struct span_st *q = xcalloc(1, sizeof *q);
	q->v = up_array(b, &q->n, sizeof *q->v);
	return q;
}

#define SPAN_TITLE "diff_span: traced span per rank"

static int span_end(void *p, struct table **out)
{
	struct span_st *s = p;
	static const char *const cols[] = {"Rank", "Span (ns)"};
	out[0] = table_new(SPAN_TITLE, 2, cols);
	for (size_t i = 0; i < s->n; i++) {
		table_row(out[0]);
		table_i64(out[0], s->v[i].rank);
		table_u64(out[0], s->v[i].hi - s->v[i].lo);
	}
	free(s->v);
	free(s);
	return 1;
}

static const struct report report_span = {
    "diff_span",       "first to last event of each rank",
    span_begin,        span_event,
    span_end,          .merge = span_merge,
    .pack = span_pack, .unpack = span_unpack,
};

/* ---- a run */

static void take(void *ctx, int rep, struct table *t)
{
	struct diff_run *run = ctx;
	if (rep < 0) { /* the hosts' clocks: not compared */
		table_free(t);
		return;
	}
	run->v = xrealloc(run->v, (run->n + 1) * sizeof *run->v);
	run->v[run->n++] = t;
}

int diff_collect(char **args, int nargs, int strict, int jobs, const struct stats_opts *opts,
                 const char *steps_arg, struct diff_run *run)
{
	static const struct report *const reps[] = {
	    &report_nvtx_sum, &report_cuda_gpu_kern_sum, &report_cuda_api_sum, &report_nccl_sum,
	    &report_steps,    &report_breakdown,         &report_mpi_sum,      &report_torch_op_sum,
	    &report_span};
	memset(run, 0, sizeof *run);
	struct inputs in;
	if (inputs_open(&in, args, nargs, strict))
		return 1;
	run->nranks = in.nranks;
	int rc = reports_collect(&in, reps, sizeof reps / sizeof *reps, opts, ALIGN_AUTO, jobs,
	                         steps_arg, take, run);
	inputs_close(&in);
	for (size_t i = 0; i < run->n; i++) {
		const struct table *t = run->v[i];
		if (strcmp(table_title(t), SPAN_TITLE) || !table_nrows(t))
			continue;
		double sum = 0;
		for (size_t r = 0; r < table_nrows(t); r++)
			sum += table_num(t, r, 1);
		run->span_ns = sum / (double)table_nrows(t);
	}
	return rc;
}

void diff_run_free(struct diff_run *run)
{
	for (size_t i = 0; i < run->n; i++)
		table_free(run->v[i]);
	free(run->v);
	memset(run, 0, sizeof *run);
}
