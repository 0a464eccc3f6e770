// SPDX-License-Identifier: MIT
/* --ranks slowest:N and the cut of the piece (piece_slow.h). The rule:
 * where collectives were matched across ranks (nccl_skew, else mpi_skew),
 * the N ranks that imposed the most wait on the others ("Wait Imposed":
 * at each collective, the rank that arrived last is charged the waits of
 * all the others), ties by the larger total lateness, then the lower
 * rank; for contrast, of the other ranks, the one least late in total
 * (ties: the lower rank). Without collectives, the N ranks with the
 * longest average step (steps) and the one with the shortest. With
 * --steps, the figures are those of those steps; --window does not change
 * them (stats has no window). Then the kept files' windows, with --steps
 * read on the driver's workers. */
#include "stats/piece_slow.h"
#include "job/clocks.h"
#include "job/drive.h"
#include "stats/collect.h"
#include "util/mpirt.h"
#include "util/pack.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The per-rank table of each report run. */
struct got {
	struct table *t[3];
};

static const struct report *const slow_reports[] = {&report_nccl_skew, &report_mpi_skew,
                                                    &report_steps};

static void take(void *ctx, int rep, struct table *t)
{
	struct got *g = ctx;
	if (rep >= 0 && !g->t[rep]) /* each report's first table: per rank */
		g->t[rep] = t;
	else
		table_free(t);
}

struct cand {
	int64_t rank;
	double slow, tie; /* larger: slower */
	double fast;      /* smaller: faster */
};

static int cmp_slow(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->slow != b->slow)
		return a->slow > b->slow ? -1 : 1;
	if (a->tie != b->tie)
		return a->tie > b->tie ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static double num(const struct table *t, size_t r, const char *col)
{
	double v = table_num(t, r, table_find_col(t, col));
	return isnan(v) ? 0 : v;
}

/* The ranks of t as candidates, slowest first: slow by column a (ties:
 * b), fast by column f. */
static struct cand *cands(const struct table *t, const char *a, const char *b, const char *f,
                          size_t *n)
{
	*n = table_nrows(t);
	struct cand *c = xcalloc(*n + 1, sizeof *c);
	for (size_t r = 0; r < *n; r++)
		c[r] = (struct cand){(int64_t)num(t, r, "Rank"), num(t, r, a), b ? num(t, r, b) : 0,
		                     num(t, r, f)};
	qsort(c, *n, sizeof *c, cmp_slow);
	return c;
}

/* An MPI job's ranks read their shares of the files for the reports
 * (collect.c) and rank 0 alone has the tables: its choice (and the rule
 * said) goes to every rank, which all convert the same files. */
static void agree(const struct inputs *in, struct piece *p, uint8_t *keep, int *rc)
{
	if (mpirt_size() < 2)
		return;
	struct pack b = {0};
	if (!mpirt_rank()) {
		pk_u64(&b, (uint64_t)(int64_t)*rc);
		pk_str(&b, p->rule);
		pk_bytes(&b, keep, in->n);
	}
	void *buf = b.b;
	size_t n = b.n;
	if (mpirt_bcast(&buf, &n)) {
		*rc = -1;
	} else if (mpirt_rank()) {
		struct pack r = {.b = buf, .n = n};
		*rc = (int)(int64_t)up_u64(&r);
		char *rule = up_str(&r);
		snprintf(p->rule, sizeof p->rule, "%s", rule ? rule : "");
		free(rule);
		up_bytes(&r, keep, in->n);
		if (r.bad)
			*rc = -1;
		pk_free(&r);
	}
	pk_free(&b);
}

