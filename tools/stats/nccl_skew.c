// SPDX-License-Identifier: MIT
/* nccl_skew, mpi_skew: which rank arrives late at collectives (the
 * straggler view). Collectives are matched across files by (communicator,
 * operation, sequence number) in job/nccl_match.c; for each, the arrival
 * spread is the latest API start minus the earliest, on the job's
 * timeline, and the last rank is the one that started last. nccl_skew
 * works from NCCL's profiler plugin alone (the API events; the task's
 * start under ABI v4); mpi_skew from the mpi source's calls (each
 * collective's start; its communicator's id and sequence number are the
 * same on every member). */
#include "job/nccl_match.h"
#include "stats/quant.h"
#include "stats/stats.h"
#include "util/hmap.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Collectives held at most while some ranks have not reported them. The
 * files are read in lockstep (job/drive.c), so the matcher holds the
 * collectives in flight across ranks; this cap only guards against files
 * whose arrivals come far out of time order. */
#define WINDOW (1u << 22)
#define TOP 20
/* Latenesses kept exactly per rank (the median is exact up to this many
 * collectives per rank, then within 0.4%: stats/quant.h); 1 MiB a rank. */
#define EXACT (1u << 17)

struct rank_agg {
	int64_t rank;
	uint64_t colls, last, total, imposed;
	struct quant late; /* for the median */
};

struct worst {
	uint64_t comm, seq, spread;
	char name[64], func[32]; /* copied: the matcher frees its own */
	int64_t step, last;
};

/* An arrival as a part (one file) notes it, until the next drain. Names
 * point into the part's interned strings (few: communicators and
 * operations), not copies. */
struct arrival {
	uint64_t comm, seq;
	const char *name, *func;
	int32_t nranks, crank;
	int64_t who, step, t;
};

struct st {
	const struct stats_opts *opts;
	const char *name; /* "nccl_skew" or "mpi_skew" */
	int mpi;
	struct nm *m; /* NULL in a part */
	/* a part's: arrivals since the last drain, the file's index */
	struct arrival *a;
	size_t na, acap;
	int64_t order;
	struct hmap names;  /* a part's communicator names by hash + 1 */
	char **funcs;       /* a part's operation names */
	size_t nfuncs, fcap;
	struct hmap by_rank; /* rank + 2 -> index + 1 */
	struct rank_agg *r;
	size_t nr, rcap;
	struct worst top[TOP]; /* a min-heap on (spread, then later key) */
	size_t ntop;
	uint64_t matched;
};

static struct rank_agg *agg_of(struct st *s, int64_t rank)
{
	uint64_t k = (uint64_t)(rank + 2);
	size_t i = (uintptr_t)hmap_get(&s->by_rank, k);
	if (i)
		return &s->r[i - 1];
	if (s->nr == s->rcap) {
		s->rcap = s->rcap ? s->rcap * 2 : 16;
		s->r = xrealloc(s->r, s->rcap * sizeof *s->r);
	}
	struct rank_agg *a = &s->r[s->nr++];
	memset(a, 0, sizeof *a);
	a->rank = rank;
	a->late.exact = EXACT;
	hmap_put(&s->by_rank, k, (void *)(uintptr_t)s->nr);
	return a;
}

/* Whether collective (spread, comm, seq, func) is worse than y (larger
 * spread; ties: the earlier communicator hash and sequence number first). */
static int beats(uint64_t spread, uint64_t comm, uint64_t seq, const char *func,
                 const struct worst *y)
{
	if (spread != y->spread)
		return spread > y->spread;
	if (comm != y->comm)
		return comm < y->comm;
	if (seq != y->seq)
		return seq < y->seq;
	return strcmp(func, y->func) < 0;
}

static int worse(const struct worst *x, const struct worst *y)
{
	return beats(x->spread, x->comm, x->seq, x->func, y);
}

static void sift_down(struct worst *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n && worse(&h[m], &h[l]))
			m = l;
		if (r < n && worse(&h[m], &h[r]))
			m = r;
		if (m == i)
			return;
		struct worst tmp = h[i];
		h[i] = h[m], h[m] = tmp;
		i = m;
	}
}

