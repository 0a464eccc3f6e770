// SPDX-License-Identifier: MIT
/* The wrappers' tables (mpiw.h): communicators, datatypes and requests by
 * handle. Each is an open-addressed array whose keys are never removed: a
 * handle freed (MPI_Comm_free, MPI_Type_free) is marked so and comes back
 * as a new entry in the same slot; a request's slot is reused by the next
 * request of the same handle (implementations reuse a few request objects
 * over and over, so the keys stay few). Readers take no lock; making an
 * entry takes one (it calls MPI, once per communicator or datatype).
 *
 * A communicator's id is the same on all its members: a hash of its
 * members' ranks in MPI_COMM_WORLD, in its own rank order, and of how many
 * communicators of those very members this process registered before it
 * (a dup of MPI_COMM_WORLD has the same members as the world). Members
 * make their communicators in the same order, since making one is
 * collective: so the count agrees too. Communicators made by calls the
 * wrappers do not see are registered at their first use. */
#include "mpiw.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NCOMM  4096
#define NTYPE  1024
#define NREQ   (1u << 16)
#define NOCC   4096
#define PROBES 64

static struct mcomm comms[NCOMM];
static struct mtype types[NTYPE];
static struct mreq *_Atomic reqs; /* NREQ, mapped at the first request */
static struct {
	uint64_t hash, n;
} occ[NOCC];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread uint64_t id_next __attribute__((tls_model("initial-exec")));
static __thread uint64_t id_end __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t id_block = 1;

static inline uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ h >> 33;
}

static inline size_t slot_of(uint64_t key, size_t n)
{
	return (size_t)(mix(key) & (n - 1));
}

/* ---- communicators ---- */

static struct mcomm *comm_find(uint64_t key, int *free_slot)
{
	size_t i = slot_of(key, NCOMM);
	for (int n = 0; n < PROBES; n++, i = (i + 1) & (NCOMM - 1)) {
		uint64_t k = atomic_load_explicit(&comms[i].key, memory_order_acquire);
		if (k == key)
			return &comms[i];
		if (!k) {
			*free_slot = (int)i;
			return NULL;
		}
	}
	*free_slot = -1;
	return NULL;
}

static uint64_t hash_ranks(const int32_t *w, int n, uint64_t h)
{
	for (int i = 0; i < n; i++)
		h = mix(h ^ (uint64_t)(uint32_t)(w ? w[i] : i));
	return mix(h ^ (uint64_t)n);
}

static uint64_t occurrence(uint64_t hash)
{
	size_t i = slot_of(hash, NOCC);
	for (int n = 0; n < PROBES; n++, i = (i + 1) & (NOCC - 1)) {
		if (occ[i].hash == hash)
			return occ[i].n++;
		if (!occ[i].hash) {
			occ[i].hash = hash;
			occ[i].n = 1;
			return 0;
		}
	}
	return 0;
}

#define CALL(name, ...) ((__typeof__(&name))mpiw_next(&slot_##name, #name))(__VA_ARGS__)
int MPI_Comm_size(mh_t, int *);
int MPI_Comm_rank(mh_t, int *);
int MPI_Comm_test_inter(mh_t, int *);
int MPI_Comm_remote_size(mh_t, int *);
int MPI_Comm_group(mh_t, mh_t *);
int MPI_Comm_remote_group(mh_t, mh_t *);
int MPI_Group_translate_ranks(mh_t, int, const int *, mh_t, int *);
int MPI_Group_free(mh_t *);
int MPI_Comm_get_name(mh_t, char *, int *);
int MPI_Type_size_x(mh_t, mpi_count *);
int MPI_Type_get_name(mh_t, char *, int *);
static void *_Atomic slot_MPI_Comm_size, *_Atomic slot_MPI_Comm_rank,
    *_Atomic slot_MPI_Comm_test_inter, *_Atomic slot_MPI_Comm_remote_size,
    *_Atomic slot_MPI_Comm_group, *_Atomic slot_MPI_Comm_remote_group,
    *_Atomic slot_MPI_Group_translate_ranks, *_Atomic slot_MPI_Group_free,
    *_Atomic slot_MPI_Comm_get_name, *_Atomic slot_MPI_Type_size_x, *_Atomic slot_MPI_Type_get_name;

/* The world ranks of group g's n members (NULL: not known). The handle
 * out-parameters are written in the implementation's width. */
