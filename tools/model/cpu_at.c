// SPDX-License-Identifier: MIT
/* Per thread, two rings (NVTX ranges, CUDA calls) in the order the model
 * hands them out: ranges close in end order on their thread, calls are
 * recorded at their end, so each ring is ordered by end (nested driver
 * calls end before their runtime call: near enough for the search below,
 * which looks at a window of entries after the first one ending after t). */
#include "model/cpu_at.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <string.h>

#define SCAN 64

struct ring {
	struct cpu_range *v; /* CPU_AT_KEEP, allocated at first use */
	size_t head, n;      /* oldest at head */
};

struct cthread {
	struct ring r[2]; /* [is_call] */
};

struct cpu_at {
	struct hmap threads; /* tid + 1 -> struct cthread */
	struct cthread **all;
	size_t nall;
};

struct cpu_at *cpu_at_new(void)
{
	return xcalloc(1, sizeof(struct cpu_at));
}

void cpu_at_free(struct cpu_at *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nall; i++) {
		free(c->all[i]->r[0].v), free(c->all[i]->r[1].v);
		free(c->all[i]);
	}
	free(c->all);
	hmap_free(&c->threads);
	free(c);
}

void cpu_at_event(struct cpu_at *c, const struct m_event *ev)
{
	if (ev->type != ME_SLICE || !ev->track || ev->track->kind != MT_THREAD)
		return;
	const struct sref *name;
	int call;
	if (ev->cat == MC_NVTX)
		name = &ev->span->name, call = 0;
	else if (ev->cat == MC_RUNTIME || ev->cat == MC_DRIVER)
		name = &ev->api.name, call = 1;
	else
		return;
	uint64_t key = (uint64_t)ev->track->tid + 1;
	struct cthread *t = hmap_get(&c->threads, key);
	if (!t) {
		t = xcalloc(1, sizeof *t);
		hmap_put(&c->threads, key, t);
		c->all = xrealloc(c->all, (c->nall + 1) * sizeof *c->all);
		c->all[c->nall++] = t;
	}
	struct ring *r = &t->r[call];
	if (!r->v)
		r->v = xcalloc(CPU_AT_KEEP, sizeof *r->v);
	struct cpu_range *e;
	if (r->n < CPU_AT_KEEP) {
		e = &r->v[(r->head + r->n++) % CPU_AT_KEEP];
	} else {
		e = &r->v[r->head];
		r->head = (r->head + 1) % CPU_AT_KEEP;
	}
	e->ts = ev->ts, e->end = ev->end, e->is_call = call;
	size_t n = name->len < CPU_AT_NAME - 1 ? name->len : CPU_AT_NAME - 1;
	memcpy(e->name, name->s, n);
	e->name[n] = 0;
}

/* The entry of r holding t that started last, or NULL. */
static const struct cpu_range *in_ring(const struct ring *r, uint64_t t)
{
	size_t lo = 0, hi = r->n; /* first entry (by order) ending after t */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->v[(r->head + mid) % CPU_AT_KEEP].end <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct cpu_range *best = NULL;
	size_t from = lo > SCAN / 4 ? lo - SCAN / 4 : 0; /* nested calls a little out of order */
	for (size_t i = from; i < r->n && i < lo + SCAN; i++) {
		const struct cpu_range *e = &r->v[(r->head + i) % CPU_AT_KEEP];
		if (e->ts <= t && t < e->end && (!best || e->ts > best->ts))
			best = e;
	}
	return best;
}

int cpu_at_query(const struct cpu_at *c, int64_t tid, uint64_t t, struct cpu_range *out)
{
	const struct cthread *th = hmap_get(&c->threads, (uint64_t)tid + 1);
	if (!th)
		return 0;
	const struct cpu_range *a = in_ring(&th->r[0], t), *b = in_ring(&th->r[1], t);
	/* a call inside a range is the more precise answer */
	const struct cpu_range *best = b && (!a || b->ts >= a->ts) ? b : a;
	if (!best)
		return 0;
	*out = *best;
	return 1;
}
