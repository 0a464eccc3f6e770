#include "defs.h"
#include "common/rec.h"
#include "cuptrace/format.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct def {
	uint64_t h; /* 0: a record definition */
	uint32_t len;
	int tid;
	char *s; /* the text, or a copy of the record */
};

/* All definitions ever made (the child of a fork re-emits them) and the
 * index of the first one the writer has not fetched yet. */
static struct {
	pthread_mutex_t lock;
	struct def *v;
	size_t n, cap, drained;
	_Atomic size_t published; /* n, for the lock-free pending check */
	uint64_t next_handle;
	struct domain {
		uint64_t h;
		char *name;
	} *dom;
	size_t ndom, domcap;
} D = {.lock = PTHREAD_MUTEX_INITIALIZER, .next_handle = 1};

static uint64_t add_locked(const char *s, size_t len)
{
	if (len > CT_MAX_STR)
		len = CT_MAX_STR;
	if (D.n == D.cap) {
		size_t ncap = D.cap ? D.cap * 2 : 64;
		struct def *v = realloc(D.v, ncap * sizeof *v);
		if (!v)
			return 0;
		D.v = v, D.cap = ncap;
	}
	char *c = malloc(len + 1);
	if (!c)
		return 0;
	memcpy(c, s, len);
	c[len] = 0;
	uint64_t h = D.next_handle++;
	D.v[D.n++] = (struct def){h, (uint32_t)len, 0, c};
	atomic_store_explicit(&D.published, D.n, memory_order_release);
	return h;
}

void ct_defs_add_record(int tid, const struct ct_rec *r)
{
	pthread_mutex_lock(&D.lock);
	char *c = NULL;
	if (D.n == D.cap) {
		size_t ncap = D.cap ? D.cap * 2 : 64;
		struct def *v = realloc(D.v, ncap * sizeof *v);
		if (!v)
			goto out;
		D.v = v, D.cap = ncap;
	}
	if (!(c = malloc(r->size)))
		goto out;
	memcpy(c, r, r->size);
	D.v[D.n++] = (struct def){0, r->size, tid, c};
	atomic_store_explicit(&D.published, D.n, memory_order_release);
out:
	pthread_mutex_unlock(&D.lock);
}

void ct_defs_replay(void)
{
	pthread_mutex_lock(&D.lock);
	D.drained = 0;
	pthread_mutex_unlock(&D.lock);
}

int ct_defs_pending(void)
{
	return atomic_load_explicit(&D.published, memory_order_acquire) != D.drained;
}

uint64_t ct_handle_new(const char *s, size_t len)
{
	pthread_mutex_lock(&D.lock);
	uint64_t h = add_locked(s, len);
	pthread_mutex_unlock(&D.lock);
	return h;
}

uint64_t ct_domain_handle(const char *name, size_t len)
{
	uint64_t h = 0;
	pthread_mutex_lock(&D.lock);
	for (size_t i = 0; i < D.ndom; i++)
		if (strlen(D.dom[i].name) == len && !memcmp(D.dom[i].name, name, len)) {
			h = D.dom[i].h;
			goto out;
		}
	if (D.ndom == D.domcap) {
		size_t ncap = D.domcap ? D.domcap * 2 : 16;
		struct domain *d = realloc(D.dom, ncap * sizeof *d);
		if (!d)
			goto out;
		D.dom = d, D.domcap = ncap;
	}
	h = add_locked(name, len);
	if (h)
		D.dom[D.ndom++] = (struct domain){h, D.v[D.n - 1].s};
out:
	pthread_mutex_unlock(&D.lock);
	return h;
}

void ct_defs_drain(const struct ct_defs_sink *k)
{
	pthread_mutex_lock(&D.lock);
	for (; D.drained < D.n; D.drained++) {
		const struct def *d = &D.v[D.drained];
		if (d->h)
			k->handle(k->ctx, d->h, d->s, d->len);
		else
			k->record(k->ctx, d->tid, (const struct ct_rec *)d->s);
	}
	pthread_mutex_unlock(&D.lock);
}

void ct_defs_fork_prepare(void)
{
	pthread_mutex_lock(&D.lock);
}

void ct_defs_fork_parent(void)
{
	pthread_mutex_unlock(&D.lock);
}

void ct_defs_fork_child(void)
{
	D.drained = 0;
	pthread_mutex_unlock(&D.lock);
}