/* Runs the reports over every file (rewound after) and chooses. */
static int slowest(struct inputs *in, struct piece *p, int jobs, uint8_t *keep)
{
	struct stats_opts o = {.steps = p->steps_arg != NULL, .step_lo = p->step_lo,
	                       .step_hi = p->step_hi};
	struct got g = {{NULL, NULL, NULL}};
	int rc = reports_collect(in, slow_reports, 3, &o, ALIGN_NONE, jobs, p->steps_arg, take, &g);
	for (size_t i = 0; i < in->n; i++)
		if (inputs_rewind(in, i))
			rc = -1;
	const struct table *t = NULL;
	const char *by = NULL, *fast_col = NULL, *tie = NULL;
	for (int k = 0; k < 2 && !t; k++)
		if (g.t[k] && table_nrows(g.t[k]) && table_find_col(g.t[k], "Wait Imposed (ns)") >= 0)
			t = g.t[k], by = k ? "wait imposed at MPI collectives (mpi_skew)"
			                   : "wait imposed at collectives (nccl_skew)",
			tie = fast_col = "Total Lateness (ns)";
	if (!t && g.t[2] && table_nrows(g.t[2]))
		t = g.t[2], by = "average step (steps)", fast_col = "Avg (ns)";
	if (rc >= 0 && !t) {
		say_cmd("--ranks %s: no collective was matched across ranks and no rank has steps: "
		        "nothing says which ranks are slow",
		        p->ranks_arg);
		rc = -1;
	}
	if (rc >= 0) {
		size_t n;
		struct cand *c = cands(t, tie ? "Wait Imposed (ns)" : "Avg (ns)", tie, fast_col, &n);
		size_t slow = (size_t)p->slowest < n ? (size_t)p->slowest : n;
		size_t fast = n; /* of the others: the least fast, the lower rank */
		for (size_t k = slow; k < n; k++)
			if (fast == n || c[k].fast < c[fast].fast ||
			    (c[k].fast == c[fast].fast && c[k].rank < c[fast].rank))
				fast = k;
		char list[160] = "";
		size_t o2 = 0;
		for (size_t k = 0; k < slow && o2 < sizeof list; k++)
			o2 += (size_t)snprintf(list + o2, sizeof list - o2, "%s%" PRId64, k ? "," : "",
			                       c[k].rank);
		snprintf(p->rule, sizeof p->rule, "slowest %zu by %s: %s%s", slow, by, list,
		         fast < n ? "; the fastest for contrast: " : "");
		if (fast < n)
			snprintf(p->rule + strlen(p->rule), sizeof p->rule - strlen(p->rule),
			         "%" PRId64, c[fast].rank);
		for (size_t i = 0; i < in->n; i++)
			for (size_t k = 0; k < n; k++)
				if ((k < slow || k == fast) && c[k].rank == in->v[i].shown_rank)
					keep[i] = 1;
		free(c);
	}
	for (int k = 0; k < 3; k++)
		if (g.t[k])
			table_free(g.t[k]);
	agree(in, p, keep, &rc);
	return rc < 0 ? -1 : 0;
}

/* The windows of the kept files: with --steps, a pass over each file's
 * step marks, on the driver's workers (a file's open hook does it and
 * leaves the file unread by the model). */
struct wins {
	struct inputs *in;
	const struct piece *p;
	_Atomic size_t none;
	_Atomic int bad;
};

static int window_open(void *arg, struct drive_file *f)
{
	struct wins *w = arg;
	int rc = piece_window(w->in, w->p, f->index);
	if (rc < 0)
		atomic_store(&w->bad, 1);
	else
		atomic_fetch_add(&w->none, (size_t)rc);
	return 1;
}

static const struct m_consumer no_consumer = {NULL, NULL, NULL};

static int windows(struct inputs *in, struct piece *p, int jobs)
{
	struct wins w = {.in = in, .p = p};
	if (p->steps_arg && !p->steps_elsewhere) {
		struct drive_ops ops = {.consumer = &no_consumer, .arg = &w, .open = window_open};
		struct drive_how how = {.jobs = jobs};
		drive(in, &ops, &how);
	} else {
		for (size_t i = 0; i < in->n; i++) /* no file to read */
			piece_window(in, p, i);
	}
	if (atomic_load(&w.bad))
		return -1;
	return piece_windows_done(in, p, atomic_load(&w.none));
}

int piece_apply(struct inputs *in, struct piece *p, int jobs)
{
	uint8_t *keep = xcalloc(in->n + 1, 1);
	int rc = 0;
	if (p->slowest)
		rc = slowest(in, p, jobs, keep);
	else
		for (size_t i = 0; i < in->n; i++)
			keep[i] = (uint8_t)piece_listed(p, &in->v[i]);
	if (!rc)
		rc = piece_leave_out(in, p, keep);
	free(keep);
	return rc ? rc : windows(in, p, jobs);
}
