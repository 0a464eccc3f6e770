// SPDX-License-Identifier: MIT
#include "model/spans.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct frame {
	uint64_t ts;
	struct sref name, domain;
	uint64_t category, color, ptype, payload;
	uint64_t step_no; /* step: this range began step step_no (CUPTRACE_STEP_RANGE) */
	int step;
};

struct dstack {
	uint64_t domain; /* string ref of the domain name; 0 = default */
	struct frame *v;
	size_t n, cap;
};

struct tstate {
	int64_t tid;
	uint64_t last_ts;
	int seen; /* has recorded events (not only been named) */
	struct dstack *ds;
	size_t nds;
	struct sref name;
	int name_user, has_name;
	int step_open, step_await; /* step_await: its range not seen yet */
	uint64_t step_ts, step_no;
};

struct astart {
	uint64_t id;
	int64_t tid;
	struct frame fr;
	int is_end;	/* an end seen before its start (another thread's ring
			 * came first in the file): fr.ts is the end time */
	int32_t next;	/* hash chain */
};

struct catname {
	uint64_t domain, cat;
	struct sref name;
};

struct spans {
	span_fn fn;
	void *ctx;
	struct tstate *t;
	size_t nt, tcap;
	struct hmap tidx; /* tid + 1 -> index in t, plus 1 */
	size_t tid_m1;    /* the same for tid -1 (key 0 is hmap's) */
	size_t last;      /* index plus 1 of the last thread looked up */
	struct astart *a;
	size_t na, acap;
	int32_t *abucket, afree;
	size_t nbucket;
	struct catname *cat;
	size_t ncat, catcap;
	uint64_t last_ts;
	char *step_name; /* CUPTRACE_STEP_RANGE: a step ends with its range */
	size_t step_len;
	int finishing; /* spans_finish is closing what the file left open */
};

/* Inline (uninterned) strings live in the block buffer; keep a copy. */
static struct sref keep(struct sref r)
{
	if (r.sid != CT_SREF_INLINE)
		return r;
	char *c = xrealloc(NULL, r.len + 1);
	memcpy(c, r.s, r.len);
	c[r.len] = 0;
	r.s = c;
	return r;
}

static void drop(struct sref *r)
{
	if (r->sid == CT_SREF_INLINE)
		free((char *)r->s);
	r->sid = CT_SREF_NONE;
	r->s = "";
	r->len = 0;
}

static struct sref sref_of(const struct ct_event *ev, unsigned i)
{
	struct sref r = {ev->v[i], ev->s[i], ev->sl[i]};
	return r;
}

struct spans *spans_new(span_fn fn, void *ctx)
{
	struct spans *sp = xcalloc(1, sizeof *sp);
	sp->fn = fn;
	sp->ctx = ctx;
	sp->nbucket = 1024;
	sp->abucket = xrealloc(NULL, sp->nbucket * sizeof *sp->abucket);
	for (size_t i = 0; i < sp->nbucket; i++)
		sp->abucket[i] = -1;
	sp->afree = -1;
	return sp;
}

void spans_free(struct spans *sp)
{
	if (!sp)
		return;
	for (size_t i = 0; i < sp->nt; i++) {
		struct tstate *t = &sp->t[i];
		for (size_t d = 0; d < t->nds; d++) {
			for (size_t k = 0; k < t->ds[d].n; k++)
				drop(&t->ds[d].v[k].name);
			free(t->ds[d].v);
		}
		free(t->ds);
		drop(&t->name);
	}
	for (size_t b = 0; b < sp->nbucket; b++)
		for (int32_t i = sp->abucket[b]; i >= 0; i = sp->a[i].next)
			drop(&sp->a[i].fr.name);
	for (size_t i = 0; i < sp->ncat; i++)
		drop(&sp->cat[i].name);
	hmap_free(&sp->tidx);
	free(sp->t), free(sp->a), free(sp->abucket), free(sp->cat);
	free(sp->step_name);
	free(sp);
}

