// SPDX-License-Identifier: MIT
/* The wrappers' tables (mpiw.h) of communicators and datatypes by handle
 * (requests: mpiw_req.c). Each is an open-addressed array whose keys are
 * never removed: a handle freed (MPI_Comm_free, MPI_Type_free) is marked
 * so and comes back as a new entry in the same slot. Readers take no
 * lock; making an entry takes one (it calls MPI, once per communicator or
 * datatype).
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

#define NCOMM  4096
#define NTYPE  1024
#define NOCC   4096
#define PROBES 64

static struct mcomm comms[NCOMM];
static struct mtype types[NTYPE];
static struct {
	uint64_t hash, n;
} occ[NOCC];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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
