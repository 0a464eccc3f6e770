// SPDX-License-Identifier: MIT
#include "job/nccl_match.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <string.h>

struct slot {
	struct slot *chain;      /* same key hash */
	struct slot *prev, *next; /* order of arrival, for the cap */
	uint64_t key;
	struct nm_coll c;
	int64_t order; /* of the report that gave the step */
	char func[32];
	int64_t v[]; /* t[nranks], who[nranks], then order[nranks] */
};

struct nm {
	struct hmap index; /* key -> first slot of that key */
	struct slot *head, *tail;
	size_t n, cap, peak, incomplete;
	nm_fn fn;
	void *ctx;
	/* Names of communicators by hash (strings the slots point to). */
	struct hmap names;
};

struct nm *nm_new(size_t cap, nm_fn fn, void *ctx)
{
	struct nm *m = xcalloc(1, sizeof *m);
	m->cap = cap ? cap : 1;
	m->fn = fn;
	m->ctx = ctx;
	return m;
}

static uint64_t key_of(uint64_t comm, const char *func, uint64_t seq)
{
	uint64_t h = comm * 0x9e3779b97f4a7c15ull ^ seq;
	for (const char *s = func; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h + !h;
}

static const char *comm_name(struct nm *m, uint64_t comm, const char *name)
{
	uint64_t k = comm + !comm;
	char *s = hmap_get(&m->names, k);
	if (!s) {
		s = xstrdup(name ? name : "");
		hmap_put(&m->names, k, s);
	}
	return s;
}

/* Hands slot s out and frees it. */
static void retire(struct nm *m, struct slot *s)
{
	struct slot *first = hmap_get(&m->index, s->key);
	if (first == s) {
		if (s->chain)
			hmap_put(&m->index, s->key, s->chain);
		else
			hmap_del(&m->index, s->key);
	} else {
		while (first->chain != s)
			first = first->chain;
		first->chain = s->chain;
	}
	if (s->prev)
		s->prev->next = s->next;
	else
		m->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	else
		m->tail = s->prev;
	m->n--;
	if (s->c.seen < s->c.nranks)
		m->incomplete++;
	m->fn(m->ctx, &s->c);
	free(s);
}

void nm_put(struct nm *m, const struct nm_arrival *a)
{
	int nranks = a->nranks, crank = a->crank;
	if (nranks < 2 || crank < 0 || crank >= nranks)
		return;
	uint64_t key = key_of(a->comm, a->func, a->seq);
	struct slot *s = hmap_get(&m->index, key);
	while (s && !(s->c.comm == a->comm && s->c.seq == a->seq && !strcmp(s->func, a->func)))
		s = s->chain;
	if (!s) {
		s = xrealloc(NULL, sizeof *s + 3 * (size_t)nranks * sizeof(int64_t));
		s->key = key;
		s->chain = hmap_get(&m->index, key);
		hmap_put(&m->index, key, s);
		snprintf(s->func, sizeof s->func, "%s", a->func);
		s->c = (struct nm_coll){a->comm, comm_name(m, a->comm, a->comm_name), s->func, a->seq,
		                        a->step, nranks, 0, s->v, s->v + nranks};
		s->order = a->order;
		for (int i = 0; i < nranks; i++)
			s->v[i] = NM_NONE;
		s->prev = m->tail;
		s->next = NULL;
		if (m->tail)
			m->tail->next = s;
		else
			m->head = s;
		m->tail = s;
		if (++m->n > m->peak)
			m->peak = m->n;
	} else if (a->order < s->order) {
		s->order = a->order;
		s->c.step = a->step;
	}
	if (s->v[crank] != NM_NONE) {
		/* A rank reported twice (two files claim it): the lower order's. */
		if (a->order < s->v[2 * nranks + crank]) {
			s->v[crank] = a->t;
			s->v[nranks + crank] = a->who;
			s->v[2 * nranks + crank] = a->order;
		}
		return;
	}
	s->v[crank] = a->t;
	s->v[nranks + crank] = a->who;
	s->v[2 * nranks + crank] = a->order;
	if (++s->c.seen == s->c.nranks)
		retire(m, s);
	else if (m->n > m->cap)
		retire(m, m->head);
}

void nm_add(struct nm *m, uint64_t comm, const char *name, int nranks, int crank, int64_t who,
            const char *func, uint64_t seq, int64_t step, int64_t t)
{
	struct nm_arrival a = {comm, seq, name, func, nranks, crank, who, step, t, 0};
	nm_put(m, &a);
}

size_t nm_finish(struct nm *m)
{
	while (m->head)
		retire(m, m->head);
	size_t inc = m->incomplete;
	hmap_free(&m->index);
	for (size_t i = 0; i < m->names.cap; i++)
		if (m->names.keys[i])
			free(m->names.vals[i]);
	hmap_free(&m->names);
	free(m);
	return inc;
}

size_t nm_peak(const struct nm *m)
{
	return m->peak;
}
