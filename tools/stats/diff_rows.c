// SPDX-License-Identifier: MIT
/* The rows cuptrace diff compares, read from the tables of a run: which
 * columns name a row, hold its total, its count and its median, for each
 * report; steps and breakdown folded into rows of their own (the step;
 * GPU compute, communication, memory and idle time). */
#include "stats/diff.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where a report's figures are: the title's prefix, the columns that name
 * a row (joined by " "), the total, the count and the median (NULL: none). */
/* clang-format off */
static const struct spec {
	const char *rep, *title, *names[2], *total, *count, *med;
} specs[] = {
	{"nvtx_sum", "nvtx_sum:", {"Range", NULL}, "Total Time (ns)", "Instances", "Med (ns)"},
	{"cuda_gpu_kern_sum", "cuda_gpu_kern_sum:", {"Name", NULL}, "Total Time (ns)",
	 "Instances", "Med (ns)"},
	{"cuda_api_sum", "cuda_api_sum:", {"Name", NULL}, "Total Time (ns)", "Num Calls",
	 "Med (ns)"},
	{"nccl_sum", "nccl_sum:", {"Operation", "Datatype"}, "Total Time (ns)", "Calls", NULL},
	{"mpi_sum", "mpi_sum:", {"Function", "Datatype"}, "Total Time (ns)", "Calls", NULL},
	{"torch_op_sum", "torch_op_sum:", {"Name", NULL}, "CPU Total (ns)", "Calls", NULL},
	{"steps", "steps: step duration per rank", {NULL, NULL}, "Total Time (ns)", "Steps",
	 "Med (ns)"},
	{"breakdown", "breakdown: GPU time by compute", {NULL, NULL}, NULL, NULL, NULL},
};
/* clang-format on */

const char *const diff_report_names[] = {"steps",        "nvtx_sum",  "cuda_gpu_kern_sum",
                                         "cuda_api_sum", "nccl_sum",  "mpi_sum",
                                         "torch_op_sum", "breakdown", NULL};

static const struct table *find_table(const struct diff_run *r, const char *title)
{
	for (size_t i = 0; i < r->n; i++)
		if (!strncmp(table_title(r->v[i]), title, strlen(title)))
			return r->v[i];
	return NULL;
}

static double num(const struct table *t, size_t row, int col)
{
	return col < 0 ? NAN : table_num(t, row, col);
}

/* A row of name, added (zero); rows of one name are folded together by
 * finish() once all are in. */
static struct drow *row_add(struct drows *out, const char *name)
{
	if (out->n == out->cap) {
		out->cap = out->cap ? 2 * out->cap : 64;
		out->v = xrealloc(out->v, out->cap * sizeof *out->v);
	}
	struct drow *r = &out->v[out->n++];
	memset(r, 0, sizeof *r);
	r->name = xstrdup(name);
	r->med = NAN;
	char key[1024];
	diff_key(name, key, sizeof key);
	r->key = xstrdup(key);
	return r;
}

static int cmp_name(const void *x, const void *y)
{
	return strcmp(((const struct drow *)x)->name, ((const struct drow *)y)->name);
}

/* The rows by name, those of one name folded into one. */
static void finish(struct drows *out)
{
	if (out->n > 1)
		qsort(out->v, out->n, sizeof *out->v, cmp_name);
	size_t k = 0;
	for (size_t i = 0; i < out->n; i++) {
		struct drow *r = &out->v[i];
		if (k && !strcmp(out->v[k - 1].name, r->name)) {
			drow_fold(&out->v[k - 1], r);
			free(r->name), free(r->key), free(r->d);
		} else {
			out->v[k++] = *r;
		}
	}
	out->n = k;
}

