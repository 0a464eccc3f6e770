// SPDX-License-Identifier: MIT
/* Inline SVG charts of the report page (html.h): stacked bars, heat maps
 * and lines. Each mark's <title> quotes its table cells as "Column: text"
 * so that hovering shows the exact figures (and a test can find them). */
#include "write/html/html.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LABEL_W 150
#define PLOT_W 640

static const char *const palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
				      "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
				      "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
				      "#3182bd"};

void html_heat_colour(double v, char out[8])
{
	if (!(v >= 0))
		v = 0;
	if (v > 1)
		v = 1;
	/* from pale yellow (0) to dark red (1) */
	unsigned char rgb[3] = {(unsigned char)(255 - 120 * v), (unsigned char)(245 - 225 * v),
				(unsigned char)(200 - 180 * v)};
	/* by hand, not snprintf: gcc 13 cannot tell that "%02x" of an int
	 * stays two digits and fails the build (-Werror=format-truncation) */
	static const char hex[] = "0123456789abcdef";
	out[0] = '#';
	for (int i = 0; i < 3; i++) {
		out[1 + 2 * i] = hex[rgb[i] >> 4];
		out[2 + 2 * i] = hex[rgb[i] & 15];
	}
	out[7] = 0;
}

/* A chart's <svg> up to its data-t attribute's value: drawn w x h, and
 * scaled down with the page (viewBox; the page's CSS caps its width) so
 * that a narrow window does not scroll sideways. */
static void svg_open(FILE *f, int w, size_t h)
{
	fprintf(f, "<svg width=\"%d\" height=\"%zu\" viewBox=\"0 0 %d %zu\" data-t=\"", w, h, w, h);
}

/* "Column: text" of the cell (row r, column c); nothing for -1. */
static void quote(FILE *f, const struct table *t, size_t r, int c, int *first)
{
	if (c < 0)
		return;
	int kind;
	const char *s = table_cell(t, r, c, &kind);
	fputs(*first ? "" : "; ", f);
	*first = 0;
	html_esc(f, table_col(t, c));
	fputs(": ", f);
	html_esc(f, kind == 2 ? "n/a" : s); /* stats' null: not known */
}

static void quote_list(FILE *f, const struct table *t, size_t r, const int *cols, int *first)
{
	for (; cols && *cols >= 0; cols++)
		quote(f, t, r, *cols, first);
}

void html_svg_bars(FILE *f, const struct bars *b)
{
	double max = 0;
	for (size_t i = 0; i < b->n; i++) {
		double sum = 0;
		for (int k = 0; k < b->ncols; k++) {
			double v = table_num(b->t, b->rows[i], b->cols[k]);
			sum += isnan(v) ? 0 : v;
		}
		if (sum > max)
			max = sum;
	}
	const int h = 18, top = 4;
	svg_open(f, LABEL_W + PLOT_W + 380, (size_t)top + b->n * (size_t)h + 4);
	html_esc(f, table_title(b->t));
	fputs("\">\n", f);
	for (size_t i = 0; i < b->n; i++) {
		size_t r = b->rows[i];
		int y = top + (int)i * h, marked = (long)r == b->mark;
		fprintf(f, "<g data-r=\"%zu\"%s>", r, marked ? " data-slowest=\"1\"" : "");
		fprintf(f, "<text x=\"0\" y=\"%d\"%s>", y + 12, marked ? " fill=\"#c00\" font-weight=\"bold\"" : "");
		for (const int *c = b->label; *c >= 0; c++) {
			int kind;
			const char *s = table_cell(b->t, r, *c, &kind);
			const char *name = table_col(b->t, *c);
			if (c != b->label)
				fputc(' ', f);
			/* values alone, but a bare number says what it is */
			if (!strcmp(name, "Rank") || !strcmp(name, "GPU"))
				fprintf(f, "%s ", !strcmp(name, "Rank") ? "rank" : "GPU");
			html_esc(f, kind == 2 ? "-" : s);
		}
		fputs("</text>", f);
		double x = LABEL_W;
		for (int k = 0; k < b->ncols; k++) {
			double v = table_num(b->t, r, b->cols[k]);
			double w = max > 0 && !isnan(v) ? v / max * PLOT_W : 0;
			fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", x,
				y + 2, w, h - 4, b->colours[k]);
			int first = 1;
			quote_list(f, b->t, r, b->label, &first);
			quote(f, b->t, r, b->cols[k], &first);
			fputs("</title></rect>", f);
			x += w;
		}
		fprintf(f, "<text x=\"%d\" y=\"%d\"%s><title>", LABEL_W + PLOT_W + 6, y + 12,
			marked ? " fill=\"#c00\" font-weight=\"bold\"" : "");
		int first = 1;
		quote_list(f, b->t, r, b->label, &first);
		quote_list(f, b->t, r, b->extra, &first);
		fputs("</title>", f);
		first = 1;
		quote_list(f, b->t, r, b->extra, &first);
		if (marked && b->mark_text) {
			fputs(" \xe2\x97\x80 ", f);
			html_esc(f, b->mark_text);
		}
		fputs("</text></g>\n", f);
	}
	fputs("</svg>\n", f);
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* The range of the values shown; returns whether the top was clipped: a
 * few outliers (a first step that includes start-up) would flatten every
 * other value, so values past 3 x the median are left out of the scale
 * (their marks sit on the edge; their titles keep the exact value). */
