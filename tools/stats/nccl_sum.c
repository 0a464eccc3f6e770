// SPDX-License-Identifier: MIT
/* nccl_sum, nccl_sizes, nccl_calls, nccl_ranks: NCCL operations per
 * operation and datatype (with nccl-tests' algorithm and bus bandwidths),
 * per message-size bucket, per exact message size, per rank. Counts are
 * per rank: an AllReduce on 8 ranks is 8 calls. Times are GPU times; bandwidths use the operations that have
 * one (traces: kernel-channel timers or the NCCL kernel; logs have none). */
#include "stats/nccl_collect.h"
#include "stats/stats.h"
#include "read/nccl_names.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct st {
	int feeder;
	const struct stats_opts *opts;
	struct nccl_adds adds; /* a part's (one file's) operations */
};

static void *begin(const struct stats_opts *opts)
{
	struct st *s = xcalloc(1, sizeof *s);
	s->feeder = nccl_collect_begin(opts);
	s->opts = opts;
	return s;
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	struct st *s = p;
	if (s->feeder)
		nccl_collect_event(&s->adds, t, ev);
}

/* A part is not one of the collection's users: it only notes. */
static void *part(void *p)
{
	struct st *s = p, *q = xcalloc(1, sizeof *q);
	q->feeder = s->feeder;
	q->opts = s->opts;
	return q;
}

static void merge(void *p, void *q)
{
	struct st *s = q;
	if (s->feeder)
		nccl_collect_merge(&s->adds);
	nccl_agg_free(&s->adds.agg);
	free(s);
	(void)p;
}

static void pack(void *q, struct pack *b)
{
	struct st *s = q;
	const struct nccl_agg *a = &s->adds.agg;
	pk_array(b, a->v, a->n, sizeof *a->v);
	pk_array(b, a->s, a->ns, sizeof *a->s);
	pk_u64(b, s->adds.t ? (uint64_t)s->adds.t->index + 1 : 0);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	struct st *q = part(p);
	struct nccl_agg *a = &q->adds.agg;
	a->v = up_array(b, &a->n, sizeof *a->v);
	a->cap = a->n;
	a->s = up_array(b, &a->ns, sizeof *a->s);
	a->scap = a->ns;
	uint64_t t = up_u64(b);
	q->adds.t = t && t <= in->n ? &in->v[t - 1] : NULL;
	return q;
}

static void log_input(void *p, const char *path)
{
	struct st *s = p;
	if (s->feeder)
		nccl_collect_log(path);
}

/* The collection, or NULL when it is empty and the report was not asked
 * for by name (then it prints nothing). */
static const struct nccl_agg *result(void *p)
{
	struct st *s = p;
	int named = s->opts->explicit_list;
	free(p);
	const struct nccl_agg *a = nccl_collect_result();
	return a->n || named ? a : NULL;
}

static void opt_time(struct table *t, uint64_t n, double v, int decimals)
{
	if (n)
		table_f(t, v, decimals);
	else
		table_null(t);
}

/* ---- nccl_sum ---- */

/* The rows of a, merged where same() says two rows are one (summing what
 * adds up); a calloc'd array the caller frees. */
static struct nccl_row *merge_rows(const struct nccl_agg *a,
                                   int (*same)(const struct nccl_row *, const struct nccl_row *),
                                   size_t *count)
{
	struct nccl_row *m = xcalloc(a->n + 1, sizeof *m);
	size_t n = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct nccl_row *r = &a->v[i];
		size_t k;
		for (k = 0; k < n && !same(&m[k], r); k++)
			;
		if (k == n) {
			m[n++] = *r;
			continue;
		}
		struct nccl_row *x = &m[k];
		x->calls += r->calls, x->bytes += r->bytes;
		x->min = r->min < x->min ? r->min : x->min;
		x->max = r->max > x->max ? r->max : x->max;
		x->timed += r->timed, x->timed_bytes += r->timed_bytes, x->time_ns += r->time_ns;
		x->bus_bytes += r->bus_bytes;
	}
	*count = n;
	return m;
}

static int same_op_dtype(const struct nccl_row *x, const struct nccl_row *y)
{
	return !strcmp(x->func, y->func) && !strcmp(x->dtype, y->dtype);
}

static int same_rank_op(const struct nccl_row *x, const struct nccl_row *y)
{
	return x->rank == y->rank && !strcmp(x->func, y->func);
}

static int cmp_sum(const void *x, const void *y)
{
	const struct nccl_row *a = x, *b = y;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	if (a->bytes != b->bytes)
		return a->bytes > b->bytes ? -1 : 1;
	int c = strcmp(a->func, b->func);
	return c ? c : strcmp(a->dtype, b->dtype);
}

