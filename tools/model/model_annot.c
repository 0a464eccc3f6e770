// SPDX-License-Identifier: MIT
/* The NVTX GPU projection (Kineto's gpu_user_annotation): for each NVTX
 * push/pop range, on each GPU stream, one MC_GPU_ANNOTATION slice from the
 * start of the first to the end of the last GPU work (kernels, copies,
 * memsets) launched inside it: the launching call started within the range,
 * on the range's thread.
 *
 * model_gpu.c reports each call paired with its GPU work; the call's time
 * is then looked up in the thread's ranges: those still open (spans.c keeps
 * their stack) and those closed lately (kept here). Calls come from CUPTI's
 * buffers, usually after the thread's NVTX records in the file; a call
 * later than the thread's NVTX so far waits until its NVTX catches up. A
 * closed range is handed out once the file's NVTX clock has moved
 * HORIZON_NS past its end (or its thread keeps too many), so memory holds
 * a window of the trace, not all of it; work paired later than that is
 * not projected.
 *
 * PyTorch's record_function scopes project the same way (the part marked
 * torch), but the file tells of a scope only when it ends: no stack says
 * which are open. So each thread keeps its last RECENT calls, which a scope
 * takes in when it comes, and the scopes that ended lately, which a call
 * that comes after its scope joins; a scope is handed out HORIZON_NS after
 * its end by the scopes' own clock (the latest scope end or call start). */
#include "model/model_int.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define HORIZON_NS  (10ull * 1000000000ull)
#define MAX_CLOSED  65536 /* closed ranges a thread keeps */
#define MAX_WAITING 65536 /* calls a thread keeps waiting for its NVTX */
#define MAX_SCAN    4096  /* closed ranges looked at per call */
#define RECENT      65536 /* calls a thread keeps for the scopes that end after them */
#define SLACK       64    /* calls out of order around a scope's edges */
#define MAX_SCOPES  65536 /* scopes kept, all threads together */
#define NAME_MAX_COPY 1024 /* bytes of a scope's name kept when the file gave it inline */

struct ext { /* one stream's part of a range's projection */
	const struct m_track *tr;
	uint64_t ts, end, ops;
};

struct arange {
	uint64_t ts, end, domain;
	int depth;
	struct sref name; /* closed ranges; inline names are copies */
	struct ext *x;
	unsigned nx;
};

struct launch {
	uint64_t call_ts, ts, end;
	const struct m_track *tr;
};

struct athread {
	int64_t tid;
	struct arange *open; /* open ranges that hold work so far */
	size_t nopen;
	struct arange *closed; /* in the order they closed (by end) */
	size_t head, nclosed, capclosed;
	struct launch *wait; /* in arrival order */
	size_t nwait, capwait;
	/* record_function scopes: they come when they end, after or before
	 * the calls inside them. The last RECENT calls (a ring, in arrival
	 * order: about that of their start), and the scopes that ended
	 * lately (in arrival order: about that of their end). */
	struct launch *recent; /* [rhead, rn) */
	size_t rhead, rn, rcap;
	struct arange *scopes;
	size_t shead, sn, scap;
};

struct model_annot {
	struct hmap threads; /* tid + 1 -> struct athread */
	struct athread **all;
	size_t nall;
	uint64_t torch_now; /* the latest scope end or call start seen (scopes' clock) */
	size_t nscopes;     /* scopes kept, all threads */
};

static struct model_annot *state(struct model *m)
{
	if (!m->annot)
		m->annot = xcalloc(1, sizeof *m->annot);
	return m->annot;
}

static struct athread *athread(struct model_annot *a, int64_t tid)
{
	struct athread *t = hmap_get(&a->threads, (uint64_t)tid + 1);
	if (t)
		return t;
	t = xcalloc(1, sizeof *t);
	t->tid = tid;
	hmap_put(&a->threads, (uint64_t)tid + 1, t);
	a->all = xrealloc(a->all, (a->nall + 1) * sizeof *a->all);
	a->all[a->nall++] = t;
	return t;
}