static int range(const struct matrix *m, double *lo, double *hi)
{
	double *v = xcalloc(m->nr * m->nc + 1, sizeof *v);
	size_t n = 0;
	for (size_t i = 0; i < m->nr * m->nc; i++)
		if (m->cell[i] >= 0 && !isnan(table_num(m->t, (size_t)m->cell[i], m->v)))
			v[n++] = table_num(m->t, (size_t)m->cell[i], m->v);
	qsort(v, n, sizeof *v, cmp_d);
	*lo = n ? v[0] : 0, *hi = n ? v[n - 1] : 0;
	double med = n ? v[n / 2] : 0;
	size_t k = n;
	while (med > 0 && k > n / 2 + 1 && v[k - 1] > 3 * med)
		k--;
	int clipped = k < n;
	if (clipped)
		*hi = v[k - 1] + (v[k - 1] - *lo) * 0.05;
	free(v);
	return clipped;
}

/* v on the scale [lo, hi], clipped to [0, 1]. */
static double unit(double v, double lo, double hi)
{
	double u = hi > lo ? (v - lo) / (hi - lo) : 0.5;
	return u < 0 ? 0 : u > 1 ? 1 : u;
}

static void cell_title(FILE *f, const struct matrix *m, size_t i, size_t j)
{
	fputs("<title>", f);
	if (m->lines) /* a heat map's row is known by its quoted cells */
		html_esc(f, m->rlab[i]), fputs(", ", f);
	html_esc(f, m->clab[j]);
	fputs(" \xe2\x80\x94 ", f);
	int first = 1;
	quote_list(f, m->t, (size_t)m->cell[i * m->nc + j], m->quote, &first);
	fputs("</title>", f);
}

/* The first and last column's labels under the plot (ending at x), what
 * the values are, and the end of the chart. */
static void foot(FILE *f, const struct matrix *m, int x, int y, int clipped)
{
	fprintf(f, "<text x=\"%d\" y=\"%d\">", LABEL_W, y);
	html_esc(f, m->clab[0]);
	fprintf(f, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">", x, y);
	html_esc(f, m->clab[m->nc - 1]);
	fprintf(f, "</text><text x=\"%d\" y=\"%d\">", LABEL_W, y + 14);
	html_esc(f, m->unit);
	if (clipped)
		fputs(" (values past 3 x the median drawn at the top: hover for exact values)", f);
	fputs("</text></svg>\n", f);
}

