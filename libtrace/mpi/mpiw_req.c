// SPDX-License-Identifier: MIT
/* The wrappers' table of requests (mpiw.h): what each outstanding request
 * was made for, so that the call completing it records an mpi_done with
 * the id the call that made it gave, its bytes, and its source. An
 * open-addressed array of NREQ slots, mapped at the first request (its
 * pages as used), whose keys are never removed: slots of a handle are
 * reused once inactive (implementations reuse a few request objects over
 * and over, so the keys stay few). No lock: a slot is claimed with a
 * compare and swap. */
#include "mpiw.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NREQ   (1u << 16)
#define PROBES 64

static struct mreq *_Atomic reqs; /* NREQ, mapped at the first request */
static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread uint64_t id_next __attribute__((tls_model("initial-exec")));
static __thread uint64_t id_end __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t id_block = 1;

static inline size_t slot_of(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)(key & (NREQ - 1));
}

/* ---- requests ----
 * Keys may repeat: implementations hand out one shared handle for sends
 * that completed at once (MPICH's lightweight requests, Open MPI's UCX
 * layer), so several requests of one handle may be outstanding, on one
 * thread or several. Each gets a slot of its own (an inactive slot of its
 * handle is reused); a call completing one takes the oldest of its
 * handle, the calling thread's first. */

#define BUSY UINT64_MAX /* live: the slot is being made */

static __thread int my_tid __attribute__((tls_model("initial-exec")));

static int self_tid(void)
{
	if (__builtin_expect(!my_tid, 0))
		my_tid = (int)syscall(SYS_gettid);
	return my_tid;
}

static struct mreq *req_table(int make)
{
	struct mreq *tab = atomic_load_explicit(&reqs, memory_order_acquire);
	if (tab || !make)
		return tab;
	pthread_mutex_lock(&map_lock);
	if (!(tab = atomic_load(&reqs))) {
		void *m = mmap(NULL, NREQ * sizeof *tab, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED)
			atomic_store(&reqs, tab = m);
	}
	pthread_mutex_unlock(&map_lock);
	return tab;
}

/* A slot for a new request of handle key, claimed (live = BUSY). */
static struct mreq *req_claim(uint64_t key)
{
	struct mreq *tab = req_table(1);
	if (!tab)
		return NULL;
	size_t i = slot_of(key);
	for (int n = 0; n < PROBES; n++, i = (i + 1) & (NREQ - 1)) {
		struct mreq *q = &tab[i];
		uint64_t k = atomic_load_explicit(&q->key, memory_order_acquire);
		if (!k && !atomic_compare_exchange_strong(&q->key, &k, key) && k != key)
			continue;
		if (k && k != key)
			continue;
		uint64_t z = 0;
		if (!atomic_compare_exchange_strong(&q->live, &z, BUSY))
			continue;
		if (q->persistent) { /* an inactive persistent request: its handle's own */
			atomic_store(&q->live, 0);
			continue;
		}
		return q;
	}
	static int full;
	mpiw_warn_once(&full, "too many MPI requests at once: some are not linked to the call "
	                      "that completed them");
	return NULL;
}

/* The slot of an outstanding request of handle key: the oldest, the
 * calling thread's first, none of prev's; persistent: the handle's
 * persistent request, active or not. */
static struct mreq *req_find(uint64_t key, int persistent, const struct mreq_seen *prev,
                             size_t nprev, uint64_t *id)
{
	struct mreq *tab = req_table(0), *best = NULL;
	uint64_t best_id = 0;
	int best_mine = 0, me = self_tid();
	if (!tab || !key || key == mpiw.request_null)
		return NULL;
	size_t i = slot_of(key);
	for (int n = 0; n < PROBES; n++, i = (i + 1) & (NREQ - 1)) {
		struct mreq *q = &tab[i];
		uint64_t k = atomic_load_explicit(&q->key, memory_order_acquire);
		if (!k)
			break;
		uint64_t live = atomic_load_explicit(&q->live, memory_order_acquire);
		if (k != key || live == BUSY)
			continue;
		if (persistent) {
			if (q->persistent) {
				*id = live;
				return q;
			}
			continue;
		}
		if (!live)
			continue;
		size_t j = nprev > 64 ? nprev - 64 : 0; /* a handle shared is seen in a row */
		while (j < nprev && prev[j].q != q)
			j++;
		if (j < nprev)
			continue;
		int mine = q->tid == me;
		if (!best || mine > best_mine || (mine == best_mine && live < best_id))
			best = q, best_id = live, best_mine = mine;
	}
	*id = best_id;
	return best;
}

