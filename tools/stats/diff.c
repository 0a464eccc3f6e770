// SPDX-License-Identifier: MIT
/* cuptrace diff's comparison: a base run's rows against a new run's, per
 * report: matched (exact names, then normalised keys), compared (totals
 * per rank, medians, the rank test of their instances), sorted by the
 * change in total; and the verdict on the step time (or the span). */
#include "stats/diff.h"
#include "stats/mwu.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct pair *pair_new(struct pairs *ps)
{
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? 2 * ps->cap : 64;
		ps->v = xrealloc(ps->v, ps->cap * sizeof *ps->v);
	}
	struct pair *p = &ps->v[ps->n++];
	memset(p, 0, sizeof *p);
	p->bm = p->nm = p->p = NAN;
	return p;
}

/* Fills p from a base row and a new row (either NULL). */
static void compare(struct pair *p, struct drow *b, struct drow *n, size_t branks, size_t nranks)
{
	p->sig = "n/a";
	if (b) {
		p->bt = b->total / (double)branks, p->bc = b->count, p->bm = drow_median(b);
		b->taken = 1;
	}
	if (n) {
		p->nt = n->total / (double)nranks, p->nc = n->count, p->nm = drow_median(n);
		n->taken = 1;
	}
	struct mwu r;
	if (!b || !n || b->nd < MWU_MIN_N || n->nd < MWU_MIN_N ||
	    mwu_test(b->d, b->nd, n->d, n->nd, &r))
		return;
	p->p = r.p;
	double shift = p->bm > 0 ? 100 * fabs(p->nm - p->bm) / p->bm : p->nm > 0 ? 100 : 0;
	p->sig = r.p < DIFF_ALPHA && shift >= DIFF_MIN_PCT ? "yes" : "no";
}

/* A row of either side, for matching by key. */
struct kref {
	struct drow *r;
	int side; /* 0 base, 1 new */
};

static int cmp_kref(const void *x, const void *y)
{
	const struct kref *a = x, *b = y;
	int c = strcmp(a->r->key, b->r->key);
	if (c)
		return c;
	if (a->side != b->side)
		return a->side - b->side;
	return strcmp(a->r->name, b->r->name);
}

/* The rows k[0..n) of one key (base's first), if both sides have one,
 * folded into a pair each side. */
static void match_key(struct kref *k, size_t n, size_t br, size_t nr, struct pairs *out)
{
	if (k[0].side || !k[n - 1].side)
		return;
	struct drow f[2] = {{.med = NAN}, {.med = NAN}};
	char names[2][1024] = {"", ""};
	for (size_t i = 0; i < n; i++) {
		int s = k[i].side;
		drow_fold(&f[s], k[i].r);
		k[i].r->taken = 1;
		size_t o = strlen(names[s]);
		snprintf(names[s] + o, sizeof names[s] - o, "%s%s", o ? ", " : "", k[i].r->name);
	}
	struct pair *p = pair_new(out);
	char name[2100];
	snprintf(name, sizeof name, "%s -> %s", names[0], names[1]);
	p->name = xstrdup(name);
	p->key = xstrdup(k[0].r->key);
	p->match = "renamed";
	compare(p, &f[0], &f[1], br, nr);
	free(f[0].d), free(f[1].d);
}

/* base's and nw's rows (each by name) matched: exact names, then keys (a
 * key's rows on each side folded into one), then the rows of one side
 * alone. */
static void match(struct drows *b, struct drows *n, size_t br, size_t nr, struct pairs *out)
{
	for (size_t i = 0, j = 0; i < b->n && j < n->n;) {
		int c = strcmp(b->v[i].name, n->v[j].name);
		if (!c) {
			struct pair *p = pair_new(out);
			p->name = xstrdup(b->v[i].name);
			p->match = "exact";
			compare(p, &b->v[i], &n->v[j], br, nr);
		}
		i += c <= 0, j += c >= 0;
	}
	struct kref *k = xcalloc(b->n + n->n + 1, sizeof *k);
	size_t nk = 0;
	for (int side = 0; side < 2; side++) {
		struct drows *s = side ? n : b;
		for (size_t j = 0; j < s->n; j++)
			if (!s->v[j].taken)
				k[nk++] = (struct kref){&s->v[j], side};
	}
	if (nk > 1)
		qsort(k, nk, sizeof *k, cmp_kref);
	for (size_t i = 0, j; i < nk; i = j) {
		for (j = i + 1; j < nk && !strcmp(k[j].r->key, k[i].r->key); j++)
			;
		match_key(k + i, j - i, br, nr, out);
	}
	free(k);
	for (int side = 0; side < 2; side++) {
		struct drows *s = side ? n : b;
		for (size_t j = 0; j < s->n; j++) {
			if (s->v[j].taken)
				continue;
			struct pair *p = pair_new(out);
			p->name = xstrdup(s->v[j].name);
			p->match = side ? "new only" : "base only";
			compare(p, side ? NULL : &s->v[j], side ? &s->v[j] : NULL, br, nr);
		}
	}
}

