// SPDX-License-Identifier: MIT
#include "stats/busy.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <string.h>

#define HORIZON_NS (10ull * 1000000000ull) /* a stream silent this long holds nothing back */
#define RECHECK    64                      /* adds between watermark updates */

struct src {
	const void *p;
	uint64_t last; /* its last start */
};

struct run { /* work still running in the sweep */
	uint64_t end;
	unsigned cat;
};

struct busy {
	busy_fn fn;
	void *ctx;
	struct src *srcs;
	size_t nsrc, last_src;
	uint64_t maxts, wm;
	unsigned adds;
	/* The last BUSY_ORDER intervals, a ring in the order they came, and
	 * the slots of those below every later one's start (rising: the
	 * front is the smallest start among them). */
	struct busy_iv *young;
	uint32_t *mins;
	size_t y0, ny, m0, nm;
	struct busy_iv *wait; /* older intervals: min-heap by ts */
	size_t nwait, capwait;
	struct run *run; /* min-heap by end */
	size_t nrun, caprun;
	unsigned cnt[3];
	uint64_t now;
	int started;
	struct busy_late late;
};

struct busy *busy_new(busy_fn fn, void *ctx)
{
	struct busy *b = xcalloc(1, sizeof *b);
	b->fn = fn, b->ctx = ctx;
	return b;
}

void busy_free(struct busy *b)
{
	if (!b)
		return;
	free(b->srcs), free(b->wait), free(b->run);
	free(b->young), free(b->mins);
	free(b);
}

static unsigned mask(const struct busy *b)
{
	return (b->cnt[0] ? 1u : 0) | (b->cnt[1] ? 2u : 0) | (b->cnt[2] ? 4u : 0);
}

static void emit(struct busy *b, uint64_t to, const struct busy_iv *next)
{
	if (to > b->now)
		b->fn(b->ctx, b->now, to, mask(b), next);
	if (to > b->now)
		b->now = to;
}

static void run_pop(struct busy *b)
{
	struct run *h = b->run;
	h[0] = h[--b->nrun];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < b->nrun && h[l].end < h[m].end)
			m = l;
		if (r < b->nrun && h[r].end < h[m].end)
			m = r;
		if (m == i)
			break;
		struct run t = h[i];
		h[i] = h[m], h[m] = t, i = m;
	}
}

static void run_push(struct busy *b, uint64_t end, unsigned cat)
{
	if (b->nrun == b->caprun) {
		b->caprun = b->caprun ? b->caprun * 2 : 64;
		b->run = xrealloc(b->run, b->caprun * sizeof *b->run);
	}
	struct run *h = b->run;
	size_t i = b->nrun++;
	h[i] = (struct run){end, cat};
	while (i && h[(i - 1) / 2].end > h[i].end) {
		struct run t = h[i];
		h[i] = h[(i - 1) / 2], h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static unsigned cat_index(unsigned cat)
{
	return cat == BUSY_COMM ? 1 : cat == BUSY_MEMORY ? 2 : 0;
}

/* Ends the running work that ends by t, segment by segment. */
static void advance(struct busy *b, uint64_t t)
{
	while (b->nrun && b->run[0].end <= t) {
		struct run r = b->run[0];
		emit(b, r.end, NULL);
		b->cnt[cat_index(r.cat)]--;
		run_pop(b);
	}
}

/* The sweep takes iv (released in start order). */
static void sweep(struct busy *b, const struct busy_iv *iv)
{
	uint64_t ts = iv->ts;
	if (!b->started) {
		b->started = 1;
		b->now = ts;
	}
	if (ts < b->now) { /* came after the sweep passed its start: cut, counted */
		b->late.n++;
		b->late.ns += (iv->end < b->now ? iv->end : b->now) - ts;
		ts = b->now;
	}
	if (iv->end <= ts)
		return;
	advance(b, ts);
	emit(b, ts, iv); /* idle when nothing runs */
	b->cnt[cat_index(iv->cat)]++;
	run_push(b, iv->end, iv->cat);
}

static void wait_pop(struct busy *b)
{
	struct busy_iv *h = b->wait;
	h[0] = h[--b->nwait];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < b->nwait && h[l].ts < h[m].ts)
			m = l;
		if (r < b->nwait && h[r].ts < h[m].ts)
			m = r;
		if (m == i)
			break;
		struct busy_iv t = h[i];
		h[i] = h[m], h[m] = t, i = m;
	}
}

