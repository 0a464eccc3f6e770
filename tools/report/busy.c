#include "report/busy.h"
#include "util/xalloc.h"

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
	struct busy_iv *wait; /* min-heap by ts */
	size_t nwait, capwait;
	struct run *run; /* min-heap by end */
	size_t nrun, caprun;
	unsigned cnt[3];
	uint64_t now;
	int started;
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
	if (ts < b->now) /* came after the sweep passed its start: cut */
		ts = b->now;
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

static void release(struct busy *b, uint64_t wm)
{
	while (b->nwait && (b->wait[0].ts < wm || b->nwait > BUSY_MAX_WAIT)) {
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
		}
		b->last_src = (size_t)(s - b->srcs);
	}
	if (ts > s->last)
		s->last = ts;
	if (ts > b->maxts)
		b->maxts = ts;
	if (b->nwait == b->capwait) {
		b->capwait = b->capwait ? b->capwait * 2 : 256;
		b->wait = xrealloc(b->wait, b->capwait * sizeof *b->wait);
	}
	struct busy_iv *h = b->wait;
	size_t i = b->nwait++;
	h[i] = (struct busy_iv){ts, end, tid, cat};
	while (i && h[(i - 1) / 2].ts > h[i].ts) {
		struct busy_iv t = h[i];
		h[i] = h[(i - 1) / 2], h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
	if (++b->adds % RECHECK == 0 || b->nwait > BUSY_MAX_WAIT)
		b->wm = watermark(b);
	release(b, b->wm);
}

void busy_finish(struct busy *b)
{
	release(b, UINT64_MAX);
	while (b->nwait) {
		struct busy_iv iv = b->wait[0];
		wait_pop(b);
		sweep(b, &iv);
	}
	advance(b, UINT64_MAX);
}
