// SPDX-License-Identifier: MIT
/* MPI calls in the model. Each thread that called MPI gets an MT_MPI track
 * in the rank's CPU process, beside it, whose slices are its calls
 * (MC_MPI, with their arguments, m_mpi); a request's call (MPI_Isend,
 * MPI_Iallreduce, MPI_Start) gets an arrow (MC_MPI_FLOW) to the call that
 * completed it, on whatever thread. A call the file ends inside (its
 * mpi_enter without its mpi_call: the process was killed, or the trace
 * cut while it waited) is a slice to the file's end, `unfinished`. Each
 * communicator the rank is a member of is told once, as an MC_MPI_COMM
 * instant on the main thread's MPI track (mpi_hang counts a member that
 * never called anything on it); the watchdog's mpi_hang is an instant
 * (MC_MPI_HANG) on the thread's MPI track.
 * Track numbers: MPI_TID + the thread's order of first sight. */
#include "model/model_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define NENTER 8 /* calls open at once on a thread (nested: MPI calling MPI) */

struct enter {
	uint64_t ts, comm, seq;
	const char *func; /* interned */
};

struct done {
	uint64_t req, ts, bytes;
	int64_t peer, tag;
};

struct mthread {
	int64_t tid;
	struct m_track *track;
	struct enter open[NENTER];
	unsigned nopen;
	struct done *dn; /* mpi_done records waiting for their call */
	size_t ndn, dncap;
};

/* Where a request came from (its call), or, where the completing call came
 * first in the file (another thread's ring written first), where it went. */
struct req {
	const struct m_track *track;
	uint64_t ts;
	int completed; /* this is the completing call, waiting for its origin */
};

struct model_mpi {
	struct model *m;
	struct hmap comms;   /* id -> struct mpi_comm */
	struct hmap threads; /* tid + 1 -> struct mthread */
	struct mthread **thr;
	size_t nthr;
	struct hmap reqs;  /* req id -> struct req */
	struct hmap names; /* hash -> interned function names */
	uint64_t last;     /* the latest host time seen */
};

static struct model_mpi *state(struct model *m)
{
	if (!m->mpi) {
		m->mpi = xcalloc(1, sizeof *m->mpi);
		m->mpi->m = m;
	}
	return m->mpi;
}

static const char *intern(struct model_mpi *x, const char *s, uint32_t len)
{
	uint64_t k = 1469598103934665603ull;
	for (uint32_t i = 0; i < len; i++)
		k = (k ^ (unsigned char)s[i]) * 1099511628211ull;
	for (k += !k;; k += 1 + !(k + 1)) {
		char *c = hmap_get(&x->names, k);
		if (!c)
			break;
		if (strlen(c) == len && !memcmp(c, s, len))
			return c;
	}
	char *c = xrealloc(NULL, (size_t)len + 1);
	memcpy(c, s, len);
	c[len] = 0;
	hmap_put(&x->names, k, c);
	return c;
}

static struct mthread *thread_of(struct model_mpi *x, int64_t tid)
{
	struct mthread *t = hmap_get(&x->threads, (uint64_t)tid + 1);
	if (t)
		return t;
	t = xcalloc(1, sizeof *t);
	t->tid = tid;
	x->thr = xrealloc(x->thr, (x->nthr + 1) * sizeof *x->thr);
	x->thr[x->nthr++] = t;
	hmap_put(&x->threads, (uint64_t)tid + 1, t);
	return t;
}

static struct m_track *track_of(struct model_mpi *x, struct mthread *t)
{
	if (t->track)
		return t->track;
	int64_t n = (int64_t)x->nthr;
	for (size_t i = 0; i < x->nthr; i++)
		if (x->thr[i] == t)
			n = (int64_t)i;
	return t->track = model_track(x->m, MT_MPI, (uint64_t)t->tid, MPI_TID + n, NULL);
}

static const struct mpi_comm *comm_of(struct model_mpi *x, uint64_t id)
{
	return id ? hmap_get(&x->comms, id) : NULL;
}

