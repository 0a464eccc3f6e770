// SPDX-License-Identifier: MIT
/* The sections of the report page (html.h), each drawn from the tables
 * of one or more reports: bars, lines and heat maps whose marks quote the
 * cells they show, and the tables themselves. */
#include "write/html/html.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 60 /* columns of a chart over steps; more steps share one */
#define MAX_CELLS 4000 /* of a heat map (past MAX_LINES rows): the page stays small */
#define MAX_LINES 16 /* ranks drawn as lines; more: a heat map */
#define TOP 15

const struct table *tabs_get(const struct tabs *t, const char *prefix)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strncmp(table_title(t->v[i]), prefix, strlen(prefix)))
			return t->v[i];
	return NULL;
}

static int64_t num_or(const struct table *t, size_t r, int c, int64_t dflt)
{
	double v = table_num(t, r, c);
	return isnan(v) ? dflt : (int64_t)v;
}

/* The row of t with the largest value in column c (ties: the first), or -1. */
static long argmax(const struct table *t, int c)
{
	long best = -1;
	for (size_t r = 0; c >= 0 && r < table_nrows(t); r++) {
		double v = table_num(t, r, c);
		if (!isnan(v) && (best < 0 || v > table_num(t, (size_t)best, c)))
			best = (long)r;
	}
	return best;
}

const char *html_hang_verdict(const struct tabs *all)
{
	const struct table *v = tabs_get(all, "nccl_hang: verdict");
	const char *s = v && table_nrows(v) ? table_cell(v, 0, 0, NULL) : NULL;
	return s && (!strncmp(s, "hang: ", 6) || !strncmp(s, "mismatch: ", 10)) ? s : NULL;
}

/* The rank the hang's verdict says never arrived ("hang: rank R never
 * arrived at ..."; of several, the first), or -1. */
static long never_arrived(const struct tabs *all)
{
	const char *s = html_hang_verdict(all), *p;
	if (!s)
		return -1;
	if (!strncmp(s, "hang: rank ", 11))
		p = s + 11;
	else if (!strncmp(s, "hang: ranks ", 12))
		p = s + 12;
	else
		return -1;
	char *e;
	long r = strtol(p, &e, 10);
	return e != p && r >= 0 && strstr(e, " never arrived at ") ? r : -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The row of column c's largest value when it stands out: at least
 * `factor` times the median of the other rows' (a balanced job's ranks
 * differ by noise, and the largest of noise is not a slowest rank);
 * else -1. */
static long stands_out(const struct table *t, int c, double factor)
{
	long best = t ? argmax(t, c) : -1;
	size_t n = t ? table_nrows(t) : 0;
	if (best < 0 || n < 2)
		return -1;
	double *o = xcalloc(n, sizeof *o);
	size_t k = 0;
	for (size_t r = 0; r < n; r++) {
		double v = table_num(t, r, c);
		if (r != (size_t)best && !isnan(v))
			o[k++] = v;
	}
	qsort(o, k, sizeof *o, cmp_double); /* the median of the others */
	double med = !k ? 0 : k % 2 ? o[k / 2] : (o[k / 2 - 1] + o[k / 2]) / 2;
	double max = table_num(t, (size_t)best, c);
	free(o);
	return max > 0 && max >= factor * med ? best : -1;
}

/* How long the job ran, for a wait to be measured against: the median
 * rank's breakdown window, else its steps' total; 0 when neither is known. */
static double job_window(const struct tabs *all)
{
	const struct table *t = tabs_get(all, "breakdown: summary over ranks");
	for (size_t i = 0; t && i < table_nrows(t); i++)
		if (!strcmp(table_cell(t, i, 0, NULL), "Window (ns)"))
			return num_or(t, i, table_find_col(t, "Median"), 0);
	t = tabs_get(all, "steps: step duration per rank");
	long r = t ? argmax(t, table_find_col(t, "Total Time (ns)")) : -1;
	return r >= 0 ? num_or(t, (size_t)r, table_find_col(t, "Total Time (ns)"), 0) : 0;
}

