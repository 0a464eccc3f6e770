// SPDX-License-Identifier: MIT
#include "stats/mpi_wait.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static struct mpi_wait_row *row_of(struct mpi_wait *w, int64_t rank)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i].rank == rank)
			return &w->v[i];
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 16;
		w->v = xrealloc(w->v, w->cap * sizeof *w->v);
	}
	struct mpi_wait_row *r = &w->v[w->n++];
	*r = (struct mpi_wait_row){rank, 0, 0, UINT64_MAX, 0};
	return r;
}

void mpi_wait_event(struct mpi_wait *w, int64_t rank, const struct m_event *ev)
{
	if (ev->type == ME_PROCESS || ev->type == ME_TRACK || !ev->ts)
		return;
	struct mpi_wait_row *r = row_of(w, rank);
	uint64_t end = ev->end > ev->ts ? ev->end : ev->ts;
	if (ev->ts < r->first)
		r->first = ev->ts;
	if (end > r->last)
		r->last = end;
	if (ev->cat == MC_MPI && ev->type == ME_SLICE) {
		r->calls++;
		r->mpi_ns += end - ev->ts;
	}
}

void mpi_wait_merge(struct mpi_wait *dst, struct mpi_wait *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct mpi_wait_row *s = &src->v[i];
		struct mpi_wait_row *d = row_of(dst, s->rank);
		d->calls += s->calls;
		d->mpi_ns += s->mpi_ns;
		if (s->first < d->first)
			d->first = s->first;
		if (s->last > d->last)
			d->last = s->last;
	}
	free(src->v);
	memset(src, 0, sizeof *src);
}

static int by_rank(const void *x, const void *y)
{
	const struct mpi_wait_row *a = x, *b = y;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

struct table *mpi_wait_table(struct mpi_wait *w)
{
	size_t any = 0;
	for (size_t i = 0; i < w->n; i++)
		any += w->v[i].calls > 0;
	if (!any) {
		free(w->v);
		memset(w, 0, sizeof *w);
		return NULL;
	}
	qsort(w->v, w->n, sizeof *w->v, by_rank);
	static const char *const cols[] = {"Rank", "Window (ns)", "MPI Calls", "In MPI (ns)",
	                                   "In MPI (%)"};
	struct table *t = table_new("breakdown: CPU time in MPI calls per rank", 5, cols);
	for (size_t i = 0; i < w->n; i++) {
		const struct mpi_wait_row *r = &w->v[i];
		uint64_t win = r->last > r->first ? r->last - r->first : 0;
		table_row(t);
		table_i64(t, r->rank);
		table_u64(t, win);
		table_u64(t, r->calls);
		table_u64(t, r->mpi_ns);
		if (win)
			table_f(t, 100.0 * (double)r->mpi_ns / (double)win, 1);
		else
			table_null(t);
	}
	table_note(t, "the calls' durations summed over the rank's threads, against its trace's "
	              "window (several threads in MPI at once: more than 100 %)");
	free(w->v);
	memset(w, 0, sizeof *w);
	return t;
}