static int cmp_change(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;
	double da = fabs(a->nt - a->bt), db = fabs(b->nt - b->bt);
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void opt_f(struct table *t, double v, int dec)
{
	if (isnan(v))
		table_null(t);
	else
		table_f(t, v, dec);
}

static void pct(struct table *t, double to, double from)
{
	opt_f(t, from > 0 ? 100 * (to - from) / from : NAN, 1);
}

static struct table *pairs_table(const char *rep, struct pairs *ps, size_t br, size_t nr)
{
	static const char *const cols[] = {"Base Instances",
	                                   "New Instances",
	                                   "Base Total (ns)",
	                                   "New Total (ns)",
	                                   "Total Change (ns)",
	                                   "Total Change (%)",
	                                   "Ratio",
	                                   "Base Med (ns)",
	                                   "New Med (ns)",
	                                   "Med Change (ns)",
	                                   "Med Change (%)",
	                                   "p",
	                                   "Significant",
	                                   "Match",
	                                   "Key",
	                                   "Name"};
	char title[128];
	snprintf(title, sizeof title, "diff: %s", rep);
	struct table *t = table_new(title, 16, cols);
	for (size_t i = 0; i < ps->n; i++) {
		const struct pair *p = &ps->v[i];
		int b = strcmp(p->match, "new only") != 0, n = strcmp(p->match, "base only") != 0;
		table_row(t);
		opt_f(t, b ? p->bc : NAN, 0);
		opt_f(t, n ? p->nc : NAN, 0);
		opt_f(t, b ? p->bt : NAN, 0);
		opt_f(t, n ? p->nt : NAN, 0);
		table_f(t, p->nt - p->bt, 0);
		pct(t, p->nt, b ? p->bt : NAN);
		opt_f(t, b && n && p->bt > 0 ? p->nt / p->bt : NAN, 3);
		opt_f(t, p->bm, 0);
		opt_f(t, p->nm, 0);
		opt_f(t, p->nm - p->bm, 0);
		pct(t, p->nm, p->bm);
		if (isnan(p->p))
			table_null(t);
		else
			table_g(t, p->p, 3);
		table_str(t, p->sig);
		table_str(t, p->match);
		table_str(t, p->key ? p->key : "");
		table_str(t, p->name);
	}
	if (br != nr) {
		char note[200];
		snprintf(note, sizeof note,
		         "base %zu rank%s, new %zu: totals are per rank (a run's total over its "
		         "ranks / its rank count)",
		         br, br == 1 ? "" : "s", nr);
		table_note(t, note);
	}
	return t;
}

static int wanted(const char *only, const char *rep)
{
	if (!only)
		return 1;
	size_t n = strlen(rep);
	for (const char *p = only; *p; p += *p == ',') {
		size_t k = strcspn(p, ",");
		if (k == n && !memcmp(p, rep, n))
			return 1;
		p += k;
	}
	return 0;
}

void diff_compare(const struct diff_run *base, const struct diff_run *nw, const char *only,
                  struct table ***out, size_t *nout, struct diff_verdict *v)
{
	size_t nrep = 0;
	while (diff_report_names[nrep])
		nrep++;
	struct pairs *all = xcalloc(nrep, sizeof *all);
	size_t br = base->nranks ? base->nranks : 1, nr = nw->nranks ? nw->nranks : 1;
	for (size_t i = 0; i < nrep; i++) {
		struct drows b, n;
		diff_rows_of(base, diff_report_names[i], &b);
		diff_rows_of(nw, diff_report_names[i], &n);
		match(&b, &n, br, nr, &all[i]);
		diff_rows_free(&b);
		diff_rows_free(&n);
		if (all[i].n > 1)
			qsort(all[i].v, all[i].n, sizeof *all[i].v, cmp_change);
	}
	diff_verdict_make(base, nw, all, v);
	for (size_t i = 0; i < nrep; i++) {
		if (all[i].n && wanted(only, diff_report_names[i])) {
			*out = xrealloc(*out, (*nout + 1) * sizeof **out);
			(*out)[(*nout)++] = pairs_table(diff_report_names[i], &all[i], br, nr);
		}
		for (size_t k = 0; k < all[i].n; k++)
			free(all[i].v[k].name), free(all[i].v[k].key);
		free(all[i].v);
	}
	free(all);
}