/* Collective c enters the worst TOP if it beats the least of them (the
 * names are copied only then). */
static void offer(struct st *s, const struct nm_coll *c, uint64_t spread, int64_t last)
{
	if (s->ntop == TOP && !beats(spread, c->comm, c->seq, c->func, &s->top[0]))
		return;
	struct worst w = {c->comm, c->seq, spread, "", "", c->step, last};
	snprintf(w.name, sizeof w.name, "%s", c->comm_name);
	snprintf(w.func, sizeof w.func, "%s", c->func);
	if (s->ntop < TOP) {
		size_t i = s->ntop++;
		s->top[i] = w;
		while (i && worse(&s->top[(i - 1) / 2], &s->top[i])) {
			struct worst tmp = s->top[i];
			s->top[i] = s->top[(i - 1) / 2], s->top[(i - 1) / 2] = tmp;
			i = (i - 1) / 2;
		}
	} else {
		s->top[0] = w;
		sift_down(s->top, s->ntop, 0);
	}
}

/* A collective that every rank (or all that will) reported. */
static void done(void *ctx, const struct nm_coll *c)
{
	struct st *s = ctx;
	if (c->seen < 2)
		return;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	int last = -1;
	for (int i = 0; i < c->nranks; i++) {
		if (c->t[i] == NM_NONE)
			continue;
		if (c->t[i] < lo)
			lo = c->t[i];
		if (c->t[i] > hi)
			hi = c->t[i], last = i;
	}
	s->matched++;
	uint64_t imposed = 0;
	for (int i = 0; i < c->nranks; i++) {
		if (c->t[i] == NM_NONE)
			continue;
		struct rank_agg *a = agg_of(s, c->who[i]);
		uint64_t late = (uint64_t)(c->t[i] - lo);
		a->colls++;
		a->total += late;
		quant_add(&a->late, (int64_t)late);
		imposed += (uint64_t)(hi - c->t[i]);
	}
	struct rank_agg *l = agg_of(s, c->who[last]);
	l->last++;
	l->imposed += imposed;
	offer(s, c, (uint64_t)(hi - lo), c->who[last]);
}

static void *begin(const struct stats_opts *opts)
{
	struct st *s = xcalloc(1, sizeof *s);
	s->opts = opts;
	s->name = "nccl_skew";
	s->m = nm_new(WINDOW, done, s);
	return s;
}

static void *begin_mpi(const struct stats_opts *opts)
{
	struct st *s = begin(opts);
	s->name = "mpi_skew";
	s->mpi = 1;
	return s;
}

/* The part's copy of a communicator's name (one per hash). */
static const char *comm_name(struct st *s, uint64_t hash, const char *name)
{
	char *n = hmap_get(&s->names, hash + !hash);
	if (!n) {
		n = xstrdup(name);
		hmap_put(&s->names, hash + !hash, n);
	}
	return n;
}

/* The part's copy of an operation's name (a handful per file). */
static const char *func_name(struct st *s, const char *f)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (!strcmp(s->funcs[i], f))
			return s->funcs[i];
	if (s->nfuncs == s->fcap) {
		s->fcap = s->fcap ? 2 * s->fcap : 16;
		s->funcs = xrealloc(s->funcs, s->fcap * sizeof *s->funcs);
	}
	char *n = xstrdup(f);
	return s->funcs[s->nfuncs++] = n;
}

static void note(struct st *s, const struct arrival *a)
{
	if (s->na == s->acap) {
		s->acap = s->acap ? 2 * s->acap : 256;
		s->a = xrealloc(s->a, s->acap * sizeof *s->a);
	}
	s->a[s->na++] = *a;
}

/* An MPI collective of an intracommunicator (both groups of an
 * intercommunicator's collective are not told apart by rank). */