static void extend(struct arange *r, const struct launch *l)
{
	for (unsigned i = 0; i < r->nx; i++)
		if (r->x[i].tr == l->tr) {
			if (l->ts < r->x[i].ts)
				r->x[i].ts = l->ts;
			if (l->end > r->x[i].end)
				r->x[i].end = l->end;
			r->x[i].ops++;
			return;
		}
	r->x = xrealloc(r->x, (r->nx + 1) * sizeof *r->x);
	r->x[r->nx++] = (struct ext){l->tr, l->ts, l->end, 1};
}

struct open_ctx {
	struct athread *t;
	const struct launch *l;
};

static void on_open(void *ctx, uint64_t domain, int depth, uint64_t ts)
{
	struct open_ctx *c = ctx;
	struct athread *t = c->t;
	for (size_t i = 0; i < t->nopen; i++) {
		struct arange *r = &t->open[i];
		if (r->ts == ts && r->domain == domain && r->depth == depth) {
			extend(r, c->l);
			return;
		}
	}
	t->open = xrealloc(t->open, (t->nopen + 1) * sizeof *t->open);
	struct arange *r = &t->open[t->nopen++];
	memset(r, 0, sizeof *r);
	r->ts = ts, r->domain = domain, r->depth = depth;
	extend(r, c->l);
}

/* The ranges of t holding call time l->call_ts (its NVTX is known there). */
static void place(struct model *m, struct athread *t, const struct launch *l)
{
	size_t lo = t->head, hi = t->nclosed; /* first closed range ending at or after the call */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->closed[mid].end < l->call_ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, n = 0; i < t->nclosed && n < MAX_SCAN; i++, n++)
		if (t->closed[i].ts <= l->call_ts)
			extend(&t->closed[i], l);
	struct open_ctx c = {t, l};
	spans_open_at(m->spans, t->tid, l->call_ts, on_open, &c);
}

static void hand_out(struct model *m, struct athread *t, struct arange *r, int torch)
{
	for (unsigned i = 0; i < r->nx; i++) {
		struct span s;
		memset(&s, 0, sizeof s);
		s.kind = SP_RANGE;
		s.tid = s.end_tid = t->tid;
		s.ts = r->x[i].ts, s.end = r->x[i].end;
		s.name = r->name;
		s.depth = r->depth;
		struct m_event ev;
		model_head(&ev, ME_SLICE, MC_GPU_ANNOTATION, r->x[i].tr, s.ts, s.end, NULL);
		ev.span = &s;
		ev.annot.range_ts = r->ts, ev.annot.range_end = r->end;
		ev.annot.ops = r->x[i].ops;
		ev.annot.part = i, ev.annot.nparts = r->nx;
		ev.annot.torch = (uint8_t)torch;
		model_emit(m, &ev);
	}
	free(r->x);
	if (r->name.sid == CT_SREF_INLINE)
		free((char *)r->name.s);
}

/* Hands out the closed ranges of t that nothing can reach any more. */
static void expire(struct model *m, struct athread *t, uint64_t now, int all)
{
	while (t->head < t->nclosed &&
	       (all || t->nclosed - t->head > MAX_CLOSED || t->closed[t->head].end + HORIZON_NS < now))
		hand_out(m, t, &t->closed[t->head++], 0);
	if (t->head == t->nclosed) {
		t->head = t->nclosed = 0;
	} else if (t->head > t->nclosed / 2 && t->head > 64) {
		memmove(t->closed, t->closed + t->head, (t->nclosed - t->head) * sizeof *t->closed);
		t->nclosed -= t->head;
		t->head = 0;
	}
}

/* Calls that waited for their thread's NVTX, placed once it is known. */
static void release(struct model *m, struct athread *t, uint64_t known, int all)
{
	size_t w = 0;
	for (size_t i = 0; i < t->nwait; i++) {
		if (all || t->wait[i].call_ts <= known)
			place(m, t, &t->wait[i]);
		else
			t->wait[w++] = t->wait[i];
	}
	t->nwait = w;
}