static void define(struct model_mpi *x, const struct ct_event *ev)
{
	uint64_t id = ev->v[F_MPI_COMM_ID];
	if (!id)
		return;
	struct mpi_comm *c = hmap_get(&x->comms, id);
	int first = !c;
	if (!c) {
		c = xcalloc(1, sizeof *c);
		hmap_put(&x->comms, id, c);
	}
	c->id = id;
	c->handle = ev->v[F_MPI_COMM_HANDLE];
	c->size = ev->v[F_MPI_COMM_SIZE];
	c->remote = ev->v[F_MPI_COMM_REMOTE];
	c->parent = ev->v[F_MPI_COMM_PARENT];
	c->rank = (int64_t)ev->v[F_MPI_COMM_RANK];
	size_t n = ev->sl[F_MPI_COMM_NAME] < sizeof c->name - 1 ? ev->sl[F_MPI_COMM_NAME]
	                                                        : sizeof c->name - 1;
	memcpy(c->name, ev->s[F_MPI_COMM_NAME], n);
	c->name[n] = 0;
	/* a member, told once; not by a forked child's file or a later part's,
	 * which repeat their process's definitions */
	const struct ct_header *hd = &x->m->t->f.h;
	if (!first || hd->forked_from || ct_header_later_part(hd))
		return;
	struct m_mpi mp = {.comm = c, .comm_id = id};
	struct m_event e;
	uint64_t ts = ev->v[F_MPI_COMM_TS];
	model_head(&e, ME_INSTANT, MC_MPI_COMM,
	           track_of(x, thread_of(x, (int64_t)x->m->t->f.h.pid)), ts, ts, ev);
	e.mpi = &mp;
	model_emit(x->m, &e);
}

/* The arrow of request id between its call and the one completing it. */
static void link(struct model_mpi *x, uint64_t id, const struct m_track *tr, uint64_t ts,
                 int completed)
{
	struct req *r = hmap_get(&x->reqs, id);
	if (!r) {
		r = xcalloc(1, sizeof *r);
		*r = (struct req){tr, ts, completed};
		hmap_put(&x->reqs, id, r);
		return;
	}
	if (r->completed == completed) { /* made again (a persistent request's id reused) */
		r->track = tr, r->ts = ts;
		return;
	}
	if (completed)
		model_flow(x->m, MC_MPI_FLOW, r->track, r->ts, tr, ts);
	else
		model_flow(x->m, MC_MPI_FLOW, tr, ts, r->track, r->ts);
	hmap_del(&x->reqs, id);
	free(r);
}

static void call(struct model_mpi *x, const struct ct_event *ev)
{
	struct mthread *t = thread_of(x, ev->tid);
	const char *fn = ev->s[F_MPI_CALL_FUNC];
	uint32_t fl = ev->sl[F_MPI_CALL_FUNC];
	/* its mpi_enter: the innermost open one of its function */
	for (unsigned i = t->nopen; i-- > 0;)
		if (strlen(t->open[i].func) == fl && !memcmp(t->open[i].func, fn, fl)) {
			t->nopen = i;
			break;
		}
	struct m_mpi mp = {
	    .comm = comm_of(x, ev->v[F_MPI_CALL_COMM]),
	    .comm_id = ev->v[F_MPI_CALL_COMM],
	    .seq = ev->v[F_MPI_CALL_SEQ],
	    .count = ev->v[F_MPI_CALL_COUNT],
	    .bytes = ev->v[F_MPI_CALL_BYTES],
	    .recv_bytes = ev->v[F_MPI_CALL_RECV_BYTES],
	    .req = ev->v[F_MPI_CALL_REQ],
	    .peer = (int64_t)ev->v[F_MPI_CALL_PEER],
	    .world_peer = (int64_t)ev->v[F_MPI_CALL_WORLD_PEER],
	    .tag = (int64_t)ev->v[F_MPI_CALL_TAG],
	    .status = (int64_t)ev->v[F_MPI_CALL_STATUS],
	    .func = {ev->v[F_MPI_CALL_FUNC], fn, fl},
	    .datatype = {ev->v[F_MPI_CALL_DATATYPE], ev->s[F_MPI_CALL_DATATYPE],
	                 ev->sl[F_MPI_CALL_DATATYPE]},
	    .done = t->ndn,
	};
	uint64_t ts = ev->v[F_MPI_CALL_TS], end = ev->v[F_MPI_CALL_END];
	if (end < ts)
		end = ts;
	if (end > x->last)
		x->last = end;
	struct m_track *tr = track_of(x, t);
	struct m_event e;
	model_head(&e, ME_SLICE, MC_MPI, tr, ts, end, ev);
	e.mpi = &mp;
	model_emit(x->m, &e);
	for (size_t i = 0; i < t->ndn; i++)
		link(x, t->dn[i].req, tr, ts, 1);
	t->ndn = 0;
	/* the requests it made or started: MPI_Startall's, count in a row */
	uint64_t n = mp.req ? 1 : 0;
	if (n && fl == 12 && !memcmp(fn, "MPI_Startall", 12) && mp.count > 1)
		n = mp.count;
	for (uint64_t i = 0; i < n; i++)
		link(x, mp.req + i, tr, ts, 0);
}