static void mpi_event(struct st *s, struct tfile *t, const struct m_event *ev)
{
	const struct m_mpi *x = ev->mpi;
	if (!x->seq || !x->comm || x->comm->remote || x->comm->rank < 0 || !x->func.s)
		return;
	char f[64];
	snprintf(f, sizeof f, "%.*s", (int)(x->func.len < 63 ? x->func.len : 63), x->func.s);
	s->order = t->index;
	note(s, &(struct arrival){x->comm_id, x->seq, comm_name(s, x->comm_id, x->comm->name),
	                          func_name(s, f), (int32_t)x->comm->size, (int32_t)x->comm->rank,
	                          t->shown_rank, -1, (int64_t)ev->ts + t->off_ns});
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	struct st *s = p;
	if (s->mpi && ev->cat == MC_MPI && ev->type == ME_SLICE)
		mpi_event(s, t, ev);
	if (s->mpi || ev->cat != MC_NCCL || ev->type != ME_SLICE)
		return;
	const struct nccl_op *o = ev->nccl.op;
	const struct nccl_comm *cm = o->comm;
	if (!cm || o->is_p2p || !o->has_seq)
		return;
	const struct stats_opts *so = s->opts;
	if (so->steps && (o->step < so->step_lo || o->step > so->step_hi))
		return;
	int64_t crank = o->rank >= 0 ? o->rank : cm->rank;
	uint64_t at = o->api_start ? o->api_start : ev->ts;
	s->order = t->index;
	note(s, &(struct arrival){cm->hash, o->seq, comm_name(s, cm->hash, cm->name),
	                          func_name(s, o->func), (int32_t)cm->nranks, (int32_t)crank,
	                          t->shown_rank, o->step, (int64_t)at + t->off_ns});
}

static void *part(void *p)
{
	struct st *s = xcalloc(1, sizeof *s);
	s->opts = ((struct st *)p)->opts;
	s->name = ((struct st *)p)->name;
	s->mpi = ((struct st *)p)->mpi;
	return s;
}

/* The matching across ranks: a part's arrivals so far (collect.c calls it
 * after each chunk of the file, files read in lockstep). */
static void drain(void *p, void *q)
{
	struct st *s = p, *part = q;
	for (size_t i = 0; i < part->na; i++) {
		const struct arrival *a = &part->a[i];
		struct nm_arrival x = {a->comm, a->seq,   a->name, a->func, a->nranks,
		                       a->crank, a->who,  a->step, a->t,    part->order};
		nm_put(s->m, &x);
	}
	part->na = 0;
}

static void merge(void *p, void *q)
{
	struct st *part = q;
	drain(p, q);
	free(part->a);
	for (size_t i = 0; i < part->names.cap; i++)
		if (part->names.keys[i])
			free(part->names.vals[i]);
	hmap_free(&part->names);
	for (size_t i = 0; i < part->nfuncs; i++)
		free(part->funcs[i]);
	free(part->funcs);
	free(part);
}

/* A part's arrivals (a rank above 0 reads without lockstep: all its
 * file's), names as text, for the matching on rank 0. */
static void pack(void *q, struct pack *b)
{
	struct st *part = q;
	pk_u64(b, part->na);
	PK(b, part->order);
	for (size_t i = 0; i < part->na; i++) {
		const struct arrival *a = &part->a[i];
		PK(b, a->comm), PK(b, a->seq), PK(b, a->nranks), PK(b, a->crank);
		PK(b, a->who), PK(b, a->step), PK(b, a->t);
		pk_str(b, a->name);
		pk_str(b, a->func);
	}
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct st *s = part(p);
	uint64_t n = up_u64(b);
	UP(b, s->order);
	for (uint64_t i = 0; i < n && !b->bad; i++) {
		struct arrival a;
		UP(b, a.comm), UP(b, a.seq), UP(b, a.nranks), UP(b, a.crank);
		UP(b, a.who), UP(b, a.step), UP(b, a.t);
		char *name = up_str(b), *func = up_str(b);
		a.name = comm_name(s, a.comm, name ? name : "");
		a.func = func_name(s, func ? func : "");
		free(name);
		free(func);
		note(s, &a);
	}
	return s;
}

