// SPDX-License-Identifier: MIT
/* cuptrace diff's first line: how the step time changed (the mean step,
 * over every rank's steps), or without steps in both runs the span per
 * rank, and the few rows whose change per step (per rank) explains most
 * of it; none when the test of the step times finds no change (p of
 * DIFF_ALPHA or more). Rows that span (nearly) the whole step, such as a
 * range around it, are left out: they explain it without saying
 * anything; so are rows whose change the test found within the noise.
 * steps and breakdown are not among the explanations (they are sums of
 * the others). */
#include "stats/diff.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WHY    3    /* rows named */
#define MIN_SHARE  0.05 /* of the change, to be named */
#define WRAP_SHARE 0.9  /* of the step, or more: a wrapper, not named */

/* ns as text with a unit ("12.0 ms"), with its sign when sign is set. */
static void fmt_ns(char *buf, size_t len, double ns, int sign)
{
	double a = fabs(ns);
	const char *s = sign ? (ns < 0 ? "-" : "+") : (ns < 0 ? "-" : "");
	if (a < 1e3)
		snprintf(buf, len, "%s%.0f ns", s, a);
	else if (a < 1e6)
		snprintf(buf, len, "%s%.2f us", s, a / 1e3);
	else if (a < 1e9)
		snprintf(buf, len, "%s%.2f ms", s, a / 1e6);
	else
		snprintf(buf, len, "%s%.3f s", s, a / 1e9);
}

/* How much of name the verdict shows: at most NAME_MAX_SHOWN bytes, cut
 * before a character, not inside one (names are valid UTF-8: the tables
 * made them so). */
#define NAME_MAX_SHOWN 80
static int shown_len(const char *name)
{
	size_t n = strnlen(name, NAME_MAX_SHOWN + 1);
	if (n > NAME_MAX_SHOWN)
		for (n = NAME_MAX_SHOWN; n && ((unsigned char)name[n] & 0xc0) == 0x80; n--)
			;
	return (int)n;
}

struct why {
	const struct pair *p;
	const char *rep;
	double delta, ub, un;
};

static int cmp_why(const void *x, const void *y)
{
	const struct why *a = x, *b = y;
	double da = fabs(a->delta), db = fabs(b->delta);
	return da > db ? -1 : da < db;
}

static const struct pair *step_pair(const struct pairs *by_rep)
{
	for (size_t i = 0; diff_report_names[i]; i++)
		if (!strcmp(diff_report_names[i], "steps"))
			for (size_t k = 0; k < by_rep[i].n; k++)
				if (!strcmp(by_rep[i].v[k].match, "exact") &&
				    by_rep[i].v[k].bc > 0 && by_rep[i].v[k].nc > 0)
					return &by_rep[i].v[k];
	return NULL;
}

/* The rows that explain the change, largest first, into w (n of them). */
static size_t explain(const struct pairs *by_rep, double div_b, double div_n,
                      const struct diff_verdict *v, struct why **w)
{
	size_t n = 0;
	double change = v->new_ns - v->base_ns;
	for (size_t i = 0; diff_report_names[i]; i++) {
		const char *rep = diff_report_names[i];
		if (!strcmp(rep, "steps") || !strcmp(rep, "breakdown"))
			continue;
		for (size_t k = 0; k < by_rep[i].n; k++) {
			const struct pair *p = &by_rep[i].v[k];
			double ub = p->bt / div_b, un = p->nt / div_n, d = un - ub;
			if (ub >= WRAP_SHARE * v->base_ns || un >= WRAP_SHARE * v->new_ns)
				continue;
			if (d * change <= 0 || fabs(d) < MIN_SHARE * fabs(change))
				continue;
			if (!strcmp(p->sig, "no")) /* within the noise of its instances */
				continue;
			*w = xrealloc(*w, (n + 1) * sizeof **w);
			(*w)[n++] = (struct why){p, rep, d, ub, un};
		}
	}
	if (n > 1)
		qsort(*w, n, sizeof **w, cmp_why);
	return n;
}

void diff_verdict_make(const struct diff_run *b, const struct diff_run *n,
                       const struct pairs *by_rep, struct diff_verdict *v)
{
	memset(v, 0, sizeof *v);
	v->change_pct = v->p = NAN;
	double br = b->nranks ? (double)b->nranks : 1, nr = n->nranks ? (double)n->nranks : 1;
	double div_b = 1, div_n = 1; /* a row's total per rank into the basis' unit */
	const struct pair *sp = step_pair(by_rep);
	if (sp) {
		v->basis = "step";
		v->base_ns = sp->bt * br / sp->bc, v->new_ns = sp->nt * nr / sp->nc;
		div_b = sp->bc / br, div_n = sp->nc / nr; /* steps per rank */
		v->p = sp->p;
	} else if (b->span_ns > 0 && n->span_ns > 0) {
		v->basis = "span";
		v->base_ns = b->span_ns, v->new_ns = n->span_ns;
	} else {
		snprintf(v->text, sizeof v->text, "nothing to compare: no steps and no events");
		return;
	}
	v->change_pct = 100 * (v->new_ns - v->base_ns) / v->base_ns;
	char from[32], to[32], ranks[64] = "", test[64] = "";
	fmt_ns(from, sizeof from, v->base_ns, 0);
	fmt_ns(to, sizeof to, v->new_ns, 0);
	if (b->nranks != n->nranks)
		snprintf(ranks, sizeof ranks, "; base %zu rank%s, new %zu", b->nranks,
		         b->nranks == 1 ? "" : "s", n->nranks);
	if (sp && !isnan(sp->p))
		/* the step time's own test: p alone (a row's Significant also
		 * asks for a shift of DIFF_MIN_PCT, the gate for the percentage) */
		snprintf(test, sizeof test, "; %s, p %.2g",
		         sp->p < DIFF_ALPHA ? "beyond noise" : "within noise", sp->p);
	else if (sp)
		snprintf(test, sizeof test, "; too few steps to test");
	size_t o =
	    (size_t)snprintf(v->text, sizeof v->text, "%s %+.1f %% (%s -> %s %s%s%s)", v->basis,
	                     v->change_pct, from, to, sp ? "per step" : "per rank", test, ranks);
	if (sp && !isnan(sp->p) && sp->p >= DIFF_ALPHA) {
		/* the test cannot tell the steps apart: a row's share of a
		 * change that may be noise would mean nothing (any row of a
		 * step that did not move would "explain" thousands of %) */
		if (o < sizeof v->text)
			snprintf(v->text + o, sizeof v->text - o, ": no change to explain");
		return;
	}
	struct why *w = NULL;
	size_t nw = explain(by_rep, div_b, div_n, v, &w);
	double change = v->new_ns - v->base_ns;
	for (size_t i = 0; i < nw && i < MAX_WHY && o < sizeof v->text; i++) {
		char d[32], rel[32] = "new";
		fmt_ns(d, sizeof d, w[i].delta, 1);
		if (w[i].ub > 0)
			snprintf(rel, sizeof rel, "%+.0f %%", 100 * w[i].delta / w[i].ub);
		const char *name = w[i].p->key ? w[i].p->key : w[i].p->name;
		o += (size_t)snprintf(v->text + o, sizeof v->text - o,
		                      "%s %.*s %s (%s) explains %.0f %%", i ? ";" : ":",
		                      shown_len(name), name, d, rel, 100 * w[i].delta / change);
	}
	if (!nw && o < sizeof v->text)
		snprintf(v->text + o, sizeof v->text - o, ": no row explains it");
	free(w);
}
