// SPDX-License-Identifier: MIT
/* mpi_sum: MPI calls per function and datatype (the mpi source, -t mpi):
 * calls, bytes sent and received as their arguments say (a receive: as
 * its status says), and the time spent in them. Calls are counted per
 * rank (an MPI_Allreduce on 4 ranks is 4 calls), every thread's. A call a
 * file ends inside (the process was killed while it waited) is not
 * summed: its end is not known; the table says how many. */
#include "stats/stats.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct row {
	char *func, *dtype;
	uint64_t calls, bytes, recv, time_ns, min_ns, max_ns;
};

struct st {
	const struct stats_opts *opts;
	struct hmap idx; /* hash of (func, dtype) -> index + 1 (probing on) */
	struct row *v;
	size_t n, cap;
	uint64_t unfinished;
};

static uint64_t key_of(const char *f, size_t fl, const char *d, size_t dl)
{
	uint64_t k = 1469598103934665603ull;
	for (size_t i = 0; i < fl; i++)
		k = (k ^ (unsigned char)f[i]) * 1099511628211ull;
	k = (k ^ 0xff) * 1099511628211ull;
	for (size_t i = 0; i < dl; i++)
		k = (k ^ (unsigned char)d[i]) * 1099511628211ull;
	return k + !k;
}

static int same(const struct row *r, const char *f, size_t fl, const char *d, size_t dl)
{
	return strlen(r->func) == fl && !memcmp(r->func, f, fl) && strlen(r->dtype) == dl &&
	       !memcmp(r->dtype, d, dl);
}

static char *dup_n(const char *s, size_t n)
{
	char *c = xrealloc(NULL, n + 1);
	memcpy(c, s, n);
	c[n] = 0;
	return c;
}

static struct row *row_of(struct st *s, const char *f, size_t fl, const char *d, size_t dl)
{
	for (uint64_t k = key_of(f, fl, d, dl);; k += 1 + !(k + 1)) {
		size_t i = (uintptr_t)hmap_get(&s->idx, k);
		if (!i) {
			if (s->n == s->cap) {
				s->cap = s->cap ? 2 * s->cap : 32;
				s->v = xrealloc(s->v, s->cap * sizeof *s->v);
			}
			struct row *r = &s->v[s->n++];
			memset(r, 0, sizeof *r);
			r->func = dup_n(f, fl), r->dtype = dup_n(d, dl);
			r->min_ns = UINT64_MAX;
			hmap_put(&s->idx, k, (void *)(uintptr_t)s->n);
			return r;
		}
		if (same(&s->v[i - 1], f, fl, d, dl))
			return &s->v[i - 1];
	}
}

static void add(struct st *s, const struct row *x)
{
	struct row *r = row_of(s, x->func, strlen(x->func), x->dtype, strlen(x->dtype));
	r->calls += x->calls, r->bytes += x->bytes, r->recv += x->recv, r->time_ns += x->time_ns;
	r->min_ns = x->min_ns < r->min_ns ? x->min_ns : r->min_ns;
	r->max_ns = x->max_ns > r->max_ns ? x->max_ns : r->max_ns;
}

static void *begin(const struct stats_opts *opts)
{
	struct st *s = xcalloc(1, sizeof *s);
	s->opts = opts;
	return s;
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	struct st *s = p;
	(void)t;
	if (ev->cat != MC_MPI || ev->type != ME_SLICE)
		return;
	const struct m_mpi *x = ev->mpi;
	if (x->unfinished) {
		s->unfinished++;
		return;
	}
	uint64_t d = ev->end > ev->ts ? ev->end - ev->ts : 0;
	struct row *r =
	    row_of(s, x->func.s ? x->func.s : "", x->func.s ? x->func.len : 0,
	           x->datatype.s ? x->datatype.s : "", x->datatype.s ? x->datatype.len : 0);
	r->calls++, r->bytes += x->bytes, r->recv += x->recv_bytes, r->time_ns += d;
	r->min_ns = d < r->min_ns ? d : r->min_ns;
	r->max_ns = d > r->max_ns ? d : r->max_ns;
}