long html_slowest_rank(const struct tabs *all, const char **why)
{
	/* The rank the others wait for: in a hang, the one that never arrived
	 * (nccl_hang; the others' waits at earlier collectives say less);
	 * else at collectives, the one that imposed the most wait
	 * (nccl_skew); else the longest average step; else the most compute
	 * (breakdown's summary). */
	long r = never_arrived(all);
	if (r >= 0) {
		*why = "never arrived at the collective where the job hangs (nccl_hang)";
		return r;
	}
	if (html_hang_verdict(all)) /* a hang or mismatch no one rank caused: the rest is noise */
		return -1;
	/* Each only where one rank stands out from the others: twice their
	 * median wait imposed, and 1 % of the job's time (a balanced job's
	 * ranks imposed a few ms in 1.6 s, one twice another's); 5 % longer
	 * steps; 10 % more compute. */
	const struct table *t = tabs_get(all, "nccl_skew: arrival at collectives per rank");
	int wc = t ? table_find_col(t, "Wait Imposed (ns)") : -1;
	r = t ? stands_out(t, wc, 2.0) : -1;
	if (r >= 0 && table_num(t, (size_t)r, wc) >= 0.01 * job_window(all)) {
		*why = "slowest: imposed the most wait at collectives (nccl_skew)";
		return (long)num_or(t, (size_t)r, table_find_col(t, "Rank"), -1);
	}
	t = tabs_get(all, "steps: step duration per rank");
	r = t ? stands_out(t, table_find_col(t, "Avg (ns)"), 1.05) : -1;
	if (r >= 0) {
		*why = "slowest: longest average step (steps)";
		return (long)num_or(t, (size_t)r, table_find_col(t, "Rank"), -1);
	}
	t = tabs_get(all, "breakdown: summary over ranks");
	for (size_t i = 0; t && i < table_nrows(t); i++)
		if (!strcmp(table_cell(t, i, 0, NULL), "Compute (ns)") &&
		    table_num(t, i, table_find_col(t, "Max")) >
		        1.1 * table_num(t, i, table_find_col(t, "Median"))) {
			*why = "slowest: the most compute (breakdown)";
			return (long)num_or(t, i, table_find_col(t, "Rank of Max"), -1);
		}
	return -1;
}

void html_draw_tables(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)all;
	for (size_t i = 0; i < own->n; i++)
		html_table(f, own->v[i], NULL, 0);
}

/* The first n rows of t (all when fewer). */
static void table_top(FILE *f, const struct table *t, size_t n)
{
	size_t all = table_nrows(t), k = all < n ? all : n;
	size_t *rows = xcalloc(k + 1, sizeof *rows);
	for (size_t i = 0; i < k; i++)
		rows[i] = i;
	html_table(f, t, rows, k);
	free(rows);
}

static void draw_top(FILE *f, const struct tabs *own, const char *none)
{
	size_t rows = 0;
	for (size_t i = 0; i < own->n; i++)
		rows += table_nrows(own->v[i]);
	if (!rows) { /* "Top kernels" of a CPU-only trace: why, not a bare heading */
		const char *note = own->n ? table_get_note(own->v[0]) : NULL;
		html_none(f, note ? note : none);
		return;
	}
	for (size_t i = 0; i < own->n; i++)
		table_top(f, own->v[i], TOP);
}

void html_draw_top_kernels(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)all;
	draw_top(f, own, "no GPU kernels in the inputs (a run without CUDA work, or CUDA not "
	                 "traced: CUPTRACE_TRACE)");
}

void html_draw_top(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)all;
	draw_top(f, own, "nothing of this kind in the inputs");
}

static void legend(FILE *f, const char *const *names, const char *const *colours, int n)
{
	fputs("<div class=\"legend\">", f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "<span style=\"background:%s\"></span>", colours[i]);
		html_esc(f, names[i]);
	}
	fputs("</div>\n", f);
}

