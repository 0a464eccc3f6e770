// SPDX-License-Identifier: MIT
#include "nccl_str.h"
#include "defs.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define NSLOT 256 /* power of two; NCCL has a few dozen such strings */

struct slot {
	_Atomic(const char *) p; /* published last */
	uint64_t h;
};

static struct slot tab[NSLOT];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned hash_ptr(const char *p)
{
	uintptr_t v = (uintptr_t)p;
	return (unsigned)((v >> 3) ^ (v >> 11)) & (NSLOT - 1);
}

static uint64_t insert(const char *s, unsigned start)
{
	uint64_t h = 0;
	pthread_mutex_lock(&lock);
	for (unsigned n = 0, i = start; n < NSLOT; n++, i = (i + 1) & (NSLOT - 1)) {
		const char *p = atomic_load_explicit(&tab[i].p, memory_order_acquire);
		if (p == s) { /* another thread was first */
			h = tab[i].h;
			break;
		}
		if (p)
			continue;
		size_t len = strlen(s);
		h = ct_handle_new(s, len);
		if (!h)
			break;
		tab[i].h = h;
		atomic_store_explicit(&tab[i].p, s, memory_order_release);
		break;
	}
	pthread_mutex_unlock(&lock);
	return h;
}

uint64_t ct_nccl_str(const char *s)
{
	if (!s)
		return 0;
	unsigned start = hash_ptr(s);
	for (unsigned n = 0, i = start; n < NSLOT; n++, i = (i + 1) & (NSLOT - 1)) {
		const char *p = atomic_load_explicit(&tab[i].p, memory_order_acquire);
		if (!p)
			break;
		if (p == s)
			return tab[i].h;
	}
	return insert(s, start);
}

const char *ct_nccl_str_of(uint64_t h)
{
	for (unsigned i = 0; h && i < NSLOT; i++) {
		const char *p = atomic_load_explicit(&tab[i].p, memory_order_acquire);
		if (p && tab[i].h == h)
			return p;
	}
	return NULL;
}