static struct tstate *thread(struct spans *sp, int64_t tid)
{
	/* A file holds blocks of one thread's events: mostly the last one. */
	if (sp->last && sp->t[sp->last - 1].tid == tid)
		return &sp->t[sp->last - 1];
	uint64_t key = (uint64_t)tid + 1;
	uintptr_t i = key ? (uintptr_t)hmap_get(&sp->tidx, key) : sp->tid_m1;
	if (i) {
		sp->last = i;
		return &sp->t[i - 1];
	}
	if (sp->nt == sp->tcap) {
		sp->tcap = sp->tcap ? sp->tcap * 2 : 16;
		sp->t = xrealloc(sp->t, sp->tcap * sizeof *sp->t);
	}
	struct tstate *t = &sp->t[sp->nt++];
	memset(t, 0, sizeof *t);
	t->tid = tid;
	t->name.s = "";
	if (key)
		hmap_put(&sp->tidx, key, (void *)(uintptr_t)sp->nt);
	else
		sp->tid_m1 = sp->nt;
	sp->last = sp->nt;
	return t;
}

static struct dstack *dstack(struct tstate *t, uint64_t domain)
{
	for (size_t i = 0; i < t->nds; i++)
		if (t->ds[i].domain == domain)
			return &t->ds[i];
	t->ds = xrealloc(t->ds, (t->nds + 1) * sizeof *t->ds);
	struct dstack *d = &t->ds[t->nds++];
	memset(d, 0, sizeof *d);
	d->domain = domain;
	return d;
}

static struct sref category_name(struct spans *sp, uint64_t domain, uint64_t cat)
{
	for (size_t i = 0; i < sp->ncat; i++)
		if (sp->cat[i].domain == domain && sp->cat[i].cat == cat)
			return sp->cat[i].name;
	struct sref none = {CT_SREF_NONE, "", 0};
	return none;
}

/* A span from a frame's attributes, ending at end (never before it began). */
static void span_of(struct spans *sp, struct span *s, enum span_kind kind, const struct frame *f,
		    int64_t tid, uint64_t end)
{
	memset(s, 0, sizeof *s);
	s->kind = kind;
	s->tid = s->end_tid = tid;
	s->ts = f->ts;
	s->end = end < f->ts ? f->ts : end;
	s->name = f->name;
	s->domain = f->domain;
	s->category = f->category;
	s->category_name = category_name(sp, f->domain.sid, f->category);
	s->color = f->color;
	s->ptype = f->ptype;
	s->payload = f->payload;
}

static void emit_range(struct spans *sp, struct tstate *t, struct frame *f, uint64_t end,
		       int depth, int unfinished)
{
	struct span s;
	span_of(sp, &s, SP_RANGE, f, t->tid, end);
	s.depth = depth;
	s.unfinished = unfinished;
	s.at_end = sp->finishing;
	sp->fn(sp->ctx, &s);
}

void spans_step_range(struct spans *sp, const char *name, size_t len)
{
	free(sp->step_name);
	sp->step_name = xrealloc(NULL, len + 1);
	memcpy(sp->step_name, name, len);
	sp->step_name[len] = 0;
	sp->step_len = len;
}

/* A range that begins right after a step mark, named as the step range,
 * is that step's: the step ends when it ends. */
static void step_claim(struct spans *sp, struct tstate *t, struct frame *f)
{
	f->step = 0;
	if (!t->step_await || !t->step_open || f->name.len != sp->step_len ||
	    memcmp(f->name.s, sp->step_name, sp->step_len))
		return;
	f->step = 1;
	f->step_no = t->step_no;
	t->step_await = 0;
}

/* Ends the step that frame f's range began, at end; unfinished: the range
 * never ended (closed by the end of the file or a capture stop), so the
 * step is not a whole one either. */
