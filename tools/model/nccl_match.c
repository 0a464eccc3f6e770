#include "model/nccl_match.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <string.h>

struct slot {
	struct slot *chain;      /* same key hash */
	struct slot *prev, *next; /* order of arrival, for the cap */
	uint64_t key;
	struct nm_coll c;
	char func[32];
	int64_t v[]; /* t[nranks], then who[nranks] */
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
		s = strdup(name ? name : "");
		if (!s)
			xoom();
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

void nm_add(struct nm *m, uint64_t comm, const char *name, int nranks, int crank, int64_t who,
            const char *func, uint64_t seq, int64_t step, int64_t t)
{
	if (nranks < 2 || crank < 0 || crank >= nranks)
		return;
	uint64_t key = key_of(comm, func, seq);
	struct slot *s = hmap_get(&m->index, key);
	while (s && !(s->c.comm == comm && s->c.seq == seq && !strcmp(s->func, func)))
		s = s->chain;
	if (!s) {
		s = xcalloc(1, sizeof *s + 2 * (size_t)nranks * sizeof(int64_t));
		s->key = key;
		s->chain = hmap_get(&m->index, key);
		hmap_put(&m->index, key, s);
		snprintf(s->func, sizeof s->func, "%s", func);
		s->c = (struct nm_coll){comm, comm_name(m, comm, name), s->func, seq, step, nranks,
		                        0, s->v, s->v + nranks};
		for (int i = 0; i < nranks; i++)
			s->v[i] = NM_NONE;
		s->prev = m->tail;
		if (m->tail)
			m->tail->next = s;
		else
			m->head = s;
		m->tail = s;
		if (++m->n > m->peak)
			m->peak = m->n;
	}
	if (s->v[crank] != NM_NONE)
		return;
	s->v[crank] = t;
	s->v[nranks + crank] = who;
	if (++s->c.seen == s->c.nranks)
		retire(m, s);
	else if (m->n > m->cap)
		retire(m, m->head);
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