static int end_sum(void *p, struct table **out)
{
	const struct nccl_agg *a = result(p);
	if (!a) {
		nccl_collect_release();
		return 0;
	}
	/* Rows of all ranks merged per (operation, datatype). */
	size_t n;
	struct nccl_row *m = merge_rows(a, same_op_dtype, &n);
	if (n > 1)
		qsort(m, n, sizeof *m, cmp_sum);
	static const char *cols[] = {"Operation",    "Datatype",        "Calls",
	                             "Total Bytes",  "Avg Bytes",       "Min Bytes",
	                             "Max Bytes",    "Total Time (ns)", "Avg Time (ns)",
	                             "Algbw (GB/s)", "Busbw (GB/s)"};
	struct table *t =
	    table_new("nccl_sum: NCCL operations by operation and datatype", 11, cols);
	for (size_t i = 0; i < n; i++) {
		const struct nccl_row *r = &m[i];
		table_row(t);
		table_str(t, r->func);
		table_str(t, r->dtype);
		table_u64(t, r->calls);
		table_u64(t, r->bytes);
		table_f(t, (double)r->bytes / (double)r->calls, 1);
		table_u64(t, r->min);
		table_u64(t, r->max);
		if (r->timed)
			table_u64(t, r->time_ns);
		else
			table_null(t);
		opt_time(t, r->timed, (double)r->time_ns / (double)(r->timed ? r->timed : 1), 1);
		/* bytes per ns = GB/s (10^9 bytes), as nccl-tests prints */
		double ns = r->time_ns ? (double)r->time_ns : 1;
		opt_time(t, r->timed && r->time_ns, (double)r->timed_bytes / ns, 3);
		opt_time(t, r->timed && r->time_ns, r->bus_bytes / ns, 3);
	}
	free(m);
	out[0] = t;
	nccl_collect_release();
	return 1;
}

/* ---- nccl_sizes ---- */

static int cmp_name(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

static int cmp_i64(const void *x, const void *y)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	return a < b ? -1 : a > b;
}

static void bucket_cells(struct table *t, const uint64_t *b)
{
	uint64_t total = 0;
	for (int k = 0; k < NB_N; k++) {
		table_u64(t, b[k]);
		total += b[k];
	}
	table_u64(t, total);
}

static int end_sizes(void *p, struct table **out)
{
	const struct nccl_agg *a = result(p);
	if (!a) {
		nccl_collect_release();
		return 0;
	}
	const char *cols[2 + NB_N];
	cols[0] = "Operation";
	for (int k = 0; k < NB_N; k++)
		cols[1 + k] = nccl_bucket_name[k];
	cols[1 + NB_N] = "Total";
	struct table *t1 =
	    table_new("nccl_sizes: calls per message size, by operation", 2 + NB_N, cols);
	const char **names = xcalloc(a->n + 1, sizeof *names);
	int64_t *ranks = xcalloc(a->n + 1, sizeof *ranks);
	size_t nn = 0, nr = 0;
	for (size_t i = 0; i < a->n; i++) {
		size_t k;
		for (k = 0; k < nn && strcmp(names[k], a->v[i].func); k++)
			;
		if (k == nn)
			names[nn++] = a->v[i].func;
		for (k = 0; k < nr && ranks[k] != a->v[i].rank; k++)
			;
		if (k == nr)
			ranks[nr++] = a->v[i].rank;
	}
	qsort(names, nn, sizeof *names, cmp_name);
	qsort(ranks, nr, sizeof *ranks, cmp_i64);
	for (size_t k = 0; k < nn; k++) {
		uint64_t b[NB_N] = {0};
		for (size_t i = 0; i < a->n; i++)
			if (!strcmp(a->v[i].func, names[k]))
				for (int j = 0; j < NB_N; j++)
					b[j] += a->v[i].bucket[j];
		table_row(t1);
		table_str(t1, names[k]);
		bucket_cells(t1, b);
	}
	cols[0] = "Rank";
	struct table *t2 = table_new("nccl_sizes: calls per message size, by rank", 2 + NB_N, cols);
	for (size_t k = 0; k < nr; k++) {
		uint64_t b[NB_N] = {0};
		for (size_t i = 0; i < a->n; i++)
			if (a->v[i].rank == ranks[k])
				for (int j = 0; j < NB_N; j++)
					b[j] += a->v[i].bucket[j];
		table_row(t2);
		table_i64(t2, ranks[k]);
		bucket_cells(t2, b);
	}
	free(names);
	free(ranks);
	out[0] = t1;
	out[1] = t2;
	nccl_collect_release();
	return 2;
}

/* ---- nccl_calls ---- */