static void step_end(struct spans *sp, struct tstate *t, const struct frame *f, uint64_t end,
                     int unfinished)
{
	if (!f->step || !t->step_open || t->step_no != f->step_no)
		return;
	struct span s;
	memset(&s, 0, sizeof s);
	s.kind = SP_STEP;
	s.tid = s.end_tid = t->tid;
	s.ts = t->step_ts;
	s.end = end < t->step_ts ? t->step_ts : end;
	s.id = t->step_no;
	s.unfinished = unfinished;
	t->step_open = 0;
	sp->fn(sp->ctx, &s);
}

/* Closes every open range of t at its last timestamp. */
static void cut(struct spans *sp, struct tstate *t)
{
	for (size_t d = 0; d < t->nds; d++) {
		struct dstack *ds = &t->ds[d];
		while (ds->n) {
			struct frame *f = &ds->v[--ds->n];
			step_end(sp, t, f, t->last_ts, 1);
			emit_range(sp, t, f, t->last_ts, (int)ds->n, 1);
			drop(&f->name);
		}
	}
}

static void read_frame(struct frame *f, const struct ct_event *ev, unsigned first)
{
	/* first: index of the attributes' first field (domain); F_NVTX_ATTR_*
	 * are the others' places from there */
	f->domain = sref_of(ev, first + F_NVTX_ATTR_DOMAIN);
	f->category = ev->v[first + F_NVTX_ATTR_CATEGORY];
	f->color = ev->v[first + F_NVTX_ATTR_COLOR];
	f->ptype = ev->v[first + F_NVTX_ATTR_PAYLOAD_TYPE];
	f->payload = ev->v[first + F_NVTX_ATTR_PAYLOAD];
	f->name = ev->v[first + F_NVTX_ATTR_MSG_ID] != CT_SREF_NONE
	              ? sref_of(ev, first + F_NVTX_ATTR_MSG_ID)
	              : sref_of(ev, first + F_NVTX_ATTR_MSG);
}

static int32_t *abucket(struct spans *sp, uint64_t id)
{
	return &sp->abucket[hmap_mix(id) & (sp->nbucket - 1)];
}

static void emit_async(struct spans *sp, const struct frame *fr, uint64_t id, int64_t tid,
		       uint64_t end, int64_t end_tid, int unfinished)
{
	struct span s;
	span_of(sp, &s, SP_ASYNC, fr, tid, end);
	s.end_tid = end_tid;
	s.id = id;
	s.unfinished = unfinished;
	sp->fn(sp->ctx, &s);
}

/* Finds (and unlinks) the pending entry for id of the given sort. */
static int32_t async_take(struct spans *sp, uint64_t id, int is_end)
{
	for (int32_t *pi = abucket(sp, id); *pi >= 0; pi = &sp->a[*pi].next) {
		struct astart *a = &sp->a[*pi];
		if (a->id != id || a->is_end != is_end)
			continue;
		int32_t i = *pi;
		*pi = a->next;
		return i;
	}
	return -1;
}

static void async_release(struct spans *sp, int32_t i)
{
	drop(&sp->a[i].fr.name);
	sp->a[i].next = sp->afree;
	sp->afree = i;
}

static struct astart *async_new(struct spans *sp, uint64_t id)
{
	int32_t i;
	if (sp->afree >= 0) {
		i = sp->afree;
		sp->afree = sp->a[i].next;
	} else {
		if (sp->na == sp->acap) {
			sp->acap = sp->acap ? sp->acap * 2 : 64;
			sp->a = xrealloc(sp->a, sp->acap * sizeof *sp->a);
		}
		i = (int32_t)sp->na++;
	}
	struct astart *a = &sp->a[i];
	memset(a, 0, sizeof *a);
	a->id = id;
	int32_t *b = abucket(sp, id);
	a->next = *b;
	*b = i;
	return a;
}