static void wait_push(struct busy *b, const struct busy_iv *iv)
{
	if (b->nwait == b->capwait) {
		b->capwait = b->capwait ? b->capwait * 2 : 256;
		b->wait = xrealloc(b->wait, b->capwait * sizeof *b->wait);
	}
	struct busy_iv *h = b->wait;
	size_t i = b->nwait++;
	h[i] = *iv;
	while (i && h[(i - 1) / 2].ts > h[i].ts) {
		struct busy_iv t = h[i];
		h[i] = h[(i - 1) / 2], h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

#define RING(i) ((i) & (BUSY_ORDER - 1))

/* The oldest young interval: BUSY_ORDER have come after it, so has every
 * stream of its group; it waits among the old ones. */
static void age(struct busy *b)
{
	if (b->nm && b->mins[b->m0] == b->y0)
		b->m0 = RING(b->m0 + 1), b->nm--;
	wait_push(b, &b->young[b->y0]);
	b->y0 = RING(b->y0 + 1), b->ny--;
}

static void young_push(struct busy *b, const struct busy_iv *iv)
{
	if (!b->young) {
		b->young = xcalloc(BUSY_ORDER, sizeof *b->young);
		b->mins = xcalloc(BUSY_ORDER, sizeof *b->mins);
	}
	if (b->ny == BUSY_ORDER)
		age(b);
	size_t slot = RING(b->y0 + b->ny++);
	b->young[slot] = *iv;
	while (b->nm && b->young[b->mins[RING(b->m0 + b->nm - 1)]].ts >= iv->ts)
		b->nm--;
	b->mins[RING(b->m0 + b->nm++)] = (uint32_t)slot;
}

/* The old interval that starts first goes when no stream seen can bring
 * earlier work and no young one starts earlier (busy.h), or when too
 * many wait. */
static void release(struct busy *b, uint64_t wm)
{
	uint64_t young = b->nm ? b->young[b->mins[b->m0]].ts : UINT64_MAX;
	while (b->nwait &&
	       ((b->wait[0].ts < wm && b->wait[0].ts <= young) || b->nwait > BUSY_MAX_WAIT)) {
		struct busy_iv iv = b->wait[0];
		wait_pop(b);
		sweep(b, &iv);
	}
}

static uint64_t watermark(struct busy *b)
{
	uint64_t wm = UINT64_MAX;
	uint64_t old = b->maxts > HORIZON_NS ? b->maxts - HORIZON_NS : 0;
	for (size_t i = 0; i < b->nsrc; i++)
		if (b->srcs[i].last >= old && b->srcs[i].last < wm)
			wm = b->srcs[i].last;
	return wm;
}

void busy_add(struct busy *b, const void *src, uint64_t ts, uint64_t end, unsigned cat, int64_t tid)
{
	if (end < ts)
		end = ts;
	struct src *s = b->last_src < b->nsrc && b->srcs[b->last_src].p == src ? &b->srcs[b->last_src]
	                                                                          : NULL;
	if (!s) {
		for (size_t i = 0; i < b->nsrc; i++)
			if (b->srcs[i].p == src)
				s = &b->srcs[i];
		if (!s) {
			b->srcs = xrealloc(b->srcs, (b->nsrc + 1) * sizeof *b->srcs);
			s = &b->srcs[b->nsrc++];
			s->p = src, s->last = ts;
			if (ts < b->wm) /* a stream first seen holds the others back at once */
				b->wm = ts;
		}
		b->last_src = (size_t)(s - b->srcs);
	}
	if (ts > s->last)
		s->last = ts;
	if (ts > b->maxts)
		b->maxts = ts;
	young_push(b, &(struct busy_iv){ts, end, tid, cat});
	if (++b->adds % RECHECK == 0 || b->nwait > BUSY_MAX_WAIT)
		b->wm = watermark(b);
	release(b, b->wm);
}

struct busy_late busy_late(const struct busy *b)
{
	return b->late;
}

void busy_late_note(char *buf, size_t size, struct busy_late l)
{
	snprintf(buf, size,
	         "%llu GPU operations came later in the file than the union of GPU work holds work "
	         "back (docs/ANALYSIS.md, breakdown): up to %llu ns of their time is not counted",
	         (unsigned long long)l.n, (unsigned long long)l.ns);
}

void busy_finish(struct busy *b)
{
	while (b->ny)
		age(b);
	while (b->nwait) {
		struct busy_iv iv = b->wait[0];
		wait_pop(b);
		sweep(b, &iv);
	}
	advance(b, UINT64_MAX);
}
