// SPDX-License-Identifier: MIT
#include "stats/table.h"
#include "util/json_escape.h"
#include "util/term_escape.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cell {
	char *text;
	int numeric; /* 2: a number not known (null) */
};

struct table {
	char *title;
	char *note;
	int ncols;
	char **cols;
	struct cell *cells;
	size_t n, cap; /* cells */
	struct samples {
		uint64_t *d;
		size_t n;
	} *samp; /* by row, nsamp of them (table_take_samples) */
	size_t nsamp;
};

struct table *table_new(const char *title, int ncols, const char *const *cols)
{
	struct table *t = xcalloc(1, sizeof *t);
	t->title = xstrdup(title);
	t->ncols = ncols;
	t->cols = xcalloc((size_t)ncols, sizeof *t->cols);
	for (int i = 0; i < ncols; i++)
		t->cols[i] = xstrdup(cols[i]);
	return t;
}

void table_row(struct table *t)
{
	(void)t; /* rows are implied by the column count */
}

static void add(struct table *t, char *text, int numeric)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 64;
		t->cells = xrealloc(t->cells, t->cap * sizeof *t->cells);
	}
	t->cells[t->n++] = (struct cell){text, numeric};
}

void table_str(struct table *t, const char *s)
{
	add(t, xstrdup(s), 0);
}

void table_u64(struct table *t, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%" PRIu64, v);
	add(t, xstrdup(b), 1);
}

void table_i64(struct table *t, int64_t v)
{
	char b[32];
	snprintf(b, sizeof b, "%" PRId64, v);
	add(t, xstrdup(b), 1);
}

void table_f(struct table *t, double v, int decimals)
{
	if (!isfinite(v)) { /* not a number any format can hold (JSON has no inf) */
		table_null(t);
		return;
	}
	char b[400]; /* %.*f of up to 1.8e308 */
	snprintf(b, sizeof b, "%.*f", decimals, v);
	add(t, xstrdup(b), 1);
}

void table_g(struct table *t, double v, int digits)
{
	if (!isfinite(v)) {
		table_null(t);
		return;
	}
	char b[64];
	snprintf(b, sizeof b, "%.*g", digits, v);
	add(t, xstrdup(b), 1);
}

void table_null(struct table *t)
{
	add(t, xstrdup(""), 2);
}

/* text / div with `decimals` digits, rounded half up, exactly for a
 * decimal text ([-]digits[.digits], as the tables hold numbers); other
 * text goes through double. */
static char *scaled(const char *text, uint64_t div, int decimals)
{
	char b[400];
	const char *p = text + (*text == '-');
	unsigned long long m = 0, scale = 1;
	int digits = 0, frac = -1, ok = *p != 0;
	for (; *p && ok; p++) {
		if (*p == '.' && frac < 0)
			frac = 0;
		else if (*p >= '0' && *p <= '9' && digits < 18)
			m = m * 10 + (unsigned)(*p - '0'), digits++, frac += frac >= 0;
		else
			ok = 0;
	}
	uint64_t d = div; /* m / 10^frac / div = m / d */
	for (int i = 0; i < frac && ok; i++)
		if ((ok = d <= UINT64_MAX / 10))
			d *= 10;
	for (int i = 0; i < decimals; i++)
		scale *= 10;
	if (ok && d <= 1000000000000ULL) { /* m % d * scale < 2^63 */
		unsigned long long f = (m % d * scale + d / 2) / d, whole = m / d + f / scale;
		f %= scale;
		const char *sign = *text == '-' && (whole || f) ? "-" : "";
		if (decimals)
			snprintf(b, sizeof b, "%s%llu.%0*llu", sign, whole, decimals, f);
		else
			snprintf(b, sizeof b, "%s%llu", sign, whole);
	} else {
		snprintf(b, sizeof b, "%.*f", decimals, strtod(text, NULL) / (double)div);
	}
	return xstrdup(b);
}