void html_draw_breakdown(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)own;
	const struct table *t = tabs_get(all, "breakdown: GPU time");
	if (!t) {
		html_none(f, "no breakdown");
		return;
	}
	int step = table_find_col(t, "Step"), rank = table_find_col(t, "Rank");
	size_t n = 0, *rows = xcalloc(table_nrows(t) + 1, sizeof *rows);
	const char *why = NULL;
	long slow = html_slowest_rank(all, &why), mark = -1;
	for (size_t r = 0; r < table_nrows(t); r++) {
		int kind;
		table_cell(t, r, step, &kind);
		if (kind != 2)
			continue;
		if (mark < 0 && slow >= 0 && num_or(t, r, rank, -2) == slow)
			mark = (long)r;
		rows[n++] = r;
	}
	if (!n) {
		const char *note = table_get_note(t);
		html_none(f, note ? note : "no GPU work in the inputs");
		free(rows);
		return;
	}
	static const char *const names[] = {"Compute (%)", "Communication (%)", "Memory (%)",
					    "Idle (%)"};
	static const char *const colours[] = {"#4e79a7", "#f28e2b", "#59a14f", "#d3d3d3"};
	int cols[4], label[] = {rank, table_find_col(t, "GPU"), -1},
		     extra[] = {table_find_col(t, "Overlap (%)"), table_find_col(t, "Exposed Comm (ns)"),
				-1};
	for (int k = 0; k < 4; k++)
		cols[k] = table_find_col(t, names[k]);
	fputs("<p>Share of each GPU's window (first work to last work); the three kinds of work may "
	      "overlap, so a bar may pass 100 %. Overlap: communication during compute; exposed: "
	      "communication alone.</p>\n",
	      f);
	legend(f, names, colours, 4);
	struct bars b = {t, rows, n, cols, 4, colours, label, extra, mark, "slowest"};
	html_svg_bars(f, &b);
	if (slow >= 0 && mark < 0) {
		char line[120];
		snprintf(line, sizeof line, "%s: rank %ld (no GPU work of its own in the breakdown)",
			 why, slow);
		html_none(f, line);
	}
	free(rows);
	const struct table *s = tabs_get(all, "breakdown: summary over ranks");
	if (s)
		html_table(f, s, NULL, 0);
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

struct key {
	int64_t a, b;
};

static int cmp_key(const void *x, const void *y)
{
	const struct key *p = x, *q = y;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	return p->b < q->b ? -1 : p->b > q->b;
}

static size_t uniq_i64(int64_t *v, size_t n)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (!m || v[i] != v[m - 1])
			v[m++] = v[i];
	return m;
}

/* A grid of t's rows that have a step (or a bucket start, in ns: time):
 * one row per key (columns ka, kb; kb -1: none), a column per MAX_COLS-th
 * of the steps, each cell the row with the largest value v among the
 * steps of its column (lowest: least). */
static int grid(struct matrix *m, int ka, int kb, int stepc, int time, int least)
{
	const struct table *t = m->t;
	size_t n = table_nrows(t), nk = 0, ns = 0;
	struct key *keys = xcalloc(n + 1, sizeof *keys);
	int64_t *steps = xcalloc(n + 1, sizeof *steps);
	for (size_t r = 0; r < n; r++) {
		int kind;
		table_cell(t, r, stepc, &kind);
		if (kind == 2)
			continue;
		keys[nk++] = (struct key){num_or(t, r, ka, -1), kb >= 0 ? num_or(t, r, kb, -1) : 0};
		steps[ns++] = num_or(t, r, stepc, 0);
	}
	qsort(keys, nk, sizeof *keys, cmp_key);
	qsort(steps, ns, sizeof *steps, cmp_i64);
	size_t m_k = 0;
	for (size_t i = 0; i < nk; i++)
		if (!m_k || cmp_key(&keys[i], &keys[m_k - 1]))
			keys[m_k++] = keys[i];
	nk = m_k;
	ns = uniq_i64(steps, ns);
	if (!nk || !ns) {
		free(keys);
		free(steps);
		return 0;
	}
	size_t maxc = nk <= MAX_LINES ? MAX_COLS : MAX_CELLS / nk;
	maxc = maxc < 10 ? 10 : maxc > 60 ? 60 : maxc;
	size_t per = (ns + maxc - 1) / maxc, nc = (ns + per - 1) / per;
	long *cell = xcalloc(nk * nc, sizeof *cell);
	for (size_t i = 0; i < nk * nc; i++)
		cell[i] = -1;
	for (size_t r = 0; r < n; r++) {
		int kind;
		table_cell(t, r, stepc, &kind);
		if (kind == 2)
			continue;
		struct key k = {num_or(t, r, ka, -1), kb >= 0 ? num_or(t, r, kb, -1) : 0};
		int64_t s = num_or(t, r, stepc, 0);
		struct key *kp = bsearch(&k, keys, nk, sizeof *keys, cmp_key);
		int64_t *sp = bsearch(&s, steps, ns, sizeof *steps, cmp_i64);
		size_t j = (size_t)(sp - steps) / per;
		long *c = &cell[(size_t)(kp - keys) * nc + j];
		double v = table_num(t, r, m->v), w = *c < 0 ? 0 : table_num(t, (size_t)*c, m->v);
		if (*c < 0 || (least ? v < w : v > w))
			*c = (long)r;
	}
	m->rlab = xcalloc(nk, sizeof *m->rlab);
	m->clab = xcalloc(nc, sizeof *m->clab);
	for (size_t i = 0; i < nk; i++) {
		char b[64];
		int w = keys[i].a >= 0 ? snprintf(b, sizeof b, "rank %lld", (long long)keys[i].a)
				       : snprintf(b, sizeof b, "no rank");
		if (kb >= 0)
			snprintf(b + w, sizeof b - (size_t)w, " GPU %lld", (long long)keys[i].b);
		m->rlab[i] = xstrdup(b);
	}
	for (size_t j = 0; j < nc; j++) {
		char b[64];
		size_t lo = j * per, hi = lo + per - 1 < ns ? lo + per - 1 : ns - 1;
		if (time) /* bucket starts: the time of the first, in s */
			snprintf(b, sizeof b, "%.3f s", (double)steps[lo] / 1e9);
		else if (lo == hi)
			snprintf(b, sizeof b, "step %lld", (long long)steps[lo]);
		else
			snprintf(b, sizeof b, "steps %lld-%lld", (long long)steps[lo], (long long)steps[hi]);
		m->clab[j] = xstrdup(b);
	}
	m->nr = nk, m->nc = nc, m->cell = cell;
	free(keys);
	free(steps);
	return (int)per;
}