static int32_t *world_of(mh_t g, int n)
{
	mh_t wg = 0;
	int *in = malloc((size_t)n * sizeof *in), *out = malloc((size_t)n * sizeof *out);
	if (!in || !out || CALL(MPI_Comm_group, mpiw.world, &wg)) {
		free(in), free(out);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		in[i] = i;
	int rc = CALL(MPI_Group_translate_ranks, g, n, in, mpiw_h(wg), out);
	CALL(MPI_Group_free, &wg);
	free(in);
	if (rc) {
		free(out);
		return NULL;
	}
	return (int32_t *)out;
}

/* Members of c's group (remote: its remote group) into *w, their hash
 * returned; 0 when MPI said no. */
static uint64_t members(mh_t h, int n, int remote, int32_t **w)
{
	mh_t g = 0;
	*w = NULL;
	if (h == mpiw.world)
		return hash_ranks(NULL, n, 0x5eed);
	if (remote ? CALL(MPI_Comm_remote_group, h, &g) : CALL(MPI_Comm_group, h, &g))
		return 0;
	*w = world_of(mpiw_h(g), n);
	CALL(MPI_Group_free, &g);
	return *w ? hash_ranks(*w, n, 0x5eed) : 0;
}

static void record_comm(const struct mcomm *c, mh_t h)
{
	char name[256] = "";
	int len = 0;
	if (CALL(MPI_Comm_get_name, h, name, &len) || len < 0 || len >= (int)sizeof name)
		len = 0;
	struct cuptrace_mpi_comm m = {
	    c->id,   h,    (uint64_t)c->size, (uint64_t)c->remote, c->parent,
	    c->rank, name, (uint32_t)len};
	mpiw_api->comm(&m);
}

int MPI_Initialized(int *);
int MPI_Finalized(int *);
static void *_Atomic slot_MPI_Initialized, *_Atomic slot_MPI_Finalized;
static struct mcomm *make(mh_t h, uint64_t parent);

void mpiw_set_live(int v)
{
	atomic_store(&mpiw_live, v);
	if (v == 1) { /* the world first: its id counts first among its members' */
		make(mpiw.world, 0);
		make(mpiw.self, 0);
	}
}

/* Whether MPI may be called: between MPI_Init and MPI_Finalize, as the
 * wrappers saw them or, where the program initialised MPI by a call they
 * do not see (Fortran's), as MPI says (both questions may be asked at
 * any time). */
static int live(void)
{
	int v = atomic_load_explicit(&mpiw_live, memory_order_relaxed);
	if (__builtin_expect(v, 1))
		return v == 1;
	int init = 0, fini = 0;
	if (CALL(MPI_Initialized, &init) || CALL(MPI_Finalized, &fini) || !init || fini)
		return 0;
	int was = 0;
	if (atomic_compare_exchange_strong(&mpiw_live, &was, 1)) {
		make(mpiw.world, 0);
		make(mpiw.self, 0);
	}
	return 1;
}

static struct mcomm *make(mh_t h, uint64_t parent)
{
	if (!h || h == mpiw.comm_null || !live())
		return NULL;
	pthread_mutex_lock(&lock);
	int fs = -1;
	struct mcomm *c = comm_find(h, &fs);
	if (c && atomic_load(&c->state) == 1) {
		pthread_mutex_unlock(&lock);
		return c;
	}
	int size = 0, rank = -1, inter = 0, rsize = 0;
	int32_t *w = NULL, *rw = NULL;
	uint64_t hash = 0;
	if (!CALL(MPI_Comm_size, h, &size) && !CALL(MPI_Comm_rank, h, &rank) && size > 0 &&
	    !CALL(MPI_Comm_test_inter, h, &inter))
		hash = members(h, size, 0, &w);
	if (hash && inter) {
		uint64_t rh = CALL(MPI_Comm_remote_size, h, &rsize) || rsize <= 0
		                  ? 0
		                  : members(h, rsize, 1, &rw);
		/* both sides compute the same pair */
		hash = rh ? mix(hash < rh ? hash ^ mix(rh) : rh ^ mix(hash)) : 0;
	}
	if (!hash || (!c && fs < 0)) {
		free(w), free(rw);
		pthread_mutex_unlock(&lock);
		return NULL;
	}
	if (!c) {
		c = &comms[fs];
		atomic_store(&c->key, h);
	} else {
		atomic_store(&c->state, 0);
		free(c->world), free(c->rworld);
	}
	uint64_t id = mix(hash + occurrence(hash) * 0x9e3779b97f4a7c15ull);
	c->id = id ? id : 1;
	c->parent = parent;
	c->size = size, c->rank = rank, c->remote = inter ? rsize : 0;
	c->world = w, c->rworld = rw;
	atomic_store(&c->seq, 0);
	atomic_store_explicit(&c->state, 1, memory_order_release);
	record_comm(c, h);
	pthread_mutex_unlock(&lock);
	return c;
}

struct mcomm *mpiw_comm(mh_t h)
{
	h = mpiw_h(h);
	int fs;
	struct mcomm *c = comm_find(h, &fs);
	if (__builtin_expect(c && atomic_load_explicit(&c->state, memory_order_acquire) == 1, 1))
		return c;
	return make(h, 0);
}

struct mcomm *mpiw_comm_known(mh_t h)
{
	int fs;
	struct mcomm *c = comm_find(mpiw_h(h), &fs);
	return c && atomic_load_explicit(&c->state, memory_order_acquire) == 1 ? c : NULL;
}

struct mcomm *mpiw_comm_made(mh_t h, uint64_t parent)
{
	return make(mpiw_h(h), parent);
}

void mpiw_comm_gone(mh_t h)
{
	int fs;
	struct mcomm *c = comm_find(mpiw_h(h), &fs);
	if (c)
		atomic_store(&c->state, 2);
}

void mpiw_comm_renamed(mh_t h)
{
	h = mpiw_h(h);
	struct mcomm *c = mpiw_comm(h);
	if (!c)
		return;
	pthread_mutex_lock(&lock);
	record_comm(c, h);
	pthread_mutex_unlock(&lock);
}

int64_t mpiw_world_rank(const struct mcomm *c, int r, int remote)
{
	if (!c)
		return CT_MPI_NO_PEER;
	const int32_t *w = remote ? c->rworld : c->world;
	int n = remote ? c->remote : c->size;
	if (r < 0 || r >= n)
		return CT_MPI_NO_PEER;
	return w ? w[r] : remote ? CT_MPI_NO_PEER : r; /* no list: the world itself */
}

/* ---- datatypes ---- */

static struct mtype *type_find(uint64_t key, int *free_slot)
{
	size_t i = slot_of(key, NTYPE);
	for (int n = 0; n < PROBES; n++, i = (i + 1) & (NTYPE - 1)) {
		uint64_t k = atomic_load_explicit(&types[i].key, memory_order_acquire);
		if (k == key)
			return &types[i];
		if (!k) {
			*free_slot = (int)i;
			return NULL;
		}
	}
	*free_slot = -1;
	return NULL;
}

struct mtype *mpiw_type(mh_t h)
{
	h = mpiw_h(h);
	int fs;
	struct mtype *t = type_find(h, &fs);
	if (__builtin_expect(t && atomic_load_explicit(&t->state, memory_order_acquire) == 1, 1))
		return t;
	if (!h || h == mpiw.datatype_null || !live())
		return NULL;
	mpi_count size = 0;
	char name[256] = "";
	int len = 0;
	if (CALL(MPI_Type_size_x, h, &size) || size < 0)
		return NULL;
	if (CALL(MPI_Type_get_name, h, name, &len) || len <= 0 || len >= (int)sizeof name)
		len = snprintf(name, sizeof name, "(derived)");
	pthread_mutex_lock(&lock);
	t = type_find(h, &fs);
	if (!t && fs >= 0) {
		t = &types[fs];
		atomic_store(&t->key, h);
	}
	if (t && atomic_load(&t->state) != 1) {
		t->size = (uint64_t)size;
		t->sid = mpiw_api->string(name, (size_t)len);
		atomic_store_explicit(&t->state, 1, memory_order_release);
	}
	pthread_mutex_unlock(&lock);
	return t;
}

void mpiw_type_gone(mh_t h)
{
	int fs;
	struct mtype *t = type_find(mpiw_h(h), &fs);
	if (t)
		atomic_store(&t->state, 2);
}

uint64_t mpiw_size(mh_t dt)
{
	struct mtype *t = mpiw_type(dt);
	return t ? t->size : 0;
}

uint64_t mpiw_data(struct cuptrace_mpi_call *r, int64_t count, mh_t dt)
{
	struct mtype *t = mpiw_type(dt);
	r->count = count > 0 ? (uint64_t)count : 0;
	r->datatype = t ? t->sid : 0;
	return t ? r->count * t->size : 0;
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
	pthread_mutex_lock(&lock);
	if (!(tab = atomic_load(&reqs))) {
		void *m = mmap(NULL, NREQ * sizeof *tab, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED)
			atomic_store(&reqs, tab = m);
	}
	pthread_mutex_unlock(&lock);
	return tab;
}

/* A slot for a new request of handle key, claimed (live = BUSY). */
static struct mreq *req_claim(uint64_t key)
{
	struct mreq *tab = req_table(1);
	if (!tab)
		return NULL;
	size_t i = slot_of(key, NREQ);
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
	size_t i = slot_of(key, NREQ);
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