static void async_start(struct spans *sp, const struct ct_event *ev)
{
	struct frame fr;
	fr.ts = ev->v[F_NVTX_START_TS];
	read_frame(&fr, ev, F_NVTX_START_DOMAIN);
	step_claim(sp, thread(sp, ev->tid), &fr);
	uint64_t id = ev->v[F_NVTX_START_ID];
	int32_t e = async_take(sp, id, 1);
	if (e >= 0) {
		step_end(sp, thread(sp, ev->tid), &fr, sp->a[e].fr.ts, 0);
		emit_async(sp, &fr, id, ev->tid, sp->a[e].fr.ts, sp->a[e].tid, 0);
		async_release(sp, e);
		return;
	}
	struct astart *a = async_new(sp, id);
	a->tid = ev->tid;
	a->fr = fr;
	a->fr.name = keep(fr.name);
}

static void async_end(struct spans *sp, const struct ct_event *ev)
{
	uint64_t id = ev->v[F_NVTX_END_ID], ts = ev->v[F_NVTX_END_TS];
	int32_t i = async_take(sp, id, 0);
	if (i >= 0) {
		step_end(sp, thread(sp, sp->a[i].tid), &sp->a[i].fr, ts, 0);
		emit_async(sp, &sp->a[i].fr, id, sp->a[i].tid, ts, ev->tid, 0);
		async_release(sp, i);
		return;
	}
	struct astart *a = async_new(sp, id);
	a->is_end = 1;
	a->tid = ev->tid;
	a->fr.ts = ts;
	a->fr.name.s = "";
	a->fr.step = 0;
}

void spans_event(struct spans *sp, const struct ct_event *ev)
{
	uint64_t ts = ev->v[F_TS];
	if (ts > sp->last_ts)
		sp->last_ts = ts;
	struct tstate *t = thread(sp, ev->tid);
	t->seen = 1;
	struct span s;
	switch (ev->kind) {
	case CT_EV_NVTX_PUSH: {
		struct dstack *d = dstack(t, ev->v[F_NVTX_PUSH_DOMAIN]);
		if (d->n == d->cap) {
			d->cap = d->cap ? d->cap * 2 : 8;
			d->v = xrealloc(d->v, d->cap * sizeof *d->v);
		}
		struct frame *f = &d->v[d->n++];
		f->ts = ts;
		read_frame(f, ev, F_NVTX_PUSH_DOMAIN);
		f->name = keep(f->name);
		step_claim(sp, t, f);
		break;
	}
	case CT_EV_NVTX_POP: {
		struct dstack *d = dstack(t, ev->v[F_NVTX_POP_DOMAIN]);
		if (d->n) { /* a pop without its push (dropped or before capture) is ignored */
			struct frame *f = &d->v[--d->n];
			step_end(sp, t, f, ts, 0);
			emit_range(sp, t, f, ts, (int)d->n, 0);
			drop(&f->name);
		}
		break;
	}
	case CT_EV_NVTX_START:
		async_start(sp, ev);
		break;
	case CT_EV_NVTX_END:
		async_end(sp, ev);
		break;
	case CT_EV_NVTX_MARK: {
		struct frame f;
		f.ts = ts;
		read_frame(&f, ev, F_NVTX_MARK_DOMAIN);
		span_of(sp, &s, SP_MARK, &f, ev->tid, ts);
		sp->fn(sp->ctx, &s);
		break;
	}
	case CT_EV_THREAD_NAME: {
		struct tstate *named = thread(sp, (int64_t)ev->v[F_THREAD_NAME_TID]);
		int user = ev->v[F_THREAD_NAME_USER] != 0;
		if (!named->has_name || user || !named->name_user) {
			drop(&named->name);
			named->name = keep(sref_of(ev, F_THREAD_NAME_NAME));
			named->has_name = 1;
			named->name_user |= user;
		}
		break;
	}
	case CT_EV_CATEGORY: {
		uint64_t dom = ev->v[F_CATEGORY_DOMAIN], cat = ev->v[F_CATEGORY_CATEGORY];
		size_t i;
		for (i = 0; i < sp->ncat; i++)
			if (sp->cat[i].domain == dom && sp->cat[i].cat == cat)
				break;
		if (i == sp->ncat) {
			if (sp->ncat == sp->catcap) {
				sp->catcap = sp->catcap ? sp->catcap * 2 : 16;
				sp->cat = xrealloc(sp->cat, sp->catcap * sizeof *sp->cat);
			}
			sp->cat[sp->ncat++] = (struct catname){dom, cat, {CT_SREF_NONE, "", 0}};
		}
		drop(&sp->cat[i].name);
		sp->cat[i].name = keep(sref_of(ev, F_CATEGORY_NAME));
		break;
	}
	case CT_EV_CAPTURE:
		memset(&s, 0, sizeof s);
		s.kind = SP_CAPTURE;
		s.tid = s.end_tid = ev->tid;
		s.ts = s.end = ts;
		s.id = ev->v[F_CAPTURE_ON];
		sp->fn(sp->ctx, &s);
		break;
	case CT_EV_STEP:
		if (t->step_open) {
			memset(&s, 0, sizeof s);
			s.kind = SP_STEP;
			s.tid = s.end_tid = t->tid;
			s.ts = t->step_ts;
			s.end = ts;
			s.id = t->step_no;
			sp->fn(sp->ctx, &s);
		}
		t->step_open = 1;
		t->step_await = sp->step_name != NULL;
		t->step_ts = ts;
		t->step_no = ev->v[F_STEP_STEP];
		break;
	case CT_EV_RESET:
		cut(sp, t);
		t->step_open = 0;
		break;
	}
	if (ts > t->last_ts)
		t->last_ts = ts;
}