static int cmp_rank(const void *x, const void *y)
{
	const struct rank_agg *a = x, *b = y;
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static int cmp_worst(const void *x, const void *y)
{
	return worse(x, y) ? -1 : worse(y, x) ? 1 : 0;
}

static int end(void *p, struct table **out)
{
	struct st *s = p;
	size_t peak = nm_peak(s->m);
	size_t incomplete = nm_finish(s->m);
	if (s->opts->verbose)
		say_cmd("%s: %" PRIu64 " collectives matched; the matcher held at most %zu "
		        "at once",
		        s->name, s->matched, peak);
	if (!s->matched && !s->opts->explicit_list) { /* not asked for by name: nothing */
		for (size_t i = 0; i < s->nr; i++)
			quant_free(&s->r[i].late);
		free(s->r);
		hmap_free(&s->by_rank);
		free(s);
		return 0;
	}
	static const char *c1[] = {"Rank",
	                           "Collectives",
	                           "Times Last",
	                           "Total Lateness (ns)",
	                           "Median Lateness (ns)",
	                           "Wait Imposed (ns)"};
	char title[96];
	snprintf(title, sizeof title, "%s: arrival at collectives per rank", s->name);
	struct table *t1 = table_new(title, 6, c1);
	if (s->nr > 1)
		qsort(s->r, s->nr, sizeof *s->r, cmp_rank);
	for (size_t i = 0; i < s->nr; i++) {
		struct rank_agg *a = &s->r[i];
		double med = quant_median(&a->late);
		table_row(t1);
		table_i64(t1, a->rank);
		table_u64(t1, a->colls);
		table_u64(t1, a->last);
		table_u64(t1, a->total);
		table_f(t1, med, 1);
		table_u64(t1, a->imposed);
		quant_free(&a->late);
	}
	static const char *c2[] = {"Communicator", "Seq",          "Operation",
	                           "Step",         "Spread (ns)", "Last Rank"};
	snprintf(title, sizeof title, "%s: worst collectives by arrival spread (top 20)", s->name);
	struct table *t2 = table_new(title, 6, c2);
	qsort(s->top, s->ntop, sizeof *s->top, cmp_worst);
	for (size_t i = 0; i < s->ntop; i++) {
		const struct worst *w = &s->top[i];
		char comm[96];
		snprintf(comm, sizeof comm, "%s%s%016" PRIx64, w->name, w->name[0] ? " " : "", w->comm);
		table_row(t2);
		table_str(t2, comm);
		table_u64(t2, w->seq);
		table_str(t2, w->func);
		if (w->step >= 0)
			table_i64(t2, w->step);
		else
			table_null(t2);
		table_u64(t2, w->spread);
		table_i64(t2, w->last);
	}
	if (!s->matched) {
		const char *why = s->mpi ? "no collective was seen by two ranks or more (give "
		                           "every rank's file; MPI traced with -t mpi)"
		                         : "no collective was seen by two ranks or more (give "
		                           "every rank's file; NCCL traced with the profiler plugin)";
		table_note(t1, why);
		table_note(t2, why);
	} else if (incomplete) {
		char why[160];
		snprintf(why, sizeof why,
		         "%zu collective%s lacked some ranks' arrival (their files not given?); "
		         "figures use the ranks present",
		         incomplete, incomplete > 1 ? "s" : "");
		table_note(t1, why);
	}
	free(s->r);
	hmap_free(&s->by_rank);
	free(s);
	out[0] = t1;
	out[1] = t2;
	return 2;
}

const struct report report_nccl_skew = {
	"nccl_skew",
	"arrival spread at collectives matched across ranks: who is last, lateness, worst 20",
	begin, event, end, NULL, 1, merge, part, drain, pack, unpack,
};
const struct report report_mpi_skew = {
	"mpi_skew",
	"arrival spread at MPI collectives matched across ranks: who is last, lateness, worst 20",
	begin_mpi, event, end, NULL, 1, merge, part, drain, pack, unpack,
};
