// SPDX-License-Identifier: MIT
/* steps: how long each step took on each rank, and which rank made each
 * step slow. A step is a cuptrace_step() mark to the next one, or the
 * NVTX range that CUPTRACE_STEP_RANGE names (the model's MC_STEP slices;
 * a step still open at the end of the file is not counted). With
 * --flops-per-step N: achieved TFLOP/s per GPU = N / step time. */
#include "stats/stats.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct one {
	int64_t rank, step;
	uint64_t ns;
};

struct st {
	const struct stats_opts *opts;
	struct one *v;
	size_t n, cap;
};

static void *begin(const struct stats_opts *opts)
{
	struct st *s = xcalloc(1, sizeof *s);
	s->opts = opts;
	return s;
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	if (ev->cat != MC_STEP || ev->type != ME_SLICE || ev->span->unfinished)
		return;
	struct st *s = p;
	int64_t step = (int64_t)ev->span->id;
	const struct stats_opts *o = s->opts;
	if (o->steps && (step < o->step_lo || step > o->step_hi))
		return;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	s->v[s->n++] = (struct one){t->shown_rank, step, ev->end - ev->ts};
}

static void merge(void *p, void *part)
{
	struct st *s = p, *q = part;
	if (s->n + q->n > s->cap) {
		s->cap = s->n + q->n;
		s->v = xrealloc(s->v, s->cap * sizeof *s->v);
	}
	if (q->n)
		memcpy(s->v + s->n, q->v, q->n * sizeof *q->v);
	s->n += q->n;
	free(q->v);
	free(q);
}

static void drop(void *part)
{
	free(((struct st *)part)->v);
	free(part);
}

static void pack(void *part, struct pack *b)
{
	struct st *q = part;
	pk_array(b, q->v, q->n, sizeof *q->v);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct st *q = begin(((struct st *)p)->opts);
	q->v = up_array(b, &q->n, sizeof *q->v);
	q->cap = q->n;
	return q;
}

static int cmp_rank_ns(const void *x, const void *y)
{
	const struct one *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->ns < b->ns ? -1 : a->ns > b->ns;
}

static int cmp_step_ns(const void *x, const void *y)
{
	const struct one *a = x, *b = y;
	if (a->step != b->step)
		return a->step < b->step ? -1 : 1;
	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static int cmp_rank_step(const void *x, const void *y)
{
	const struct one *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->step < b->step ? -1 : a->step > b->step;
}

/* Median of v[0..n) sorted by ns. */
static double median(const struct one *v, size_t n)
{
	return n % 2 ? (double)v[n / 2].ns : ((double)v[n / 2 - 1].ns + (double)v[n / 2].ns) / 2;
}

/* TFLOP/s of flops in ns nanoseconds, or null. */
static void tflops(struct table *t, double flops, double ns)
{
	if (flops > 0 && ns > 0)
		table_f(t, flops / ns / 1e3, 3);
	else
		table_null(t);
}

static int end(void *p, struct table **out)
{
	struct st *s = p;
	double flops = s->opts->flops_per_step;
	if (!s->n && !s->opts->explicit_list) { /* not asked for by name: nothing */
		free(s);
		return 0;
	}
	static const char *c1[] = {"Rank",     "Steps",    "Total Time (ns)", "Avg (ns)",
	                           "Med (ns)", "Min (ns)", "Max (ns)",        "StdDev (ns)",
	                           "TFLOP/s"};
	struct table *t1 = table_new("steps: step duration per rank", 9, c1);
	if (s->n > 1)
		qsort(s->v, s->n, sizeof *s->v, cmp_rank_ns);
	for (size_t i = 0, j; i < s->n; i = j) {
		uint64_t total = 0;
		for (j = i; j < s->n && s->v[j].rank == s->v[i].rank; j++)
			total += s->v[j].ns;
		size_t n = j - i;
		double avg = (double)total / (double)n, var = 0;
		for (size_t k = i; k < j; k++)
			var += ((double)s->v[k].ns - avg) * ((double)s->v[k].ns - avg);
		table_row(t1);
		table_i64(t1, s->v[i].rank);
		table_u64(t1, n);
		table_u64(t1, total);
		table_f(t1, avg, 1);
		table_f(t1, median(s->v + i, n), 1);
		table_u64(t1, s->v[i].ns);
		table_u64(t1, s->v[j - 1].ns);
		table_f(t1, n > 1 ? sqrt(var / (double)(n - 1)) : 0, 1);
		tflops(t1, flops * (double)n, (double)total);
		uint64_t *d = xcalloc(n, sizeof *d); /* the rank's steps, for cuptrace diff */
		for (size_t k = i; k < j; k++)
			d[k - i] = s->v[k].ns;
		table_take_samples(t1, table_nrows(t1) - 1, d, n);
	}
	static const char *c2[] = {"Step",     "Ranks",        "Med (ns)",  "Max (ns)",
	                           "Slowest Rank", "Lead (ns)", "TFLOP/s"};
	struct table *t2 = table_new("steps: slowest rank per step", 7, c2);
	if (s->n > 1)
		qsort(s->v, s->n, sizeof *s->v, cmp_step_ns);
	for (size_t i = 0, j; i < s->n; i = j) {
		for (j = i; j < s->n && s->v[j].step == s->v[i].step; j++)
			;
		size_t n = j - i;
		/* The slowest: the longest; of equals, the lowest rank. */
		size_t w = j - 1;
		while (w > i && s->v[w - 1].ns == s->v[j - 1].ns)
			w--;
		double med = median(s->v + i, n);
		table_row(t2);
		table_i64(t2, s->v[i].step);
		table_u64(t2, n);
		table_f(t2, med, 1);
		table_u64(t2, s->v[w].ns);
		table_i64(t2, s->v[w].rank);
		table_f(t2, (double)s->v[w].ns - med, 1);
		tflops(t2, flops, (double)s->v[w].ns);
	}
	int nt = 2;
	if (s->opts->by_step) {
		/* --by step: every (rank, step), for the report's lines per rank. */
		static const char *c3[] = {"Rank", "Step", "Duration (ns)"};
		struct table *t3 = table_new("steps: duration per rank and step", 3, c3);
		if (s->n > 1)
			qsort(s->v, s->n, sizeof *s->v, cmp_rank_step);
		for (size_t i = 0; i < s->n; i++) {
			table_row(t3);
			table_i64(t3, s->v[i].rank);
			table_i64(t3, s->v[i].step);
			table_u64(t3, s->v[i].ns);
		}
		if (!s->n)
			table_note(t3, "no complete step");
		out[nt++] = t3;
	}
	if (!s->n) {
		const char *why = "no complete step (steps come from cuptrace_step() or "
		                  "CUPTRACE_STEP_RANGE; a step still open at the end is not counted)";
		table_note(t1, why);
		table_note(t2, why);
	}
	free(s->v);
	free(s);
	out[0] = t1;
	out[1] = t2;
	return nt;
}

const struct report report_steps = {
	"steps",
	"step duration per rank (count, avg, median, min, max, stddev, TFLOP/s); slowest rank per step;\n"
	"               with --by step, every step of every rank",
	begin, event, end, NULL, 1,
	.merge = merge, .pack = pack, .unpack = unpack, .drop = drop,
};