static void *part(void *p)
{
	return begin(((struct st *)p)->opts);
}

static void st_free(struct st *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].func), free(s->v[i].dtype);
	free(s->v);
	hmap_free(&s->idx);
	free(s);
}

static void drop(void *q)
{
	st_free(q);
}

static void merge(void *p, void *q)
{
	struct st *s = p, *part = q;
	for (size_t i = 0; i < part->n; i++)
		add(s, &part->v[i]);
	s->unfinished += part->unfinished;
	st_free(part);
}

static void pack(void *q, struct pack *b)
{
	struct st *s = q;
	pk_u64(b, s->n);
	for (size_t i = 0; i < s->n; i++) {
		struct row r = s->v[i];
		pk_str(b, r.func);
		pk_str(b, r.dtype);
		r.func = r.dtype = NULL;
		PK(b, r);
	}
	pk_u64(b, s->unfinished);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct st *s = part(p);
	uint64_t n = up_u64(b);
	for (uint64_t i = 0; i < n && !b->bad; i++) {
		char *f = up_str(b), *d = up_str(b);
		struct row x;
		UP(b, x);
		x.func = f ? f : "", x.dtype = d ? d : "";
		add(s, &x);
		free(f), free(d);
	}
	s->unfinished = up_u64(b);
	return s;
}

static int cmp_row(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	if (a->time_ns != b->time_ns)
		return a->time_ns > b->time_ns ? -1 : 1;
	int c = strcmp(a->func, b->func);
	return c ? c : strcmp(a->dtype, b->dtype);
}

static int end(void *p, struct table **out)
{
	struct st *s = p;
	if (!s->n && !s->unfinished && !s->opts->explicit_list) {
		st_free(s);
		return 0;
	}
	if (s->n > 1)
		qsort(s->v, s->n, sizeof *s->v, cmp_row);
	uint64_t total = 0;
	for (size_t i = 0; i < s->n; i++)
		total += s->v[i].time_ns;
	static const char *cols[] = {"Time (%)",    "Total Time (ns)", "Calls",     "Avg (ns)",
	                             "Min (ns)",    "Max (ns)",        "Function",  "Datatype",
	                             "Total Bytes", "Avg Bytes",       "Recv Bytes"};
	struct table *t = table_new("mpi_sum: MPI calls by function and datatype", 11, cols);
	for (size_t i = 0; i < s->n; i++) {
		const struct row *r = &s->v[i];
		table_row(t);
		table_f(t, total ? 100.0 * (double)r->time_ns / (double)total : 0, 1);
		table_u64(t, r->time_ns);
		table_u64(t, r->calls);
		table_f(t, (double)r->time_ns / (double)r->calls, 1);
		table_u64(t, r->min_ns);
		table_u64(t, r->max_ns);
		table_str(t, r->func);
		table_str(t, r->dtype);
		table_u64(t, r->bytes);
		table_f(t, (double)r->bytes / (double)r->calls, 1);
		table_u64(t, r->recv);
	}
	char note[160];
	if (!s->n && !s->unfinished)
		table_note(t, "no MPI call in the inputs (traced with -t mpi?)");
	else if (s->unfinished) {
		snprintf(note, sizeof note,
		         "%llu call%s still waiting when %s file ended left out (see mpi_hang)",
		         (unsigned long long)s->unfinished, s->unfinished > 1 ? "s" : "",
		         s->unfinished > 1 ? "their" : "its");
		table_note(t, note);
	}
	st_free(s);
	out[0] = t;
	return 1;
}

const struct report report_mpi_sum = {
    "mpi_sum", "MPI calls per function and datatype: calls, time, bytes sent and received",
    begin,     event,
    end,       NULL,
    0,         merge,
    part,      .pack = pack, .unpack = unpack, .drop = drop,
};