static void grid_free(struct matrix *m)
{
	for (size_t i = 0; i < m->nr; i++)
		free(m->rlab[i]);
	for (size_t j = 0; j < m->nc; j++)
		free(m->clab[j]);
	free(m->rlab);
	free(m->clab);
	free((void *)m->cell);
}

void html_draw_steps(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)own;
	const struct table *t = tabs_get(all, "steps: duration per rank and step"),
			   *t1 = tabs_get(all, "steps: step duration per rank"),
			   *t2 = tabs_get(all, "steps: slowest rank per step");
	if (!t || !table_nrows(t)) {
		const char *note = t1 ? table_get_note(t1) : NULL;
		html_none(f, note ? note : "no complete step in the inputs");
		return;
	}
	int q[] = {table_find_col(t, "Rank"), table_find_col(t, "Step"),
		   table_find_col(t, "Duration (ns)"), -1};
	struct matrix m = {.t = t, .v = q[2], .quote = q, .unit = "step duration (ns)"};
	int per = grid(&m, q[0], -1, q[1], 0, 0);
	m.lines = m.nr <= MAX_LINES;
	char line[200];
	snprintf(line, sizeof line,
		 "Duration of each step on each rank%s%s.", m.lines ? " (one line per rank)" : " (heat map: darker is longer)",
		 per > 1 ? "; each column shows the longest of its steps" : "");
	html_none(f, line);
	html_svg_matrix(f, &m);
	grid_free(&m);
	if (t1)
		html_table(f, t1, NULL, 0);
	if (t2 && table_nrows(t2)) {
		/* The steps that waited longest for their slowest rank. */
		int lead = table_find_col(t2, "Lead (ns)");
		size_t n = table_nrows(t2), k = n < 20 ? n : 20;
		size_t *rows = xcalloc(n, sizeof *rows);
		for (size_t i = 0; i < n; i++)
			rows[i] = i;
		for (size_t i = 0; i < k; i++) /* partial selection by Lead, largest first */
			for (size_t j = i + 1; j < n; j++)
				if (table_num(t2, rows[j], lead) > table_num(t2, rows[i], lead)) {
					size_t x = rows[i];
					rows[i] = rows[j];
					rows[j] = x;
				}
		html_table(f, t2, rows, k);
		free(rows);
	}
}

void html_draw_util(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)own;
	const struct table *t = tabs_get(all, "breakdown: GPU busy time per time bucket");
	if (!t || !table_nrows(t)) {
		const char *note = t ? table_get_note(t) : NULL;
		html_none(f, note ? note : "no GPU work in the inputs");
		return;
	}
	int q[] = {table_find_col(t, "Rank"), table_find_col(t, "GPU"), table_find_col(t, "Start (ns)"),
		   table_find_col(t, "Width (ns)"), table_find_col(t, "Busy (%)"), -1};
	struct matrix m = {.t = t, .v = q[4], .quote = q, .fixed = 1, .lo = 0, .hi = 100,
			   .unit = "time on the job's timeline; dark: busy, light: idle (Busy (%) of the bucket)"};
	int per = grid(&m, q[0], q[1], q[2], 1, 1);
	char line[200];
	snprintf(line, sizeof line, "Busy fraction of each GPU per time bucket (breakdown --by time)%s.",
		 per > 1 ? "; each column shows the idlest of its buckets" : "");
	html_none(f, line);
	html_svg_matrix(f, &m);
	grid_free(&m);
}

