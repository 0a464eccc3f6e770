// SPDX-License-Identifier: MIT
/* The pieces of the HTML report (`cuptrace report`): escaping, tables and
 * inline SVG charts drawn from the report tables of `cuptrace stats`
 * (stats/table.h), so that the page shows their numbers to the digit.
 * Every number shown comes from a table cell, and the element showing it
 * names where it came from: a <table data-t="TITLE"> holds rows
 * <tr data-r="ROW"> of that table's cells; a chart <g data-t="TITLE">
 * holds marks with data-r="ROW" whose <title> quotes that row's cells. */
#ifndef CT_HTML_H
#define CT_HTML_H

#include "stats/table.h"

#include <stddef.h>
#include <stdio.h>

/* Text or attribute value, escaped (&, <, >, "); invalid UTF-8 and
 * control characters become U+FFFD. */
void html_esc(FILE *f, const char *s);
/* One line saying why a section has nothing to draw. */
void html_none(FILE *f, const char *why);
/* A sortable table of rows[0..n) of t (all rows when rows is NULL), under
 * its title and note. */
void html_table(FILE *f, const struct table *t, const size_t *rows, size_t n);
/* The style sheet and the script of the page. */
void html_head_assets(FILE *f);
void html_script(FILE *f);

/* ---- the page's frame (html_page.c) ---- */

struct inputs;
struct stats_opts;
struct tabs;
/* From <!DOCTYPE html> to the page's <h1>. */
void html_page_begin(FILE *f);
/* What was traced, where, and whether anything was lost (command, hosts,
 * files, ranks, GPUs, window, events, drops, damaged files, a hang, the
 * slowest rank); all: every report table of the page. */
void html_header(FILE *f, const struct inputs *in, const struct tabs *all,
		 const struct stats_opts *opts);
/* A section's <section id="sID"> and <h2>, and its close. */
void html_section_begin(FILE *f, size_t id, const char *title);
void html_section_end(FILE *f);
/* The closing section (how to see the full trace), the script, </html>. */
void html_page_end(FILE *f);

/* ---- charts (html_svg.c) ---- */

/* A colour for v in [0, 1] on a light-to-dark scale. */
void html_heat_colour(double v, char out[8]);

/* Stacked horizontal bars, one per row of t: the columns cols[0..ncols)
 * stacked (their values in the row's units), labelled by the label
 * column(s); mark: the row marked as the slowest (-1: none); extra: the
 * columns quoted after the bar. */
struct bars {
	const struct table *t;
	const size_t *rows;
	size_t n;
	const int *cols;
	int ncols;
	const char *const *colours;
	const int *label; /* label columns, -1 ends */
	const int *extra; /* quoted after the bar, -1 ends */
	long mark;	  /* a row index of t, or -1 */
	const char *mark_text;
};
void html_svg_bars(FILE *f, const struct bars *b);

/* A matrix: rows x columns of cells, each the row index of t whose value
 * column v it shows (or -1 for none); coloured from lo to hi (invert:
 * high values light). Row and column labels given as text. Lines instead
 * of a heat map when lines is set (a line per row over the columns). */
struct matrix {
	const struct table *t;
	int v;
	const int *quote; /* columns quoted in each cell's title, -1 ends */
	size_t nr, nc;
	const long *cell; /* [nr * nc] */
	char **rlab, **clab;
	int lines;
	int invert;
	int fixed; /* colour from lo to hi below, not from the values' range */
	double lo, hi;
	const char *unit; /* axis note */
};
void html_svg_matrix(FILE *f, const struct matrix *m);

/* ---- sections (html_sections.c) ---- */

/* The tables of the reports a page is drawn from. */
struct tabs {
	struct table **v;
	size_t n;
};
/* The table whose title starts with prefix, or NULL. */
const struct table *tabs_get(const struct tabs *t, const char *prefix);
/* The slowest rank (-1: none known) and why it is called so. */
long html_slowest_rank(const struct tabs *all, const char **why);
/* nccl_hang's verdict when it found a hang or a mismatch, else NULL. */
const char *html_hang_verdict(const struct tabs *all);

/* A section's body drawn from all the tables; own: its report's tables. */
typedef void (*html_draw_fn)(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_tables(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_breakdown(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_steps(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_util(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_top(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_top_kernels(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_nccl_sum(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_nccl_sizes(FILE *f, const struct tabs *all, const struct tabs *own);
void html_draw_nccl_skew(FILE *f, const struct tabs *all, const struct tabs *own);

/* ---- the comparison with a base run (html_diff.c) ---- */

/* cuptrace diff's verdict and tables t[0..n) against the run base. */
void html_diff(FILE *f, const char *base, const char *verdict, struct table *const *t, size_t n);

#endif