void table_timeunit(struct table *t, const char *unit, uint64_t ns_per_unit, int decimals)
{
	for (int c = 0; c < t->ncols; c++) {
		size_t n = strlen(t->cols[c]);
		if (n < 5 || strcmp(t->cols[c] + n - 5, " (ns)"))
			continue;
		char name[256];
		snprintf(name, sizeof name, "%.*s (%s)", (int)(n - 5), t->cols[c], unit);
		free(t->cols[c]);
		t->cols[c] = xstrdup(name);
		for (size_t i = (size_t)c; i < t->n; i += (size_t)t->ncols) {
			if (t->cells[i].numeric != 1)
				continue;
			char *v = scaled(t->cells[i].text, ns_per_unit, decimals);
			free(t->cells[i].text);
			t->cells[i].text = v;
		}
	}
}

void table_note(struct table *t, const char *note)
{
	free(t->note);
	t->note = xstrdup(note);
}

/* CSV is read as UTF-8 (pandas, Python's csv): the traced program's
 * invalid bytes become U+FFFD (util/utf8.h), as in the JSON. */
static void csv_field(FILE *f, const char *s)
{
	size_t n = strlen(s);
	char *tmp;
	s = utf8_clean(s, &n, &tmp);
	if (!strpbrk(s, ",\"\n\r")) {
		fputs(s, f);
	} else {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	}
	free(tmp);
}

/* TSV (nsys stats --format tsv) has no quoting: a tab or line break in a
 * field (a range name) becomes a space. UTF-8 as CSV. */
static void tsv_field(FILE *f, const char *s)
{
	size_t n = strlen(s);
	char *tmp;
	s = utf8_clean(s, &n, &tmp);
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
	free(tmp);
}

/* A line of CSV or TSV after '#': title or note. */
static void csv_comment(FILE *f, const char *what, const char *s)
{
	size_t n = strlen(s);
	char *tmp;
	s = utf8_clean(s, &n, &tmp);
	fprintf(f, "# %s%s\n", what, s);
	free(tmp);
}

static void json_string(FILE *f, const char *s)
{
	size_t n;
	char *e = json_escape(s, strlen(s), &n);
	fputc('"', f);
	fwrite(e, 1, n, f);
	fputc('"', f);
	free(e);
}

void table_print(struct table *t, FILE *f, enum table_fmt fmt, int first)
{
	table_print_as(t, f, fmt, first, 0);
}

void table_print_as(struct table *t, FILE *f, enum table_fmt fmt, int first, int alone)
{
	size_t rows = t->n / (size_t)t->ncols;
	if (fmt == FMT_JSON) {
		if (!alone) {
			fprintf(f, "%s", first ? "{" : ",");
			json_string(f, t->title);
			fprintf(f, ": ");
		}
		fprintf(f, "[");
		for (size_t r = 0; r < rows; r++) {
			fprintf(f, "%s\n  {", r ? "," : "");
			for (int c = 0; c < t->ncols; c++) {
				struct cell *x = &t->cells[r * (size_t)t->ncols + (size_t)c];
				fprintf(f, "%s", c ? ", " : "");
				json_string(f, t->cols[c]);
				fprintf(f, ": ");
				if (x->numeric == 2)
					fputs("null", f);
				else if (x->numeric)
					fputs(x->text, f);
				else
					json_string(f, x->text);
			}
			fprintf(f, "}");
		}
		fprintf(f, alone ? "\n]\n" : "\n]");
		return;
	}
	if (fmt == FMT_CSV || fmt == FMT_TSV) {
		int sep = fmt == FMT_CSV ? ',' : '\t';
		void (*field)(FILE *, const char *) = fmt == FMT_CSV ? csv_field : tsv_field;
		if (!first)
			fputc('\n', f);
		if (!alone)
			csv_comment(f, "", t->title);
		if (t->note && !alone)
			csv_comment(f, "note: ", t->note);
		for (int c = 0; c < t->ncols; c++) {
			if (c)
				fputc(sep, f);
			field(f, t->cols[c]);
		}
		fputc('\n', f);
		for (size_t r = 0; r < rows; r++) {
			for (int c = 0; c < t->ncols; c++) {
				if (c)
					fputc(sep, f);
				field(f, t->cells[r * (size_t)t->ncols + (size_t)c].text);
			}
			fputc('\n', f);
		}
		return;
	}
	/* Text from the traced program is escaped for the terminal (a newline
	 * would break the row, an ESC drive the terminal); widths in columns. */
	size_t *w = xcalloc((size_t)t->ncols, sizeof *w);
	char **esc = xcalloc(t->n, sizeof *esc);
	size_t *ew = xcalloc(t->n, sizeof *ew);
	for (int c = 0; c < t->ncols; c++)
		w[c] = strlen(t->cols[c]);
	for (size_t i = 0; i < t->n; i++) {
		esc[i] = term_escape(t->cells[i].text, strlen(t->cells[i].text), &ew[i]);
		if (ew[i] > w[i % (size_t)t->ncols])
			w[i % (size_t)t->ncols] = ew[i];
	}
	if (!first)
		fputc('\n', f);
	fprintf(f, "** %s\n\n", t->title);
	if (t->note)
		fprintf(f, " note: %s\n\n", t->note);
	/* The last column (a name, often: a kernel's can be thousands of
	 * characters) is not padded, and its rule stops at 64 columns. */
	int last = t->ncols - 1;
	if (w[last] > 64 && strlen(t->cols[last]) <= 64)
		w[last] = 64;
	for (int c = 0; c < t->ncols; c++)
		fprintf(f, "%s%*s", c ? "  " : " ", c < last ? -(int)w[c] : 0, t->cols[c]);
	fputc('\n', f);
	for (int c = 0; c < t->ncols; c++) {
		fprintf(f, "%s", c ? "  " : " ");
		for (size_t k = 0; k < w[c]; k++)
			fputc('-', f);
	}
	fputc('\n', f);
	for (size_t r = 0; r < rows; r++) {
		for (int c = 0; c < t->ncols; c++) {
			size_t i = r * (size_t)t->ncols + (size_t)c;
			size_t pad = w[c] > ew[i] ? w[c] - ew[i] : 0;
			fputs(c ? "  " : " ", f);
			/* numbers right-aligned, text left-aligned (last column unpadded) */
			if (t->cells[i].numeric)
				fprintf(f, "%*s", (int)pad, "");
			fputs(esc[i], f);
			if (!t->cells[i].numeric && c < t->ncols - 1)
				fprintf(f, "%*s", (int)pad, "");
		}
		fputc('\n', f);
	}
	if (!rows)
		fprintf(f, " (no rows)\n");
	for (size_t i = 0; i < t->n; i++)
		free(esc[i]);
	free(esc);
	free(ew);
	free(w);
}

