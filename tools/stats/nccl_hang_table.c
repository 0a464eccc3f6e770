// SPDX-License-Identifier: MIT
/* nccl_hang, mpi_hang: who never arrived, where every rank was stuck, at
 * NCCL's collectives or at MPI's. The analysis (ranks matched, the
 * verdict) is job/nccl_hang.c's; this renders it: the verdict, the
 * collectives not completed on every rank (most recent first), each rank
 * on each communicator, and the mismatches. */
#include "job/nccl_hang.h"
#include "stats/stats.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct st {
	const struct stats_opts *opts;
	struct nh *h;
	const char *name; /* "nccl_hang", "mpi_hang" */
};

static void *begin(const struct stats_opts *opts)
{
	struct st *s = xcalloc(1, sizeof *s);
	s->opts = opts;
	s->h = nh_new();
	s->name = "nccl_hang";
	return s;
}

static void *begin_mpi(const struct stats_opts *opts)
{
	struct st *s = xcalloc(1, sizeof *s);
	s->opts = opts;
	s->h = nh_new_mpi();
	s->name = "mpi_hang";
	return s;
}

static struct table *titled(const struct st *s, const char *what, int ncols, const char **cols)
{
	char title[96];
	snprintf(title, sizeof title, "%s: %s", s->name, what);
	return table_new(title, ncols, cols);
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	struct st *s = p;
	nh_event(s->h, t, ev);
}

static void merge(void *p, void *q)
{
	struct st *part = q;
	nh_merge(((struct st *)p)->h, part->h);
	free(part);
}

static void pack(void *q, struct pack *b)
{
	nh_pack(((struct st *)q)->h, b);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct st *s = p, *q = xcalloc(1, sizeof *q);
	*q = *s;
	q->h = nh_unpack(!strcmp(s->name, "mpi_hang"), b);
	return q;
}

/* "0, 1, 3" (all of them: the table is for reading whole). */
static void ranks_cell(struct table *t, const struct nh_ranks *r)
{
	size_t cap = r->n * 22 + 1, len = 0;
	char *buf = xcalloc(1, cap);
	for (size_t i = 0; i < r->n; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%lld", i ? ", " : "",
		                        (long long)r->v[i]);
	table_str(t, buf);
	free(buf);
}

static void comm_cell(struct table *t, const char *name, uint64_t hash)
{
	char buf[96];
	nh_comm_label(buf, sizeof buf, name, hash);
	table_str(t, buf);
}

static struct table *colls_table(const struct st *s, const struct nh_result *r)
{
	static const char *c[] = {"Communicator",  "Seq",           "Operation",
	                          "Entered Ranks", "Missing Ranks", "Incomplete Ranks"};
	struct table *t = titled(s, "collectives not completed on every rank", 6, c);
	for (size_t i = 0; i < r->nc; i++) {
		const struct nh_coll *k = &r->c[i];
		table_row(t);
		comm_cell(t, k->comm_name, k->comm);
		table_u64(t, k->seq);
		table_str(t, k->func);
		ranks_cell(t, &k->entered);
		ranks_cell(t, &k->missing);
		ranks_cell(t, &k->incomplete);
	}
	return t;
}

static struct table *ranks_table(const struct st *s, const struct nh_result *r)
{
	static const char *c[] = {"Rank",  "Communicator", "Last Seq Entered", "Last Seq Completed",
	                          "State", "Open Ranges",  "Open For (ns)"};
	struct table *t = titled(s, "where each rank was", 7, c);
	int cut = 0;
	for (size_t i = 0; i < r->nr; i++) {
		const struct nh_rank *k = &r->r[i];
		table_row(t);
		table_i64(t, k->rank);
		comm_cell(t, k->comm_name, k->comm);
		if (k->last_entered >= 0)
			table_i64(t, k->last_entered);
		else
			table_null(t);
		if (k->last_completed >= 0)
			table_i64(t, k->last_completed);
		else
			table_null(t);
		char state[96];
		if (k->state == NH_WAITING)
			snprintf(state, sizeof state, "waiting in %s #%llu", k->func,
			         (unsigned long long)k->seq);
		else if (k->state == NH_NEVER_ARRIVED)
			snprintf(state, sizeof state, "never arrived at #%llu",
			         (unsigned long long)k->seq);
		else if (k->state == NH_IDLE)
			snprintf(state, sizeof state, "called none");
		else
			snprintf(state, sizeof state, "finished");
		table_str(t, state);
		table_str(t, k->ranges);
		/* a file cut short counts to its last event: a floor, and 0 when
		 * nothing came after the range opened (it read as "just entered") */
		if (k->open_for >= 0 && !(k->cut && k->open_for == 0))
			table_i64(t, k->open_for);
		else
			table_null(t);
		cut |= k->cut && k->ranges[0];
	}
	if (cut)
		table_note(t, "(Open For of a file cut short, without footer, runs to its last event: "
		              "at least that long; empty when nothing came after)");
	return t;
}

static struct table *mismatch_table(const struct st *s, const struct nh_result *r)
{
	static const char *c[] = {"Communicator", "Problem", "Ranks",   "Operation",
	                          "Seq",          "Count",   "Datatype"};
	struct table *t = titled(s, "ranks that disagree", 7, c);
	for (size_t i = 0; i < r->nm; i++) {
		const struct nh_mismatch *m = &r->m[i];
		table_row(t);
		comm_cell(t, m->comm_name, m->comm);
		table_str(t, m->problem);
		ranks_cell(t, &m->ranks);
		table_str(t, m->func);
		table_u64(t, m->seq);
		if (strcmp(m->problem, "operation"))
			table_u64(t, m->count), table_str(t, m->datatype);
		else
			table_null(t), table_null(t);
	}
	return t;
}

static int end(void *p, struct table **out)
{
	struct st *s = p;
	const struct nh_result *r = nh_finish(s->h);
	int n = 0;
	/* Not asked for by name: only where there were collectives. */
	if (r->colls || s->opts->explicit_list) {
		static const char *c[] = {"Verdict"};
		struct table *v = titled(s, "verdict", 1, c);
		table_row(v);
		table_str(v, r->verdict ? r->verdict
		             : r->colls ? "no collective left incomplete"
		             : strcmp(s->name, "mpi_hang")
		                 ? "no collective seen (NCCL traced with the profiler plugin?)"
		                 : "no collective seen (MPI traced with -t mpi?)");
		if (r->partial)
			table_note(v, r->partial);
		out[n++] = v;
		/* Without a hang the default output says so in one line. */
		if (r->verdict || s->opts->explicit_list) {
			out[n++] = colls_table(s, r);
			out[n++] = ranks_table(s, r);
			if (r->nm)
				out[n++] = mismatch_table(s, r);
		}
	}
	nh_free(s->h);
	free(s);
	return n;
}

const struct report report_nccl_hang = {
	"nccl_hang",
	"hangs: collectives not completed on every rank, who never arrived, where each rank was",
	begin, event, end, NULL, 1, merge, .pack = pack, .unpack = unpack,
};
const struct report report_mpi_hang = {
	"mpi_hang",
	"MPI hangs: collectives not completed on every rank, who never arrived, where each rank was",
	begin_mpi, event, end, NULL, 1, merge, .pack = pack, .unpack = unpack,
};