void model_mpi_record(struct model *m, const struct ct_event *ev)
{
	struct model_mpi *x = state(m);
	struct mthread *t;
	uint64_t ts = ev->v[F_TS];
	if (ev->kind != CT_EV_MPI_COMM && ts > x->last)
		x->last = ts;
	switch (ev->kind) {
	case CT_EV_MPI_COMM:
		define(x, ev);
		break;
	case CT_EV_MPI_CALL:
		call(x, ev);
		break;
	case CT_EV_MPI_ENTER:
		t = thread_of(x, ev->tid);
		if (t->nopen == NENTER) /* absurdly deep: the outermost gives way */
			memmove(t->open, t->open + 1, --t->nopen * sizeof *t->open);
		t->open[t->nopen++] =
		    (struct enter){ts, ev->v[F_MPI_ENTER_COMM], ev->v[F_MPI_ENTER_SEQ],
		                   intern(x, ev->s[F_MPI_ENTER_FUNC], ev->sl[F_MPI_ENTER_FUNC])};
		track_of(x, t);
		break;
	case CT_EV_MPI_DONE:
		t = thread_of(x, ev->tid);
		if (t->ndn == t->dncap) {
			t->dncap = t->dncap ? 2 * t->dncap : 16;
			t->dn = xrealloc(t->dn, t->dncap * sizeof *t->dn);
		}
		t->dn[t->ndn++] =
		    (struct done){ev->v[F_MPI_DONE_REQ], ts, ev->v[F_MPI_DONE_BYTES],
		                  (int64_t)ev->v[F_MPI_DONE_PEER], (int64_t)ev->v[F_MPI_DONE_TAG]};
		break;
	case CT_EV_MPI_HANG: {
		t = thread_of(x, ev->tid);
		struct m_mpi mp = {
		    .comm = comm_of(x, ev->v[F_MPI_HANG_COMM]),
		    .comm_id = ev->v[F_MPI_HANG_COMM],
		    .seq = ev->v[F_MPI_HANG_SEQ],
		    .req = ev->v[F_MPI_HANG_REQ],
		    .in_flight = ev->v[F_MPI_HANG_IN_FLIGHT],
		    .func = {ev->v[F_MPI_HANG_FUNC], ev->s[F_MPI_HANG_FUNC],
		             ev->sl[F_MPI_HANG_FUNC]},
		    .peer = CT_MPI_NO_PEER,
		    .world_peer = CT_MPI_NO_PEER,
		    .tag = CT_MPI_NO_TAG,
		};
		struct m_event e;
		model_head(&e, ME_INSTANT, MC_MPI_HANG, track_of(x, t), ts, ts, ev);
		e.mpi = &mp;
		model_emit(m, &e);
		break;
	}
	default:
		break;
	}
}

void model_mpi_end(struct model *m, uint64_t last)
{
	struct model_mpi *x = m->mpi;
	if (!x)
		return;
	const struct ct_file *f = &m->t->f;
	uint64_t end = f->final_footer && f->mono_end ? f->mono_end
	               : last > x->last               ? last
	                                              : x->last;
	for (size_t i = 0; i < x->nthr; i++) {
		struct mthread *t = x->thr[i];
		for (unsigned k = 0; k < t->nopen; k++) { /* outermost first */
			const struct enter *o = &t->open[k];
			struct m_mpi mp = {
			    .comm = comm_of(x, o->comm),
			    .comm_id = o->comm,
			    .seq = o->seq,
			    .peer = CT_MPI_NO_PEER,
			    .world_peer = CT_MPI_NO_PEER,
			    .tag = CT_MPI_NO_TAG,
			    .func = {CT_SREF_INLINE, o->func, (uint32_t)strlen(o->func)},
			    .unfinished = 1,
			};
			struct m_event e;
			model_head(&e, ME_SLICE, MC_MPI, track_of(x, t), o->ts,
			           end > o->ts ? end : o->ts, NULL);
			e.mpi = &mp;
			model_emit(m, &e);
		}
		free(t->dn);
		free(t);
	}
	free(x->thr);
	for (size_t i = 0; i < x->comms.cap; i++)
		if (x->comms.keys[i])
			free(x->comms.vals[i]);
	for (size_t i = 0; i < x->reqs.cap; i++)
		if (x->reqs.keys[i])
			free(x->reqs.vals[i]);
	for (size_t i = 0; i < x->names.cap; i++)
		if (x->names.keys[i])
			free(x->names.vals[i]);
	hmap_free(&x->comms);
	hmap_free(&x->threads);
	hmap_free(&x->reqs);
	hmap_free(&x->names);
	free(x);
	m->mpi = NULL;
}
