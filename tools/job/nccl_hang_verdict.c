// SPDX-License-Identifier: MIT
/* The hang's one-line verdict, from the matched ranks: the collective
 * where the hang began is the incomplete one first entered; it names who
 * never arrived, who waited, and what the missing ranks were doing (their
 * open NVTX ranges, or another collective they waited in); or ranks that
 * waited in different operations; or counts or datatypes that differ. */
#include "job/nccl_hang_int.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIST_MAX 8 /* ranks named in a list before "and N more" */

static void list(FILE *o, const struct nh_ranks *r)
{
	fputs(r->n > 1 ? "ranks " : "rank ", o);
	for (size_t i = 0; i < r->n && i < LIST_MAX; i++)
		fprintf(o, "%s%lld", i ? ", " : "", (long long)r->v[i]);
	if (r->n > LIST_MAX)
		fprintf(o, " and %zu more", r->n - LIST_MAX);
}

static void dur(FILE *o, int64_t ns)
{
	if (ns >= 1000000000)
		fprintf(o, "%.1f s", (double)ns / 1e9);
	else if (ns >= 1000000)
		fprintf(o, "%.1f ms", (double)ns / 1e6);
	else if (ns >= 1000)
		fprintf(o, "%.1f us", (double)ns / 1e3);
	else
		fprintf(o, "%lld ns", (long long)ns);
}

static void comm(FILE *o, const char *name, uint64_t hash)
{
	char buf[96];
	nh_comm_label(buf, sizeof buf, name, hash);
	fputs(buf, o);
}

static const struct nh_rank *row_of(const struct nh_result *res, int64_t rank, uint64_t c)
{
	for (size_t i = 0; i < res->nr; i++)
		if (res->r[i].rank == rank && res->r[i].comm == c)
			return &res->r[i];
	return NULL;
}

/* What missing rank `rank` was doing: its open ranges, or a collective of
 * another communicator it waited in. */
static void doing(FILE *o, const struct nh_result *res, int64_t rank, uint64_t c)
{
	for (size_t i = 0; i < res->nr; i++) {
		const struct nh_rank *r = &res->r[i];
		if (r->rank != rank)
			continue;
		if (r->comm != c && r->state == NH_WAITING) {
			fprintf(o, "; rank %lld waited in %s #%llu of ", (long long)rank, r->func,
			        (unsigned long long)r->seq);
			comm(o, r->comm_name, r->comm);
			return;
		}
	}
	const struct nh_rank *r = row_of(res, rank, c);
	if (r && r->ranges[0]) {
		fprintf(o, "; rank %lld was in %s", (long long)rank, r->ranges);
		if (r->cut) { /* its end is its last event: how long is not known */
			fputs(" at the end of its file (no footer)", o);
			return;
		}
		fputs(" for ", o);
		dur(o, r->open_for);
	}
}

static void differ(FILE *o, const struct nh_result *res, const struct nh_coll *c)
{
	const char *said = NULL;
	for (size_t i = 0; i < res->nm; i++) {
		const struct nh_mismatch *m = &res->m[i];
		if (m->comm != c->comm || m->seq != c->seq || strcmp(m->func, c->func) ||
		    !strcmp(m->problem, "operation"))
			continue;
		if (said != m->problem)
			fprintf(o, "; %ss differ: ", m->problem);
		else
			fputs(", ", o);
		said = m->problem;
		if (m->problem[0] == 'c')
			fprintf(o, "%llu on ", (unsigned long long)m->count);
		else
			fprintf(o, "%s on ", m->datatype);
		list(o, &m->ranks);
	}
}

/* Whether rank waits in some collective (rows are by rank: a search). */
static int waiting(const struct nh_result *res, int64_t rank)
{
	size_t lo = 0, hi = res->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (res->r[mid].rank < rank)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < res->nr && res->r[i].rank == rank; i++)
		if (res->r[i].state == NH_WAITING)
			return 1;
	return 0;
}

/* Where the hang began: the first entered of the collectives whose
 * missing ranks wait nowhere (they are elsewhere, not blocked by another
 * collective); else the first entered of those every member entered (the
 * missing ranks of the others wait in them: a mismatch on a smaller
 * communicator); else the first entered of all. */
