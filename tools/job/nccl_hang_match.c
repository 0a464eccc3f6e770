// SPDX-License-Identifier: MIT
/* Hang diagnosis: the ranks matched (nh_finish). Every collective held in
 * some rank's tail is looked up on every rank present on its
 * communicator: entered (in its tail, or a higher sequence number of that
 * operation was entered), missing (never reached that sequence number
 * while it was capturing), incomplete (entered, and its file shows the
 * ends of other collectives but not of this one, nor of any entered
 * after it on that communicator). */
#include "job/nccl_hang_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct ent {
	uint64_t comm, seq, count;
	int64_t t, rank, last_done_t;
	uint16_t func, dtype;
	uint8_t done, known;
};

static int cmp_ent(const void *x, const void *y)
{
	const struct ent *a = x, *b = y;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return a->t < b->t ? -1 : a->t > b->t;
}

static const struct nh *sort_h; /* qsort has no context argument */

static int cmp_rc(const void *x, const void *y)
{
	const struct nh_rc *a = *(struct nh_rc *const *)x, *b = *(struct nh_rc *const *)y;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	int64_t ra = sort_h->f[a->file].rank, rb = sort_h->f[b->file].rank;
	return ra < rb ? -1 : ra > rb;
}

static int cmp_coll(const void *x, const void *y)
{
	const struct nh_coll *a = x, *b = y;
	if (a->first_t != b->first_t)
		return a->first_t > b->first_t ? -1 : 1; /* most recent first */
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	return a->seq > b->seq ? -1 : a->seq < b->seq;
}

static int has_max(const struct nh_rc *r, uint16_t func, uint64_t seq)
{
	for (unsigned i = 0; i < r->nf; i++)
		if (r->f[i].func == func)
			return r->f[i].max >= seq;
	return 0;
}

static struct nh_mismatch *add_mismatch(struct nh *h, size_t *cap)
{
	if (h->res.nm == *cap) {
		*cap = *cap ? 2 * *cap : 8;
		h->res.m = xrealloc(h->res.m, *cap * sizeof *h->res.m);
	}
	struct nh_mismatch *m = &h->res.m[h->res.nm++];
	memset(m, 0, sizeof *m);
	return m;
}

/* Rows of one field (count or datatype) differing inside group g[0..n). */
static void field_mismatch(struct nh *h, const struct ent *g, size_t n, int dtype, size_t *cap)
{
	size_t i = 1;
	while (i < n && (dtype ? g[i].dtype == g[0].dtype : g[i].count == g[0].count))
		i++;
	if (i == n)
		return;
	uint8_t *used = xcalloc(n, 1);
	for (size_t a = 0; a < n; a++) {
		if (used[a])
			continue;
		struct nh_mismatch *m = add_mismatch(h, cap);
		m->comm = g[a].comm;
		m->problem = dtype ? "datatype" : "count";
		m->func = h->str[g[a].func];
		m->datatype = h->str[g[a].dtype];
		m->seq = g[a].seq;
		m->count = g[a].count;
		for (size_t b = a; b < n; b++)
			if (!used[b] &&
			    (dtype ? g[b].dtype == g[a].dtype : g[b].count == g[a].count)) {
				used[b] = 1;
				nh_ranks_add(&m->ranks, g[b].rank);
			}
	}
	free(used);
}

/* One collective (comm, func, seq): g[0..n) the ranks whose tails hold
 * it; p[0..np) the files present on its communicator, by rank. */