static void heat(FILE *f, const struct matrix *m, double lo, double hi, int clipped)
{
	double cw = (double)PLOT_W / (double)m->nc;
	if (cw > 40)
		cw = 40;
	int ch = m->nr > 32 ? 9 : 14;
	svg_open(f, LABEL_W + PLOT_W + 10, m->nr * (size_t)ch + 40);
	html_esc(f, table_title(m->t));
	fputs("\">\n", f);
	for (size_t i = 0; i < m->nr; i++) {
		int y = (int)i * ch + 4;
		if (m->nr <= 32 || i % 4 == 0) {
			fprintf(f, "<text x=\"0\" y=\"%d\">", y + ch - 2);
			html_esc(f, m->rlab[i]);
			fputs("</text>", f);
		}
		for (size_t j = 0; j < m->nc; j++) {
			long r = m->cell[i * m->nc + j];
			if (r < 0)
				continue;
			double v = table_num(m->t, (size_t)r, m->v);
			double u = unit(v, lo, hi);
			char col[8];
			html_heat_colour(m->invert ? 1 - u : u, col);
			fprintf(f, "<rect data-r=\"%ld\" x=\"%.0f\" y=\"%d\" width=\"%.0f\" height=\"%d\" "
				   "fill=\"%s\">", r, LABEL_W + floor((double)j * cw), y,
				floor((double)(j + 1) * cw) - floor((double)j * cw), ch - 1, col);
			cell_title(f, m, i, j);
			fputs("</rect>", f);
		}
		fputc('\n', f);
	}
	foot(f, m, LABEL_W + (int)(cw * (double)m->nc), (int)m->nr * ch + 20, clipped);
}

/* A duration in ns, short: 95.2 ms. */
static void short_ns(FILE *f, double v)
{
	if (v >= 1e9)
		fprintf(f, "%.3g s", v / 1e9);
	else if (v >= 1e6)
		fprintf(f, "%.3g ms", v / 1e6);
	else if (v >= 1e3)
		fprintf(f, "%.3g us", v / 1e3);
	else if (v > 0)
		fprintf(f, "%.0f ns", v);
	else
		fputs("0", f);
}

/* Lines from 0 (durations): from the smallest value, steps of 95 to 100 ms
 * drew as a full-height swing, a 5 % wobble as a 2x change; the scale's
 * ends are written on the plot. */
static void lines(FILE *f, const struct matrix *m, double lo, double hi, int clipped)
{
	const int ph = 260, top = 10;
	if (lo > 0)
		lo = 0;
	double dx = m->nc > 1 ? (double)PLOT_W / (double)(m->nc - 1) : 0;
	svg_open(f, LABEL_W + PLOT_W + 20, (size_t)(ph + top + 40));
	html_esc(f, table_title(m->t));
	fputs("\">\n", f);
	fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#ccc\"/>\n",
		LABEL_W, top, PLOT_W, ph);
	fprintf(f, "<text data-axis=\"top\" x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"#888\">",
		LABEL_W + PLOT_W - 3, top + 12);
	short_ns(f, hi);
	fprintf(f, "</text><text data-axis=\"bottom\" x=\"%d\" y=\"%d\" text-anchor=\"end\" "
		   "fill=\"#888\">", LABEL_W + PLOT_W - 3, top + ph - 4);
	short_ns(f, lo);
	fputs("</text>\n", f);
	for (size_t i = 0; i < m->nr; i++) {
		const char *col = palette[i % (sizeof palette / sizeof *palette)];
		fprintf(f, "<g><text x=\"0\" y=\"%zu\" fill=\"%s\">", (size_t)top + 12 + i * 14, col);
		html_esc(f, m->rlab[i]);
		fprintf(f, "</text><polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", col);
		for (size_t j = 0; j < m->nc; j++) {
			long r = m->cell[i * m->nc + j];
			if (r >= 0)
				fprintf(f, "%.1f,%.1f ", LABEL_W + (double)j * dx,
					top + ph - unit(table_num(m->t, (size_t)r, m->v), lo, hi) * ph);
		}
		fputs("\"/>\n", f);
		for (size_t j = 0; j < m->nc; j++) {
			long r = m->cell[i * m->nc + j];
			if (r < 0)
				continue;
			fprintf(f, "<circle data-r=\"%ld\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\">", r,
				LABEL_W + (double)j * dx,
				top + ph - unit(table_num(m->t, (size_t)r, m->v), lo, hi) * ph, col);
			cell_title(f, m, i, j);
			fputs("</circle>", f);
		}
		fputs("</g>\n", f);
	}
	foot(f, m, LABEL_W + PLOT_W, top + ph + 16, clipped);
}

void html_svg_matrix(FILE *f, const struct matrix *m)
{
	double lo, hi;
	if (!m->nr || !m->nc)
		return;
	int clipped = range(m, &lo, &hi);
	if (m->fixed)
		lo = m->lo, hi = m->hi, clipped = 0;
	if (m->lines)
		lines(f, m, lo, hi, clipped);
	else
		heat(f, m, lo, hi, clipped);
}