void spans_finish(struct spans *sp)
{
	sp->finishing = 1;
	for (size_t i = 0; i < sp->nt; i++)
		cut(sp, &sp->t[i]);
	/* Async ranges never ended: close them at the end of the file. Ends
	 * whose start was never recorded are dropped. */
	for (size_t b = 0; b < sp->nbucket; b++) {
		for (int32_t i = sp->abucket[b]; i >= 0;) {
			struct astart *a = &sp->a[i];
			int32_t next = a->next;
			if (!a->is_end) {
				step_end(sp, thread(sp, a->tid), &a->fr, sp->last_ts, 1);
				emit_async(sp, &a->fr, a->id, a->tid, sp->last_ts, a->tid, 1);
			}
			async_release(sp, i);
			i = next;
		}
		sp->abucket[b] = -1;
	}
	for (size_t i = 0; i < sp->nt; i++) {
		struct tstate *t = &sp->t[i];
		struct span s;
		memset(&s, 0, sizeof s);
		s.kind = SP_THREAD;
		s.tid = s.end_tid = t->tid;
		s.name = t->name;
		s.user = t->name_user;
		s.id = (uint64_t)t->seen;
		sp->fn(sp->ctx, &s);
	}
}

uint64_t spans_open_at(const struct spans *sp, int64_t tid, uint64_t ts,
                       void (*fn)(void *ctx, uint64_t domain, int depth, uint64_t ts), void *ctx)
{
	uint64_t key = (uint64_t)tid + 1;
	uintptr_t i = key ? (uintptr_t)hmap_get(&sp->tidx, key) : sp->tid_m1;
	if (!i)
		return 0;
	const struct tstate *t = &sp->t[i - 1];
	for (size_t d = 0; fn && d < t->nds; d++)
		for (size_t k = 0; k < t->ds[d].n && t->ds[d].v[k].ts <= ts; k++)
			fn(ctx, t->ds[d].domain, (int)k, t->ds[d].v[k].ts);
	return t->last_ts;
}

uint64_t spans_last_ts(const struct spans *sp)
{
	return sp->last_ts;
}
