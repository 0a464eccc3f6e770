#include "defs.h"
#include "cuptrace/format.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct def {
	uint64_t h;
	uint32_t len;
	char *s;
};

/* All definitions ever made (the child of a fork re-emits them) and the
 * index of the first one the writer has not fetched yet. */
static struct {
	pthread_mutex_t lock;
	struct def *v;
	size_t n, cap, drained;
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
	D.v[D.n++] = (struct def){h, (uint32_t)len, c};
	return h;
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

void ct_defs_drain(void (*fn)(void *, uint64_t, const char *, uint32_t), void *ctx)
{
	pthread_mutex_lock(&D.lock);
	for (; D.drained < D.n; D.drained++)
		fn(ctx, D.v[D.drained].h, D.v[D.drained].s, D.v[D.drained].len);
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