static void judge(struct nh *h, const struct ent *g, size_t n, struct nh_rc **p, size_t np,
                  size_t *ccap, size_t *mcap)
{
	struct nh_coll c;
	memset(&c, 0, sizeof c);
	c.comm = g[0].comm;
	c.comm_name = "";
	c.func = h->str[g[0].func];
	c.seq = g[0].seq;
	c.first_t = INT64_MAX;
	c.waited = -1;
	for (size_t i = 0; i < n; i++)
		if (g[i].t < c.first_t)
			c.first_t = g[i].t;
	/* Missing first: a collective that a member never reached cannot have
	 * completed anywhere, which files without any end shown (not known)
	 * cannot tell by themselves. And one that completed somewhere was
	 * reached by every member: a member whose file does not show it lost
	 * its last records (killed), it is not missing. */
	int done_somewhere = 0;
	for (size_t k = 0; k < n; k++)
		done_somewhere |= g[k].known && g[k].done;
	for (size_t i = 0, k = 0; i < np; i++) {
		const struct nh_file *f = &h->f[p[i]->file];
		c.suspected |= p[i]->suspected;
		while (k < n && g[k].rank < f->rank)
			k++;
		if ((k < n && g[k].rank == f->rank) || has_max(p[i], g[0].func, g[0].seq))
			continue;
		if (f->cap_off <= c.first_t)
			nh_ranks_add(&c.stopped, f->rank);
		else if (!done_somewhere)
			nh_ranks_add(&c.missing, f->rank);
	}
	/* how long it was waited in: from the first waiting rank's entry (its
	 * file may be cut) to the latest end a waiting rank's footer gives */
	int64_t wait_from = INT64_MAX, wait_to = INT64_MIN;
	for (size_t i = 0, k = 0; i < np; i++) {
		const struct nh_file *f = &h->f[p[i]->file];
		c.comm_name = h->str[p[i]->name];
		while (k < n && g[k].rank < f->rank)
			k++;
		if (k < n && g[k].rank == f->rank) {
			nh_ranks_add(&c.entered, f->rank);
			if (g[k].known ? !g[k].done && g[k].t > g[k].last_done_t : c.missing.n > 0) {
				nh_ranks_add(&c.incomplete, f->rank);
				if (g[k].t < wait_from)
					wait_from = g[k].t;
				if (!f->cut && f->end_t > wait_to)
					wait_to = f->end_t;
			}
		} else if (has_max(p[i], g[0].func, g[0].seq)) {
			nh_ranks_add(&c.entered, f->rank);
		}
	}
	if (wait_to != INT64_MIN && wait_from != INT64_MAX)
		c.waited = wait_to > wait_from ? wait_to - wait_from : 0;
	if (c.missing.n || c.incomplete.n) {
		if (h->res.nc == *ccap) {
			*ccap = *ccap ? 2 * *ccap : 16;
			h->res.c = xrealloc(h->res.c, *ccap * sizeof *h->res.c);
		}
		h->res.c[h->res.nc++] = c;
	} else {
		free(c.entered.v);
		free(c.stopped.v);
	}
	/* MPI's counts and datatypes may differ between ranks of one
	 * collective (MPI_Gatherv, a root's MPI_Scatter): not judged */
	if (n > 1 && !h->mpi) {
		size_t m0 = h->res.nm;
		field_mismatch(h, g, n, 0, mcap);
		field_mismatch(h, g, n, 1, mcap);
		for (size_t i = m0; i < h->res.nm; i++)
			h->res.m[i].comm_name = np ? h->str[p[0]->name] : "";
	}
}

static int cmp_ops_t(const void *x, const void *y)
{
	const struct nh_op *a = x, *b = y;
	return a->t < b->t ? -1 : a->t > b->t;
}

/* The earliest entered collective of communicator comm where rank is
 * incomplete (1) or missing (0), or NULL. */
static const struct nh_coll *earliest(const struct nh *h, uint64_t comm, int64_t rank,
                                      int incomplete)
{
	const struct nh_coll *best = NULL;
	for (size_t i = 0; i < h->res.nc; i++) {
		const struct nh_coll *c = &h->res.c[i];
		if (c->comm != comm || (best && c->first_t >= best->first_t))
			continue;
		const struct nh_ranks *l = incomplete ? &c->incomplete : &c->missing;
		for (size_t j = 0; j < l->n; j++)
			if (l->v[j] == rank)
				best = c;
	}
	return best;
}