static uint64_t new_ids(unsigned n)
{
	if (__builtin_expect(id_end - id_next < n, 0)) {
		uint64_t b = n > 4096 ? n : 4096;
		id_next = atomic_fetch_add_explicit(&id_block, b, memory_order_relaxed);
		id_end = id_next + b;
	}
	uint64_t id = id_next;
	id_next += n;
	return id;
}

uint64_t mpiw_req_ids(unsigned n)
{
	return new_ids(n ? n : 1);
}

uint64_t mpiw_req_made(mh_t h, int kind, const struct mcomm *c, const struct cuptrace_mpi_call *r,
                       int persistent)
{
	h = mpiw_h(h);
	struct mreq *q = h && h != mpiw.request_null ? req_claim(h) : NULL;
	if (!q)
		return 0;
	uint64_t id = persistent ? 0 : new_ids(1);
	q->comm = r->comm;
	q->c = c;
	/* a collective's bytes are its call's; a wait adds a send's or receive's */
	q->bytes = kind == MR_RECV ? r->recv_bytes : kind == MR_SEND ? r->bytes : 0;
	q->peer = (int32_t)r->peer;
	q->tag = (int32_t)r->tag;
	q->kind = (uint8_t)kind;
	q->persistent = (uint8_t)persistent;
	q->tid = self_tid();
	atomic_store_explicit(&q->live, id, memory_order_release);
	return id;
}

int mpiw_req_start(mh_t h, uint64_t id, struct cuptrace_mpi_call *r)
{
	uint64_t was;
	struct mreq *q = req_find(mpiw_h(h), 1, NULL, 0, &was);
	if (!q)
		return 0;
	if (!r->comm) {
		r->comm = q->comm;
		r->peer = q->peer;
		r->world_peer = q->peer < 0 ? q->peer
		                : q->c && q->c->id == q->comm
		                    ? mpiw_world_rank(q->c, q->peer, q->c->remote != 0)
		                    : CT_MPI_NO_PEER;
		r->tag = q->tag;
	}
	if (q->kind == MR_RECV)
		r->recv_bytes += q->bytes;
	else
		r->bytes += q->bytes;
	q->tid = self_tid();
	atomic_store_explicit(&q->live, id, memory_order_release);
	return 1;
}

void mpiw_req_see(mh_t h, struct mreq_seen *s, const struct mreq_seen *prev, size_t nprev)
{
	struct mreq *q = req_find(mpiw_h(h), 0, prev, nprev, &s->id);
	s->q = NULL;
	if (!q)
		return;
	s->comm = q->comm, s->bytes = q->bytes, s->c = q->c;
	s->peer = q->peer, s->tag = q->tag, s->kind = q->kind;
	if (atomic_load_explicit(&q->live, memory_order_acquire) == s->id)
		s->q = q; /* not made again while it was read */
}

void mpiw_req_done(const struct mreq_seen *s, const void *st, struct cuptrace_mpi_call *r)
{
	uint64_t id = s->id;
	if (!s->q || !atomic_compare_exchange_strong(&s->q->live, &id, 0))
		return;
	int64_t peer = s->peer, tag = s->kind == MR_COLL ? CT_MPI_NO_TAG : s->tag;
	uint64_t b = s->bytes, got;
	int src, tg;
	if (st && s->kind == MR_RECV) {
		mpiw.status_read(st, &src, &tg, &got);
		peer = mpiw_rank(src), tag = tg, b = got;
	}
	if (s->kind == MR_RECV)
		r->recv_bytes += b;
	else
		r->bytes += b;
	if (r->count++) { /* several: what they share */
		if (r->comm != s->comm)
			r->comm = 0;
		r->peer = r->world_peer = CT_MPI_NO_PEER;
		r->tag = CT_MPI_NO_TAG;
	} else {
		r->comm = s->comm;
		r->peer = peer;
		r->world_peer = peer < 0 ? peer
		                : s->c && s->c->id == s->comm
		                    ? mpiw_world_rank(s->c, (int)peer, s->c->remote != 0)
		                    : CT_MPI_NO_PEER;
		r->tag = tag;
	}
	if (mpiw_capturing())
		mpiw_api->done(r->end, s->id, peer, tag, b);
}

/* MPI_Request_free: a persistent request (or an active one, which then
 * completes unseen) is no longer the program's. */
void mpiw_req_freed(mh_t h)
{
	uint64_t id;
	struct mreq *q = req_find(mpiw_h(h), 1, NULL, 0, &id);
	if (!q)
		q = req_find(mpiw_h(h), 0, NULL, 0, &id);
	if (!q)
		return;
	q->persistent = 0;
	atomic_compare_exchange_strong(&q->live, &id, 0);
}
