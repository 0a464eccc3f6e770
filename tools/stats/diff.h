// SPDX-License-Identifier: MIT
/* cuptrace diff: two runs compared. Each run is read once through the
 * reports of `cuptrace stats` (diff_collect.c); their tables' rows are
 * matched by name (diff_rows.c: exact names first, then a normalised key
 * that drops template arguments and NCCL's algorithm and protocol), and
 * each pair of rows is compared: totals per rank, medians, and the
 * Mann-Whitney U test (mwu.h) of the instances' durations where the
 * report keeps them (diff.c). docs/cuptrace-diff.md describes it. */
#ifndef CT_DIFF_H
#define CT_DIFF_H

#include "stats/stats.h"

#include <stddef.h>
#include <stdint.h>

/* The tables of one run, as diff_collect made them. */
struct diff_run {
	struct table **v;
	size_t n;
	size_t nranks;  /* distinct ranks of its files */
	double span_ns; /* its traced span (first to last event), mean per rank */
};

/* Reads the run of the inputs args[0..nargs) into *run (the report tables
 * diff compares, and the span); opts and steps_arg as in reports_collect
 * (--steps), jobs its -j. Returns 0, 1 when an input was unusable or
 * corrupt (said on stderr; *run is empty when nothing could be read), -1
 * when --steps matched nothing. */
int diff_collect(char **args, int nargs, int strict, int jobs, const struct stats_opts *opts,
                 const char *steps_arg, struct diff_run *run);
void diff_run_free(struct diff_run *run);

/* The reports diff compares (names of `cuptrace stats`), NULL-ended. */
extern const char *const diff_report_names[];

/* The first line of a comparison: how the step time (or, without steps
 * in both runs, the span per rank) changed and the rows that explain it. */
struct diff_verdict {
	const char *basis;      /* "step", "span" or NULL (nothing to compare) */
	double base_ns, new_ns; /* mean step time, or span per rank */
	double change_pct;      /* NaN: not known */
	double p;               /* the test of the step times; NaN: n/a */
	char text[1024];
};

/* Compares base to nw: a table per report both or either has (only: a
 * comma-separated list of diff_report_names to keep, NULL: all), appended
 * to *out (*nout of them; the caller frees each and the array), and the
 * verdict. */
void diff_compare(const struct diff_run *base, const struct diff_run *nw, const char *only,
                  struct table ***out, size_t *nout, struct diff_verdict *v);

/* Internals shared by diff.c and diff_rows.c. */

/* A row of one run's table, by name; rows of one name are one. */
struct drow {
	char *name;
	char *key;    /* normalised name (diff_key) */
	double total; /* ns, over every rank */
	double count; /* instances, over every rank */
	double med;   /* ns; NaN: not known */
	uint64_t *d;  /* the instances' durations (malloc'd), nd of them; NULL: not kept */
	size_t nd;
	int taken; /* matched already */
};

struct drows {
	struct drow *v;
	size_t n, cap;
};

/* The rows of report `rep` (a name of diff_report_names) in run r, by
 * name. */
void diff_rows_of(const struct diff_run *r, const char *rep, struct drows *out);
void diff_rows_free(struct drows *rows);
/* name with template arguments (<...>) emptied and, in NCCL's kernel
 * names, the algorithm and protocol left out, into buf. */
void diff_key(const char *name, char *buf, size_t len);
/* A row made of several (a key's rows on one side): sums, durations
 * joined, the median of them (or of the one row). */
void drow_fold(struct drow *into, const struct drow *from);
/* The median of the row's durations, if kept (else its own). */
double drow_median(struct drow *r);

/* A change is called significant when the test's p is below DIFF_ALPHA
 * and the medians differ by DIFF_MIN_PCT or more: with thousands of
 * instances the test finds shifts too small to matter. */
#define DIFF_ALPHA   0.01
#define DIFF_MIN_PCT 5.0

/* A compared pair of rows (either side may be missing). */
struct pair {
	char *name, *key;  /* key: set for a renamed match */
	const char *match; /* "exact", "renamed", "base only", "new only" */
	double bt, nt;     /* totals per rank */
	double bc, nc;     /* instances */
	double bm, nm;     /* medians; NaN: not known */
	double p;          /* NaN: n/a */
	const char *sig;   /* "yes", "no", "n/a" */
};

struct pairs {
	struct pair *v;
	size_t n, cap;
};

/* The verdict from the pairs of every report (by_rep[i]: those of
 * diff_report_names[i]), sorted by the change in total (diff_verdict.c). */
void diff_verdict_make(const struct diff_run *b, const struct diff_run *n,
                       const struct pairs *by_rep, struct diff_verdict *v);

#endif