static int cmp_size_row(const void *x, const void *y)
{
	const struct nccl_size_row *a = *(const struct nccl_size_row *const *)x,
	                           *b = *(const struct nccl_size_row *const *)y;
	int c = strcmp(a->func, b->func);
	if (c)
		return c;
	if ((c = strcmp(a->dtype, b->dtype)))
		return c;
	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? -1 : 1;
	return a->nranks < b->nranks ? -1 : a->nranks > b->nranks;
}

static int end_calls(void *p, struct table **out)
{
	const struct nccl_agg *a = result(p);
	if (!a) {
		nccl_collect_release();
		return 0;
	}
	const struct nccl_size_row **m = xcalloc(a->ns + 1, sizeof *m);
	for (size_t i = 0; i < a->ns; i++)
		m[i] = &a->s[i];
	qsort(m, a->ns, sizeof *m, cmp_size_row);
	static const char *cols[] = {"Operation",       "Datatype",      "Comm Size",
	                             "Message Bytes",   "Calls",         "Total Bytes",
	                             "Total Time (ns)", "Avg Time (ns)", "Min Time (ns)",
	                             "Max Time (ns)",   "Algbw (GB/s)",  "Busbw (GB/s)"};
	struct table *t = table_new(
	    "nccl_calls: NCCL calls per operation, datatype and message size", 12, cols);
	for (size_t i = 0; i < a->ns; i++) {
		const struct nccl_size_row *r = m[i];
		table_row(t);
		table_str(t, r->func);
		table_str(t, r->dtype);
		if (r->nranks > 0)
			table_i64(t, r->nranks);
		else
			table_null(t);
		table_u64(t, r->bytes);
		table_u64(t, r->calls);
		table_u64(t, r->bytes * r->calls);
		if (r->timed) {
			table_u64(t, r->time_ns);
			table_f(t, (double)r->time_ns / (double)r->timed, 1);
			table_u64(t, r->min_ns);
			table_u64(t, r->max_ns);
		} else {
			for (int k = 0; k < 4; k++)
				table_null(t);
		}
		/* bytes per ns = GB/s, as nccl_sum */
		double algbw = r->time_ns ? (double)r->bytes * (double)r->timed / (double)r->time_ns : 0;
		opt_time(t, r->timed && r->time_ns, algbw, 3);
		opt_time(t, r->timed && r->time_ns, algbw * nccl_bus_factor(r->func, r->nranks), 3);
	}
	free(m);
	out[0] = t;
	nccl_collect_release();
	return 1;
}

/* ---- nccl_ranks ---- */

static int cmp_rank_op(const void *x, const void *y)
{
	const struct nccl_row *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return strcmp(a->func, b->func);
}

static int end_ranks(void *p, struct table **out)
{
	const struct nccl_agg *a = result(p);
	if (!a) {
		nccl_collect_release();
		return 0;
	}
	size_t n;
	struct nccl_row *m = merge_rows(a, same_rank_op, &n);
	if (n > 1)
		qsort(m, n, sizeof *m, cmp_rank_op);
	static const char *cols[] = {"Rank", "Operation", "Calls", "Total Bytes",
	                             "Total Time (ns)"};
	struct table *t =
	    table_new("nccl_ranks: NCCL calls and bytes per rank and operation", 5, cols);
	for (size_t i = 0; i < n; i++) {
		table_row(t);
		table_i64(t, m[i].rank);
		table_str(t, m[i].func);
		table_u64(t, m[i].calls);
		table_u64(t, m[i].bytes);
		if (m[i].timed)
			table_u64(t, m[i].time_ns);
		else
			table_null(t);
	}
	free(m);
	out[0] = t;
	nccl_collect_release();
	return 1;
}

const struct report report_nccl_sum = {
    "nccl_sum", "NCCL operations per operation and datatype: calls, bytes, GPU time, algbw, busbw",
    begin,      event,      end_sum,
    log_input,  1,          merge,
    part, .pack = pack, .unpack = unpack,
};
const struct report report_nccl_sizes = {
    "nccl_sizes", "NCCL calls per message size (<64KB, 64KB-1MB, 1MB-16MB, >16MB)",
    begin,        event,        end_sizes,
    log_input,    1,            merge,
    part, .pack = pack, .unpack = unpack,
};
const struct report report_nccl_calls = {
    "nccl_calls", "NCCL calls per operation, datatype and message size (every size listed)",
    begin,        event,        end_calls,
    log_input,    1,            merge,
    part, .pack = pack, .unpack = unpack,
};
const struct report report_nccl_ranks = {
    "nccl_ranks", "NCCL calls and bytes per rank and operation", begin, event, end_ranks,
    log_input,    1,            merge,
    part, .pack = pack, .unpack = unpack,
};