/* Bars of one or more columns per row of t, labelled by label columns. */
static void bars_of(FILE *f, const struct table *t, const char *const *names, int ncols,
		    const char *const *colours, const char *const *labels, const char *const *extras)
{
	size_t n = table_nrows(t);
	size_t *rows = xcalloc(n + 1, sizeof *rows);
	for (size_t i = 0; i < n; i++)
		rows[i] = i;
	int cols[8], label[4], extra[4], k;
	for (k = 0; k < ncols; k++)
		cols[k] = table_find_col(t, names[k]);
	for (k = 0; labels[k]; k++)
		label[k] = table_find_col(t, labels[k]);
	label[k] = -1;
	for (k = 0; extras[k]; k++)
		extra[k] = table_find_col(t, extras[k]);
	extra[k] = -1;
	if (ncols > 1)
		legend(f, names, colours, ncols);
	struct bars b = {t, rows, n, cols, ncols, colours, label, extra, -1, NULL};
	html_svg_bars(f, &b);
	free(rows);
}

static int empty(FILE *f, const struct table *t, const char *what)
{
	if (t && table_nrows(t))
		return 0;
	const char *note = t ? table_get_note(t) : NULL;
	html_none(f, note ? note : what);
	return 1;
}

void html_draw_nccl_sum(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)own;
	const struct table *t = tabs_get(all, "nccl_sum:");
	if (empty(f, t, "no NCCL operations in the inputs"))
		return;
	table_top(f, t, 30);
	static const char *const names[] = {"Busbw (GB/s)"}, *const colours[] = {"#76b7b2"},
				 *const labels[] = {"Operation", "Datatype", NULL},
				 *const extras[] = {"Busbw (GB/s)", "Avg Bytes", NULL};
	fputs("<h3>Bus bandwidth per operation and message size</h3>\n", f);
	bars_of(f, t, names, 1, colours, labels, extras);
}

void html_draw_nccl_sizes(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)own;
	const struct table *t = tabs_get(all, "nccl_sizes: calls per message size, by operation");
	if (empty(f, t, "no NCCL operations in the inputs"))
		return;
	const char *names[8];
	int n = 0;
	for (int c = 1; c < table_ncols(t) - 1 && n < 8; c++)
		names[n++] = table_col(t, c);
	static const char *const colours[] = {"#edc948", "#f28e2b", "#e15759", "#7b2d26", "#999",
					      "#999", "#999", "#999"},
				 *const labels[] = {"Operation", NULL}, *const extras[] = {"Total", NULL};
	bars_of(f, t, names, n, colours, labels, extras);
	html_table(f, t, NULL, 0);
}

void html_draw_nccl_skew(FILE *f, const struct tabs *all, const struct tabs *own)
{
	(void)own;
	const struct table *t = tabs_get(all, "nccl_skew: arrival at collectives per rank");
	if (empty(f, t, "no collective seen by two ranks or more"))
		return;
	size_t n = table_nrows(t);
	size_t *rows = xcalloc(n + 1, sizeof *rows);
	for (size_t i = 0; i < n; i++)
		rows[i] = i;
	int cols[] = {table_find_col(t, "Total Lateness (ns)")},
	    label[] = {table_find_col(t, "Rank"), -1},
	    extra[] = {table_find_col(t, "Times Last"), table_find_col(t, "Wait Imposed (ns)"), -1};
	static const char *const colours[] = {"#e15759"};
	fputs("<p>Total lateness of each rank at collectives (its arrival after the first rank's); "
	      "the mark: the rank that imposed the most wait on the others.</p>\n",
	      f);
	struct bars b = {t, rows, n, cols, 1, colours, label, extra,
			 argmax(t, table_find_col(t, "Wait Imposed (ns)")), "slowest"};
	html_svg_bars(f, &b);
	free(rows);
	html_table(f, t, NULL, 0);
	const struct table *w = tabs_get(all, "nccl_skew: worst collectives");
	if (w)
		html_table(f, w, NULL, 0);
}