/* ---- record_function scopes */

static struct launch *recent_at(struct athread *t, size_t i)
{
	return &t->recent[t->rhead + i];
}

/* Keeps l among the thread's last RECENT calls (grown as needed: a
 * damaged file may name many threads). */
static void recent_add(struct athread *t, const struct launch *l)
{
	if (t->rn == t->rcap) {
		if (t->rhead >= t->rn / 2 && t->rhead) {
			memmove(t->recent, t->recent + t->rhead, (t->rn - t->rhead) * sizeof *t->recent);
			t->rn -= t->rhead;
			t->rhead = 0;
		} else {
			t->rcap = t->rcap ? 2 * t->rcap : 64;
			t->recent = xrealloc(t->recent, t->rcap * sizeof *t->recent);
		}
	}
	t->recent[t->rn++] = *l;
	if (t->rn - t->rhead > RECENT)
		t->rhead++;
}

/* Hands out the scopes of t that no call can reach any more. */
static void expire_scopes(struct model *m, struct athread *t, uint64_t now, int all)
{
	while (t->shead < t->sn &&
	       (all || t->sn - t->shead > MAX_CLOSED || t->scopes[t->shead].end + HORIZON_NS < now)) {
		hand_out(m, t, &t->scopes[t->shead++], 1);
		m->annot->nscopes--;
	}
	if (t->shead == t->sn) {
		t->shead = t->sn = 0;
	} else if (t->shead > t->sn / 2 && t->shead > 64) {
		memmove(t->scopes, t->scopes + t->shead, (t->sn - t->shead) * sizeof *t->scopes);
		t->sn -= t->shead;
		t->shead = 0;
	}
}

/* A call after the scopes around it: into those that hold its start. */
static void place_scopes(struct athread *t, const struct launch *l)
{
	size_t lo = t->shead, hi = t->sn; /* first scope ending at or after the call */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->scopes[mid].end < l->call_ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	lo = lo > t->shead + SLACK ? lo - SLACK : t->shead;
	for (size_t i = lo, n = 0; i < t->sn && n < MAX_SCAN; i++, n++)
		if (t->scopes[i].ts <= l->call_ts && l->call_ts <= t->scopes[i].end)
			extend(&t->scopes[i], l);
}

static void launch_scopes(struct model *m, struct athread *t, const struct launch *l)
{
	struct model_annot *a = m->annot;
	if (l->call_ts > a->torch_now)
		a->torch_now = l->call_ts;
	if (t->sn > t->shead)
		place_scopes(t, l);
	recent_add(t, l);
	if (t->shead < t->sn && t->scopes[t->shead].end + HORIZON_NS < a->torch_now)
		expire_scopes(m, t, a->torch_now, 0);
}