/* The row of file-communicator r. */
static void rank_row(struct nh *h, const struct nh_rc *r, struct nh_rank *row)
{
	const struct nh_file *f = &h->f[r->file];
	memset(row, 0, sizeof *row);
	row->rank = f->rank;
	row->comm = r->comm;
	row->comm_name = h->str[r->name];
	row->last_entered = row->last_completed = -1;
	row->ranges = f->ranges ? f->ranges : "";
	row->open_for = f->ranges ? f->open_for : -1;
	row->cut = f->cut;
	size_t n = r->n < NH_KEEP ? (size_t)r->n : NH_KEEP;
	struct nh_op *ops = xrealloc(NULL, (n ? n : 1) * sizeof *ops);
	memcpy(ops, r->ring, n * sizeof *ops);
	qsort(ops, n, sizeof *ops, cmp_ops_t);
	for (size_t i = 0; f->known && i < n; i++)
		if (!ops[i].done && ops[i].t > r->last_done_t) {
			row->state = NH_WAITING;
			row->func = h->str[ops[i].func];
			row->seq = ops[i].seq;
			break;
		}
	/* No end shown in its file: waiting where it entered a collective
	 * that some member never reached (the earliest such). */
	const struct nh_coll *in = f->known ? NULL : earliest(h, r->comm, f->rank, 1);
	if (in) {
		row->state = NH_WAITING;
		row->func = in->func;
		row->seq = in->seq;
	}
	const struct nh_coll *best = row->state != NH_WAITING ? earliest(h, r->comm, f->rank, 0)
	                                                      : NULL; /* the earliest it never reached */
	if (best) {
		row->state = NH_NEVER_ARRIVED;
		row->func = best->func;
		row->seq = best->seq;
	}
	if (row->state == NH_FINISHED && !n)
		row->state = NH_IDLE;
	/* NCCL's sequence numbers count per operation: those of the
	 * operation of its state, else of the last one it entered; MPI's
	 * (the wrappers') per communicator: all. */
	const char *fn = row->func ? row->func : n ? h->str[ops[n - 1].func] : NULL;
	for (size_t i = 0; fn && i < n; i++) {
		if (!h->mpi && strcmp(h->str[ops[i].func], fn))
			continue;
		if ((int64_t)ops[i].seq > row->last_entered)
			row->last_entered = (int64_t)ops[i].seq;
		if (f->known && ops[i].done && (int64_t)ops[i].seq > row->last_completed)
			row->last_completed = (int64_t)ops[i].seq;
	}
	free(ops);
}
/* Ranks of one communicator waiting in different operations. */
static void op_mismatch(struct nh *h, size_t lo, size_t hi, size_t *mcap)
{
	const struct nh_rank *r = h->res.r;
	size_t first = SIZE_MAX, differ = 0;
	for (size_t i = lo; i < hi; i++) {
		if (r[i].state != NH_WAITING)
			continue;
		if (first == SIZE_MAX)
			first = i;
		else if (strcmp(r[i].func, r[first].func))
			differ = 1;
	}
	if (!differ)
		return;
	uint8_t *used = xcalloc(hi - lo, 1);
	for (size_t a = lo; a < hi; a++) {
		if (used[a - lo] || r[a].state != NH_WAITING)
			continue;
		struct nh_mismatch *m = add_mismatch(h, mcap);
		m->comm = r[a].comm;
		m->comm_name = r[a].comm_name;
		m->problem = "operation";
		m->func = r[a].func;
		m->seq = r[a].seq;
		m->datatype = "";
		for (size_t b = a; b < hi; b++)
			if (!used[b - lo] && r[b].state == NH_WAITING && r[b].seq == r[a].seq &&
			    !strcmp(r[b].func, r[a].func)) {
				used[b - lo] = 1;
				nh_ranks_add(&m->ranks, r[b].rank);
			}
	}
	free(used);
}

