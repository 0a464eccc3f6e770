// SPDX-License-Identifier: MIT
/* Result tables of `cuptrace stats`, printed as an aligned table, CSV,
 * TSV or JSON (an array of objects keyed by column name). */
#ifndef CT_TABLE_H
#define CT_TABLE_H

#include <stdint.h>
#include <stdio.h>

enum table_fmt { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_TSV };

struct table;

struct table *table_new(const char *title, int ncols, const char *const *cols);
/* Cells of the current row, left to right. */
void table_row(struct table *t);
void table_str(struct table *t, const char *s);
void table_u64(struct table *t, uint64_t v);
void table_i64(struct table *t, int64_t v);
void table_f(struct table *t, double v, int decimals);
/* A number with `digits` significant digits (%g: 0.0123, 2.7e-13). */
void table_g(struct table *t, double v, int digits);
/* A number that is not known: blank in a table or CSV, null in JSON. */
void table_null(struct table *t);
/* A line under the title (text, CSV, TSV; JSON keeps the array alone) that
 * says why the table is empty, or what its rows leave out. */
void table_note(struct table *t, const char *note);
void table_print(struct table *t, FILE *f, enum table_fmt fmt, int first);
/* alone: the table is a file of its own (stats -o): CSV and TSV without
 * the title and note lines, JSON the array without its key. */
void table_print_as(struct table *t, FILE *f, enum table_fmt fmt, int first, int alone);

/* Times in another unit (stats --timeunit): each column whose name ends in
 * " (ns)" gets `unit` (e.g. "ms") in its name, and its numbers are divided
 * by ns_per_unit and printed with `decimals` digits after the point. */
void table_timeunit(struct table *t, const char *unit, uint64_t ns_per_unit, int decimals);

/* Reading a table back (the HTML report draws from the same cells that
 * the text, CSV and JSON forms print). */
const char *table_title(const struct table *t);
const char *table_get_note(const struct table *t); /* NULL: none */
int table_ncols(const struct table *t);
const char *table_col(const struct table *t, int c);
int table_find_col(const struct table *t, const char *name); /* -1: none */
size_t table_nrows(const struct table *t);
/* The text of a cell as JSON has it ("" for null); *kind (may be NULL):
 * 0 text, 1 number, 2 null. */
const char *table_cell(const struct table *t, size_t row, int col, int *kind);
/* A numeric cell's value (NaN for text or null). */
double table_num(const struct table *t, size_t row, int col);
void table_free(struct table *t);

/* The durations of a row's instances, kept beside its cells for the
 * reports that have them (durations.c, steps) so that cuptrace diff can
 * test two runs' rows against each other; no format prints them. The
 * table takes d (malloc'd, any order) and frees it. */
void table_take_samples(struct table *t, size_t row, uint64_t *d, size_t n);
/* Row row's durations (NULL, *n 0: none kept). */
const uint64_t *table_samples(const struct table *t, size_t row, size_t *n);

#endif