static const struct nh_coll *root(const struct nh_result *res)
{
	for (size_t i = res->nc; i-- > 0;) {
		const struct nh_coll *c = &res->c[i];
		size_t k = 0;
		while (k < c->missing.n && !waiting(res, c->missing.v[k]))
			k++;
		if (c->missing.n && k == c->missing.n)
			return c;
	}
	for (size_t i = res->nc; i-- > 0;)
		if (!res->c[i].missing.n)
			return &res->c[i];
	return &res->c[res->nc - 1];
}

/* ranks whose capture had ended before c: not judged, said so */
static void stopped(FILE *o, const struct nh_coll *c)
{
	if (!c->stopped.n)
		return;
	fputs("; ", o);
	list(o, &c->stopped);
	fputs(" had stopped recording before it (not judged)", o);
}

/* No collective left incomplete, but ranks called one differently (a
 * count or datatype): what NCCL does then is undefined; said as a mismatch. */
static char *mismatch_only(const struct nh_result *res)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	if (!o)
		xoom();
	const struct nh_mismatch *m = &res->m[0];
	fprintf(o, "mismatch: on ");
	comm(o, m->comm_name, m->comm);
	fprintf(o, ", %s #%llu was called with different %ss: ", m->func,
	        (unsigned long long)m->seq, m->problem);
	for (size_t i = 0; i < res->nm; i++) {
		const struct nh_mismatch *x = &res->m[i];
		if (x->comm != m->comm || x->seq != m->seq || strcmp(x->func, m->func) ||
		    strcmp(x->problem, m->problem))
			continue;
		if (x != m)
			fputs(", ", o);
		if (m->problem[0] == 'c')
			fprintf(o, "%llu on ", (unsigned long long)x->count);
		else
			fprintf(o, "%s on ", x->datatype);
		list(o, &x->ranks);
	}
	fclose(o);
	return buf;
}

char *nh_verdict(const struct nh *h)
{
	const struct nh_result *res = &h->res;
	if (!res->nc)
		return res->nm ? mismatch_only(res) : NULL;
	const struct nh_coll *c = root(res);
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);
	if (!o)
		xoom();
	int mism = 0;
	for (size_t i = 0; i < res->nm && !mism; i++)
		mism = res->m[i].comm == c->comm && !strcmp(res->m[i].problem, "operation");
	if (!c->suspected && c->waited >= 0 && c->waited < h->min_wait) {
		/* the traces end while it ran: a job stopped, not stuck */
		fputs("no hang: the traces end while ", o);
		list(o, &c->incomplete);
		fprintf(o, " %s in %s #%llu of ", c->incomplete.n > 1 ? "were" : "was", c->func,
		        (unsigned long long)c->seq);
		comm(o, c->comm_name, c->comm);
		fputs(" for at most ", o);
		dur(o, c->waited);
		fputs(" (under ", o);
		dur(o, h->min_wait);
		fputs(": the job was stopped while it ran)", o);
	} else if (mism) {
		fputs("mismatch: on ", o);
		comm(o, c->comm_name, c->comm);
		int n = 0;
		for (size_t i = 0; i < res->nm; i++) {
			const struct nh_mismatch *m = &res->m[i];
			if (m->comm != c->comm || strcmp(m->problem, "operation"))
				continue;
			fputs(n++ ? "; " : ", ", o);
			list(o, &m->ranks);
			fprintf(o, " waited in %s #%llu", m->func, (unsigned long long)m->seq);
		}
	} else if (c->missing.n) {
		fputs("hang: ", o);
		list(o, &c->missing);
		fprintf(o, " never arrived at %s #%llu of ", c->func, (unsigned long long)c->seq);
		comm(o, c->comm_name, c->comm);
		if (c->incomplete.n) {
			fputs("; ", o);
			list(o, &c->incomplete);
			fputs(" waited in it", o);
		} else if (c->entered.n) {
			fputs("; ", o);
			list(o, &c->entered);
			fputs(" entered it", o);
		}
		for (size_t i = 0; i < c->missing.n && i < LIST_MAX; i++)
			doing(o, res, c->missing.v[i], c->comm);
		stopped(o, c);
	} else {
		fprintf(o, "hang: %s #%llu of ", c->func, (unsigned long long)c->seq);
		comm(o, c->comm_name, c->comm);
		fputs(" never completed on ", o);
		list(o, &c->incomplete);
		/* ranks without a file are not judged (the note under the verdict) */
		fprintf(o, "; every rank%s%s entered it", res->partial ? " with a file" : "",
		        c->stopped.n ? " that was recording" : "");
		stopped(o, c);
	}
	differ(o, res, c);
	fclose(o);
	return buf;
}