void table_take_samples(struct table *t, size_t row, uint64_t *d, size_t n)
{
	if (row >= t->nsamp) {
		size_t cap = row + 1 > 2 * t->nsamp ? row + 1 : 2 * t->nsamp;
		t->samp = xrealloc(t->samp, cap * sizeof *t->samp);
		memset(t->samp + t->nsamp, 0, (cap - t->nsamp) * sizeof *t->samp);
		t->nsamp = cap;
	}
	free(t->samp[row].d);
	t->samp[row] = (struct samples){d, n};
}

const uint64_t *table_samples(const struct table *t, size_t row, size_t *n)
{
	*n = row < t->nsamp ? t->samp[row].n : 0;
	return row < t->nsamp ? t->samp[row].d : NULL;
}

void table_free(struct table *t)
{
	for (size_t i = 0; i < t->nsamp; i++)
		free(t->samp[i].d);
	free(t->samp);
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i].text);
	for (int c = 0; c < t->ncols; c++)
		free(t->cols[c]);
	free(t->cols);
	free(t->cells);
	free(t->title);
	free(t->note);
	free(t);
}

const char *table_title(const struct table *t)
{
	return t->title;
}

const char *table_get_note(const struct table *t)
{
	return t->note;
}

int table_ncols(const struct table *t)
{
	return t->ncols;
}

const char *table_col(const struct table *t, int c)
{
	return t->cols[c];
}

int table_find_col(const struct table *t, const char *name)
{
	for (int c = 0; c < t->ncols; c++)
		if (!strcmp(t->cols[c], name))
			return c;
	return -1;
}

size_t table_nrows(const struct table *t)
{
	return t->n / (size_t)t->ncols;
}

const char *table_cell(const struct table *t, size_t row, int col, int *kind)
{
	const struct cell *x = &t->cells[row * (size_t)t->ncols + (size_t)col];
	if (kind)
		*kind = x->numeric;
	return x->text;
}

double table_num(const struct table *t, size_t row, int col)
{
	const struct cell *x = &t->cells[row * (size_t)t->ncols + (size_t)col];
	return x->numeric == 1 ? strtod(x->text, NULL) : NAN;
}
