// SPDX-License-Identifier: MIT
#include "defs.h"
#include "rec.h"
#include "cuptrace/format.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
} defs_st = {.lock = PTHREAD_MUTEX_INITIALIZER, .next_handle = 1};

static uint64_t add_locked(const char *s, size_t len)
{
	if (len > CT_MAX_STR)
		len = CT_MAX_STR;
	if (defs_st.n == defs_st.cap) {
		size_t ncap = defs_st.cap ? defs_st.cap * 2 : 64;
		struct def *v = realloc(defs_st.v, ncap * sizeof *v);
		if (!v)
			return 0;
		defs_st.v = v, defs_st.cap = ncap;
	}
	char *c = malloc(len + 1);
	if (!c)
		return 0;
	memcpy(c, s, len);
	c[len] = 0;
	uint64_t h = defs_st.next_handle++;
	defs_st.v[defs_st.n++] = (struct def){h, (uint32_t)len, 0, c};
	atomic_store_explicit(&defs_st.published, defs_st.n, memory_order_release);
	return h;
}

void ct_defs_add_record(int tid, const struct ct_rec *r)
{
	pthread_mutex_lock(&defs_st.lock);
	char *c = NULL;
	if (defs_st.n == defs_st.cap) {
		size_t ncap = defs_st.cap ? defs_st.cap * 2 : 64;
		struct def *v = realloc(defs_st.v, ncap * sizeof *v);
		if (!v)
			goto out;
		defs_st.v = v, defs_st.cap = ncap;
	}
	if (!(c = malloc(r->size)))
		goto out;
	memcpy(c, r, r->size);
	defs_st.v[defs_st.n++] = (struct def){0, r->size, tid, c};
	atomic_store_explicit(&defs_st.published, defs_st.n, memory_order_release);
out:
	pthread_mutex_unlock(&defs_st.lock);
}

void ct_defs_replay(void)
{
	pthread_mutex_lock(&defs_st.lock);
	defs_st.drained = 0;
	pthread_mutex_unlock(&defs_st.lock);
}

int ct_defs_pending(void)
{
	return atomic_load_explicit(&defs_st.published, memory_order_acquire) != defs_st.drained;
}

uint64_t ct_handle_new(const char *s, size_t len)
{
	pthread_mutex_lock(&defs_st.lock);
	uint64_t h = add_locked(s, len);
	pthread_mutex_unlock(&defs_st.lock);
	return h;
}

uint64_t ct_domain_handle(const char *name, size_t len)
{
	uint64_t h = 0;
	pthread_mutex_lock(&defs_st.lock);
	for (size_t i = 0; i < defs_st.ndom; i++)
		if (strlen(defs_st.dom[i].name) == len && !memcmp(defs_st.dom[i].name, name, len)) {
			h = defs_st.dom[i].h;
			goto out;
		}
	if (defs_st.ndom == defs_st.domcap) {
		size_t ncap = defs_st.domcap ? defs_st.domcap * 2 : 16;
		struct domain *d = realloc(defs_st.dom, ncap * sizeof *d);
		if (!d)
			goto out;
		defs_st.dom = d, defs_st.domcap = ncap;
	}
	h = add_locked(name, len);
	if (h)
		defs_st.dom[defs_st.ndom++] = (struct domain){h, defs_st.v[defs_st.n - 1].s};
out:
	pthread_mutex_unlock(&defs_st.lock);
	return h;
}

static _Atomic int impatient;

void ct_defs_impatient(void)
{
	atomic_store(&impatient, 1);
}

/* The writer's lock: tried, so that it sees `impatient` while it waits.
 * The thread holding the lock may be the one that waits for the writer
 * (a signal handler that calls exit() interrupted it inside an NVTX
 * call): once the process leaves, the writer gives up after 200 ms and
 * the definitions not yet fetched are missing from the file (their
 * events read "?") rather than the process hanging. */
static int writer_lock(void)
{
	for (int ms = 0; pthread_mutex_trylock(&defs_st.lock); ms++) {
		if (atomic_load(&impatient) && ms >= 200)
			return -1;
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	return 0;
}

void ct_defs_drain(const struct ct_defs_sink *k)
{
	if (writer_lock())
		return;
	for (; defs_st.drained < defs_st.n; defs_st.drained++) {
		const struct def *d = &defs_st.v[defs_st.drained];
		if (d->h)
			k->handle(k->ctx, d->h, d->s, d->len);
		else
			k->record(k->ctx, d->tid, (const struct ct_rec *)d->s);
	}
	pthread_mutex_unlock(&defs_st.lock);
}

size_t ct_defs_drained(void)
{
	return defs_st.drained; /* the writer's own count: it alone changes it */
}

void ct_defs_each(size_t upto, const struct ct_defs_sink *k)
{
	if (writer_lock())
		return;
	for (size_t i = 0; i < upto && i < defs_st.drained; i++) {
		const struct def *d = &defs_st.v[i];
		if (d->h)
			k->handle(k->ctx, d->h, d->s, d->len);
		else
			k->record(k->ctx, d->tid, (const struct ct_rec *)d->s);
	}
	pthread_mutex_unlock(&defs_st.lock);
}

void ct_defs_fork_prepare(void)
{
	pthread_mutex_lock(&defs_st.lock);
}

void ct_defs_fork_parent(void)
{
	pthread_mutex_unlock(&defs_st.lock);
}

void ct_defs_fork_child(void)
{
	defs_st.drained = 0;
	atomic_store(&impatient, 0);
	pthread_mutex_unlock(&defs_st.lock);
}