static int cmp_row_comm(const void *x, const void *y)
{
	const struct nh_rank *a = x, *b = y;
	if (a->comm != b->comm)
		return a->comm < b->comm ? -1 : 1;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static int cmp_row_rank(const void *x, const void *y)
{
	const struct nh_rank *a = x, *b = y;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	int c = strcmp(a->comm_name, b->comm_name);
	return c ? c : a->comm < b->comm ? -1 : a->comm > b->comm;
}

/* The communicators some of whose ranks' files were not given (p: the
 * file-communicators by communicator). */
static void partial(struct nh *h, struct nh_rc *const *p)
{
	size_t n = 0, first = 0, have = 0;
	for (size_t i = 0, j; i < h->nrc; i = j) {
		size_t ranks = 0; /* distinct: a rank may have several files (p is by rank) */
		for (j = i; j < h->nrc && p[j]->comm == p[i]->comm; j++)
			ranks += j == i || h->f[p[j]->file].rank != h->f[p[j - 1]->file].rank;
		/* named: the largest such communicator */
		if ((int64_t)ranks < p[i]->nranks && (!n++ || p[i]->nranks > p[first]->nranks))
			first = i, have = ranks;
	}
	if (!n)
		return;
	char label[96], *s = xcalloc(1, 256);
	nh_comm_label(label, sizeof label, h->str[p[first]->name], p[first]->comm);
	snprintf(s, 256, "%zu of the %lld ranks of %s had a file given (%zu communicator%s short of "
	         "files): the others are not judged", have, (long long)p[first]->nranks, label, n,
	         n > 1 ? "s" : "");
	h->res.partial = s;
}

const struct nh_result *nh_finish(struct nh *h)
{
	size_t ne = 0, ccap = 0, mcap = 0;
	nh_files_done(h);
	for (size_t i = 0; i < h->nrc; i++)
		ne += h->rc[i]->n < NH_KEEP ? (size_t)h->rc[i]->n : NH_KEEP;
	struct ent *e = xrealloc(NULL, (ne ? ne : 1) * sizeof *e);
	size_t k = 0;
	for (size_t i = 0; i < h->nrc; i++) {
		const struct nh_rc *r = h->rc[i];
		const struct nh_file *f = &h->f[r->file];
		size_t n = r->n < NH_KEEP ? (size_t)r->n : NH_KEEP;
		for (size_t j = 0; j < n; j++) {
			const struct nh_op *o = &r->ring[j];
			e[k++] = (struct ent){r->comm,   o->seq,   o->count, o->t,
			                      f->rank,   r->last_done_t, o->func, o->dtype,
			                      o->done,   (uint8_t)f->known};
		}
	}
	qsort(e, ne, sizeof *e, cmp_ent);
	sort_h = h;
	struct nh_rc **p = xrealloc(NULL, (h->nrc ? h->nrc : 1) * sizeof *p);
	if (h->nrc)
		memcpy(p, h->rc, h->nrc * sizeof *p);
	qsort(p, h->nrc, sizeof *p, cmp_rc);
	size_t plo = 0;
	for (size_t i = 0, j; i < ne; i = j) {
		for (j = i; j < ne && e[j].comm == e[i].comm && e[j].func == e[i].func &&
		            e[j].seq == e[i].seq;
		     j++)
			;
		while (plo < h->nrc && p[plo]->comm < e[i].comm)
			plo++;
		size_t phi = plo;
		while (phi < h->nrc && p[phi]->comm == e[i].comm)
			phi++;
		judge(h, e + i, j - i, p + plo, phi - plo, &ccap, &mcap);
	}
	free(e);
	partial(h, p);
	if (h->res.nc)
		qsort(h->res.c, h->res.nc, sizeof *h->res.c, cmp_coll);
	h->res.r = xrealloc(NULL, (h->nrc ? h->nrc : 1) * sizeof *h->res.r);
	h->res.nr = h->nrc;
	for (size_t i = 0; i < h->nrc; i++)
		rank_row(h, p[i], &h->res.r[i]);
	qsort(h->res.r, h->res.nr, sizeof *h->res.r, cmp_row_comm);
	for (size_t i = 0, j; i < h->res.nr; i = j) {
		for (j = i; j < h->res.nr && h->res.r[j].comm == h->res.r[i].comm; j++)
			;
		op_mismatch(h, i, j, &mcap);
	}
	qsort(h->res.r, h->res.nr, sizeof *h->res.r, cmp_row_rank);
	free(p);
	h->res.colls = h->colls;
	h->res.verdict = nh_verdict(h);
	return &h->res;
}