void model_annot_scope(struct model *m, int64_t tid, uint64_t ts, uint64_t end,
                       const struct sref *name)
{
	struct model_annot *a = state(m);
	struct athread *t = athread(a, tid);
	struct arange r;
	memset(&r, 0, sizeof r);
	r.ts = ts, r.end = end;
	/* the calls that came before it */
	size_t n = t->rn - t->rhead, lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (recent_at(t, mid)->call_ts < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t past = 0;
	for (size_t i = lo > SLACK ? lo - SLACK : 0; i < n && past < SLACK; i++) {
		const struct launch *l = recent_at(t, i);
		if (l->call_ts > end)
			past++;
		else if (l->call_ts >= ts)
			extend(&r, l);
	}
	r.name = *name;
	if (name->sid < CT_SID_FIRST) { /* inline: its bytes go with the block */
		uint32_t len = name->len < NAME_MAX_COPY ? name->len : NAME_MAX_COPY;
		char *c = xrealloc(NULL, len + 1u);
		memcpy(c, name->s, len);
		c[len] = 0;
		r.name = (struct sref){CT_SREF_INLINE, c, len};
	}
	if (t->sn == t->scap) {
		t->scap = t->scap ? t->scap * 2 : 64;
		t->scopes = xrealloc(t->scopes, t->scap * sizeof *t->scopes);
	}
	t->scopes[t->sn++] = r;
	a->nscopes++;
	if (end > a->torch_now)
		a->torch_now = end;
	/* too many kept (a damaged file's many threads): this thread's go */
	expire_scopes(m, t, a->torch_now, a->nscopes > MAX_SCOPES);
}

/* ---- calls */

void model_annot_launch(struct model *m, int64_t tid, uint64_t call_ts, const struct m_track *tr,
                        uint64_t ts, uint64_t end)
{
	struct athread *t = athread(state(m), tid);
	struct launch l = {call_ts, ts, end, tr};
	if (m->project_torch)
		launch_scopes(m, t, &l);
	if (!m->project)
		return;
	/* known 0: no NVTX of that thread read yet. Its ranges may still come:
	 * CUPTI's buffers often lie in the file before the thread's NVTX
	 * chunks, so the calls wait for them (dropping them would project 0 of
	 * the 15 forward ranges of 15 iterations of sim_train). */
	uint64_t known = spans_open_at(m->spans, tid, 0, NULL, NULL);
	if (!known || call_ts > known) {
		if (t->nwait == MAX_WAITING) { /* the older half waited too long: placed as things are */
			for (size_t i = 0; i < MAX_WAITING / 2; i++)
				place(m, t, &t->wait[i]);
			t->nwait -= MAX_WAITING / 2;
			memmove(t->wait, t->wait + MAX_WAITING / 2, t->nwait * sizeof *t->wait);
		}
		if (t->nwait == t->capwait) {
			t->capwait = t->capwait ? 2 * t->capwait : 64;
			t->wait = xrealloc(t->wait, t->capwait * sizeof *t->wait);
		}
		t->wait[t->nwait++] = l;
		return;
	}
	place(m, t, &l);
}

void model_annot_range(struct model *m, const struct span *s)
{
	struct athread *t = athread(state(m), s->tid);
	struct arange r;
	memset(&r, 0, sizeof r);
	for (size_t i = 0; i < t->nopen; i++)
		if (t->open[i].ts == s->ts && t->open[i].domain == s->domain.sid &&
		    t->open[i].depth == s->depth) {
			r = t->open[i];
			t->open[i] = t->open[--t->nopen];
			break;
		}
	r.ts = s->ts, r.end = s->end, r.domain = s->domain.sid, r.depth = s->depth;
	r.name = s->name;
	if (r.name.sid == CT_SREF_INLINE) {
		char *c = xrealloc(NULL, r.name.len + 1);
		memcpy(c, r.name.s, r.name.len);
		c[r.name.len] = 0;
		r.name.s = c;
	}
	if (t->nclosed == t->capclosed) {
		t->capclosed = t->capclosed ? t->capclosed * 2 : 64;
		t->closed = xrealloc(t->closed, t->capclosed * sizeof *t->closed);
	}
	t->closed[t->nclosed++] = r;
	uint64_t known = spans_open_at(m->spans, t->tid, 0, NULL, NULL);
	if (t->nwait)
		release(m, t, known, 0);
	expire(m, t, spans_last_ts(m->spans), 0);
}

void model_annot_end(struct model *m)
{
	struct model_annot *a = m->annot;
	if (!a)
		return;
	for (size_t i = 0; i < a->nall; i++) {
		struct athread *t = a->all[i];
		release(m, t, 0, 1);
		expire(m, t, 0, 1);
		expire_scopes(m, t, 0, 1);
		for (size_t k = 0; k < t->nopen; k++)
			free(t->open[k].x); /* never closed: the file ended inside */
		free(t->open), free(t->closed), free(t->wait);
		free(t->recent), free(t->scopes);
		free(t);
	}
	free(a->all);
	hmap_free(&a->threads);
	free(a);
	m->annot = NULL;
}