void drow_fold(struct drow *into, const struct drow *from)
{
	int first = into->count == 0 && into->total == 0 && !into->nd;
	into->total += from->total;
	into->count += from->count;
	if (from->nd) {
		into->d = xrealloc(into->d, (into->nd + from->nd) * sizeof *into->d);
		memcpy(into->d + into->nd, from->d, from->nd * sizeof *from->d);
		into->nd += from->nd;
	}
	/* a median of medians is none: only the one row's own stays */
	into->med = first ? from->med : NAN;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

double drow_median(struct drow *r)
{
	if (!r->nd)
		return r->med;
	qsort(r->d, r->nd, sizeof *r->d, cmp_u64);
	size_t n = r->nd;
	return n % 2 ? (double)r->d[n / 2] : ((double)r->d[n / 2 - 1] + (double)r->d[n / 2]) / 2;
}

/* Rows of a table where a row is one name. */
static void plain_rows(const struct table *t, const struct spec *s, struct drows *out)
{
	int nc[2] = {table_find_col(t, s->names[0]),
	             s->names[1] ? table_find_col(t, s->names[1]) : -1};
	int tc = table_find_col(t, s->total), cc = table_find_col(t, s->count);
	int mc = s->med ? table_find_col(t, s->med) : -1;
	if (nc[0] < 0 || tc < 0 || cc < 0)
		return;
	for (size_t i = 0; i < table_nrows(t); i++) {
		char name[2048];
		const char *b = nc[1] >= 0 ? table_cell(t, i, nc[1], NULL) : "";
		snprintf(name, sizeof name, "%s%s%s", table_cell(t, i, nc[0], NULL), *b ? " " : "",
		         b);
		struct drow one = {
		    .total = num(t, i, tc), .count = num(t, i, cc), .med = num(t, i, mc)};
		if (isnan(one.total))
			continue; /* no time known (an NCCL log's calls) */
		one.d = (uint64_t *)table_samples(t, i, &one.nd);
		drow_fold(row_add(out, name), &one);
	}
}

/* steps: every rank's steps as one row, "step". */
static void step_rows(const struct table *t, const struct spec *s, struct drows *out)
{
	int tc = table_find_col(t, s->total), cc = table_find_col(t, s->count);
	if (tc < 0 || cc < 0 || !table_nrows(t))
		return;
	struct drow *r = row_add(out, "step");
	for (size_t i = 0; i < table_nrows(t); i++) {
		struct drow one = {.total = num(t, i, tc), .count = num(t, i, cc), .med = NAN};
		one.d = (uint64_t *)table_samples(t, i, &one.nd);
		drow_fold(r, &one);
	}
}

/* breakdown: each kind of GPU time a row, over every rank and GPU's
 * whole-window row (not its rows per step), an instance per GPU. */
static void breakdown_rows(const struct table *t, struct drows *out)
{
	static const char *const kinds[] = {"Compute", "Communication", "Memory", "Idle"};
	int step = table_find_col(t, "Step");
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		char col[64];
		snprintf(col, sizeof col, "%s (ns)", kinds[k]);
		int c = table_find_col(t, col);
		if (c < 0)
			continue;
		for (size_t i = 0; i < table_nrows(t); i++) {
			double v = table_num(t, i, c);
			if ((step >= 0 && !isnan(table_num(t, i, step))) || isnan(v))
				continue;
			uint64_t d = (uint64_t)v;
			struct drow one = {.total = v, .count = 1, .med = NAN, .d = &d, .nd = 1};
			drow_fold(row_add(out, kinds[k]), &one);
		}
	}
}

void diff_rows_of(const struct diff_run *r, const char *rep, struct drows *out)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
		if (strcmp(specs[i].rep, rep))
			continue;
		const struct table *t = find_table(r, specs[i].title);
		if (!t)
			return;
		if (!strcmp(rep, "steps"))
			step_rows(t, &specs[i], out);
		else if (!strcmp(rep, "breakdown"))
			breakdown_rows(t, out);
		else
			plain_rows(t, &specs[i], out);
		finish(out);
	}
}

void diff_rows_free(struct drows *rows)
{
	for (size_t i = 0; i < rows->n; i++)
		free(rows->v[i].name), free(rows->v[i].key), free(rows->v[i].d);
	free(rows->v);
	memset(rows, 0, sizeof *rows);
}

/* NCCL's algorithms and protocols, as its kernel names carry them
 * (ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclKernel_..._TREE_LL128). */
static int nccl_algo_proto(const char *s, size_t n)
{
	static const char *const w[] = {"RING", "TREE", "COLLNET", "DIRECT", "CHAIN",
	                                "NVLS", "PAT",  "LL",      "LL128",  "SIMPLE"};
	for (size_t i = 0; i < sizeof w / sizeof *w; i++)
		if (strlen(w[i]) == n && !memcmp(w[i], s, n))
			return 1;
	return 0;
}

void diff_key(const char *name, char *buf, size_t len)
{
	size_t o = 0;
	if (!len)
		return;
	if (!strncmp(name, "nccl", 4)) { /* words between '_' of the name, some left out */
		size_t end = strcspn(name, "(<");
		for (const char *p = name; p < name + end;) {
			size_t n = strcspn(p, "_");
			n = p + n > name + end ? (size_t)(name + end - p) : n;
			if (!nccl_algo_proto(p, n) && o < len)
				o += (size_t)snprintf(buf + o, len - o, "%s%.*s", o ? "_" : "",
				                      (int)n, p);
			p += n + (p[n] == '_');
		}
		o = o < len ? o : len - 1;
		name += end; /* the arguments as they are */
	}
	/* template arguments emptied: "<...>" (nested ones within) becomes "<>",
	 * when the '<' has its '>' */
	for (const char *p = name; *p && o + 1 < len; p++) {
		buf[o++] = *p;
		if (*p != '<')
			continue;
		int depth = 1;
		const char *q = p + 1;
		for (; *q && depth; q++)
			depth += (*q == '<') - (*q == '>');
		if (!depth && q - p > 2) /* "<>" or "<<" (an operator) stay */
			p = q - 2;
	}
	buf[o] = 0;
}
