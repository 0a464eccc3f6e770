// SPDX-License-Identifier: MIT
/* libcuptrace-mpi.so: the MPI_* wrappers of the mpi source. `cuptrace run
 * -t mpi` preloads it beside libcuptrace.so, so that the program's calls
 * to MPI_Send and the rest land here; each wrapper calls the
 * implementation's PMPI_ function (the profiling interface) and hands
 * what the call did to libcuptrace.so (include/cuptrace/mpi_abi.h). No MPI
 * is linked and no mpi.h is read: handles are taken as integers of
 * pointer width (Open MPI's are pointers, MPICH's ints, both passed in
 * integer registers) and what differs between implementations (handle
 * width in arrays, constants, MPI_Status's layout) is looked up at the
 * first call (mpiw_core.c). The parts, each using those below it:
 *   mpiw_p2p.c mpiw_wait.c mpiw_coll.c mpiw_icoll.c mpiw_comm.c  the wrappers
 *   mpiw_req.c   requests outstanding, and the calls that made them
 *   mpiw_tab.c   communicators (their job-wide ids), datatypes
 *   mpiw_core.c  finding PMPI, the implementation, libcuptrace.so's table */
#ifndef CT_MPIW_H
#define CT_MPIW_H

#include "cuptrace/format.h"
#include "cuptrace/mpi_abi.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define MPIW_API __attribute__((visibility("default")))

typedef uintptr_t mh_t; /* any MPI handle: MPICH's int in its low 32 bits */
typedef long mpi_aint;
typedef long long mpi_count;

/* What differs between implementations. */
struct mpiw_impl {
	const char *name; /* "Open MPI", "MPICH" */
	unsigned hwidth;  /* bytes of a handle in an array: 8 or 4 */
	mh_t world, self, comm_null, request_null, datatype_null;
	int any_source, proc_null, root, err_other;
	const void *in_place;
	uintptr_t status_ignore;
	unsigned status_size;
	int (*status_read)(const void *st, int *src, int *tag, uint64_t *bytes);
};

extern struct mpiw_impl mpiw;
extern const struct cuptrace_mpi_api *mpiw_api; /* NULL: calls pass through */
/* 0 before the first call, 1 pass through, 2 traced. */
extern _Atomic int mpiw_state;
/* MPI is initialised and not finalised: the wrappers may call PMPI_
 * functions of their own (a communicator's members, a datatype's size). */
extern _Atomic int mpiw_live;

int mpiw_setup(void);
/* The implementation's function for name ("MPI_Send": PMPI_Send), cached
 * in *slot; never NULL (a function that fails, said once, where none). */
void *mpiw_resolve(void *_Atomic *slot, const char *name);

static inline void *mpiw_next(void *_Atomic *slot, const char *name)
{
	void *p = atomic_load_explicit(slot, memory_order_relaxed);
	return __builtin_expect(p != NULL, 1) ? p : mpiw_resolve(slot, name);
}

/* In each wrapper: next_, the implementation's function of the same
 * signature. */
#define NEXT(name)                                                                                 \
	static void *_Atomic next_slot_;                                                           \
	__typeof__(&name) next_ = (__typeof__(&name))mpiw_next(&next_slot_, #name)

/* fn: the string handle of the wrapper's own name. */
#define FUNC()                                                                                     \
	static _Atomic uint64_t fn_sid_;                                                           \
	uint64_t fn = atomic_load_explicit(&fn_sid_, memory_order_relaxed);                        \
	if (__builtin_expect(!fn, 0))                                                              \
	atomic_store(&fn_sid_, fn = mpiw_str(__func__))

static inline int mpiw_tracing(void)
{
	int s = atomic_load_explicit(&mpiw_state, memory_order_relaxed);
	if (__builtin_expect(!s, 0))
		s = mpiw_setup();
	return s == 2;
}

static inline int mpiw_capturing(void)
{
	return *mpiw_api->gate & 1;
}

static inline uint64_t mpiw_now(void)
{
	return mpiw_api->now();
}

static inline mh_t mpiw_h(mh_t h)
{
	return mpiw.hwidth == 4 ? (uint32_t)h : h;
}

/* Element i of an array of handles (requests, datatypes). */
static inline mh_t mpiw_at(const void *a, size_t i)
{
	return mpiw.hwidth == 4 ? ((const uint32_t *)a)[i] : ((const uint64_t *)a)[i];
}

uint64_t mpiw_str(const char *s);
void mpiw_warn_once(int *flag, const char *msg);

/* A rank as the file stores it (format.h, ct_mpi_rank). */
static inline int64_t mpiw_rank(int r)
{
	return r == mpiw.any_source  ? CT_MPI_ANY_SOURCE
	       : r == mpiw.proc_null ? CT_MPI_PROC_NULL
	       : r == mpiw.root      ? CT_MPI_ROOT
	                             : r;
}

/* A status argument made usable: the caller's, or own where the caller
 * passed MPI_STATUS_IGNORE (the call then fills ours, which we read). */
static inline void *mpiw_status(void *st, void *own)
{
	return (uintptr_t)st == mpiw.status_ignore ? own : st;
}
#define MPIW_STATUS_MAX 32 /* bytes: room for either implementation's */

/* ---- tables (mpiw_tab.c; requests: mpiw_req.c) ---- */

struct mcomm {
	_Atomic uint64_t key; /* the handle; 0 free */
	_Atomic int state;    /* 0 being made, 1 live, 2 freed */
	uint64_t id, parent;
	int32_t size, rank, remote;
	int32_t *world, *rworld; /* members' world ranks (NULL: world itself, or not known) */
	_Atomic uint64_t seq;
};

/* The communicator of handle h, registered (and its mpi_comm recorded)
 * at first sight; NULL for MPI_COMM_NULL, before MPI_Init, after
 * MPI_Finalize, or where its members cannot be had. */
struct mcomm *mpiw_comm(mh_t h);
/* A communicator a call just made from parent (id; 0 none). */
struct mcomm *mpiw_comm_made(mh_t h, uint64_t parent);
/* The live communicator of h, never registered here (NULL: not known). */
struct mcomm *mpiw_comm_known(mh_t h);
/* MPI_Init returned (1) or MPI_Finalize is called (2). */
void mpiw_set_live(int v);
/* MPI_Comm_free and the like: the handle may come back as another. */
void mpiw_comm_gone(mh_t h);
/* MPI_Comm_set_name: the communicator recorded again with its name. */
void mpiw_comm_renamed(mh_t h);
/* The next sequence number of a collective on c (0 for NULL). */
static inline uint64_t mpiw_seq(struct mcomm *c)
{
	return c ? atomic_fetch_add_explicit(&c->seq, 1, memory_order_relaxed) + 1 : 0;
}
static inline uint64_t mpiw_id(const struct mcomm *c)
{
	return c ? c->id : 0;
}
/* The world rank of rank r of c (remote: of its remote group). */
int64_t mpiw_world_rank(const struct mcomm *c, int r, int remote);

/* A datatype: its size and name's string handle; NULL where unknown. */
struct mtype {
	_Atomic uint64_t key;
	_Atomic int state;
	uint64_t size, sid;
};
struct mtype *mpiw_type(mh_t h);
void mpiw_type_gone(mh_t h);

enum { MR_SEND = 1, MR_RECV, MR_COLL, MR_OTHER };

/* What a request was made for, until a call completes it. `live` is its
 * id while it is active, else 0: a call completing it clears it only if
 * it still holds the id it saw before the call (under
 * MPI_THREAD_MULTIPLE, a request freed inside one thread's MPI_Wait may
 * come back as another thread's before that wait has returned). */
struct mreq {
	_Atomic uint64_t key;
	_Atomic uint64_t live;
	uint64_t comm, bytes;
	const struct mcomm *c; /* its communicator while c->id == comm */
	int32_t peer, tag;
	int32_t tid; /* the thread that made or started it */
	uint8_t kind, persistent;
};
/* A request as a call that may complete it saw it before calling MPI. */
struct mreq_seen {
	struct mreq *q; /* NULL: not known, or not active */
	uint64_t id, comm, bytes;
	const struct mcomm *c;
	int32_t peer, tag;
	uint8_t kind;
};
/* Request h made by the call r records (its comm, peer, tag, bytes):
 * returns its id (0 where the table had no room). persistent: made
 * inactive, MPI_Start starts it. */
uint64_t mpiw_req_made(mh_t h, int kind, const struct mcomm *c, const struct cuptrace_mpi_call *r,
                       int persistent);
/* Ids for n requests in a row (MPI_Startall's). */
uint64_t mpiw_req_ids(unsigned n);
/* MPI_Start: persistent request h started with id; its arguments into r
 * (a first one: comm, peer, tag, bytes). 0 where h is not known. */
int mpiw_req_start(mh_t h, uint64_t id, struct cuptrace_mpi_call *r);
/* Request h as it stands, before a call that may complete it; one that
 * none of prev[0..nprev) saw (a handle several outstanding requests
 * share: their calls' order, the calling thread's first). */
void mpiw_req_see(mh_t h, struct mreq_seen *s, const struct mreq_seen *prev, size_t nprev);
/* The request seen as s completed with status st (NULL: none) by the call
 * r records, which ends at r->end: its mpi_done recorded (while
 * capturing), r->count counts it, its bytes are added to r's (a
 * receive's to recv_bytes), r's comm, peer and tag become its. */
void mpiw_req_done(const struct mreq_seen *s, const void *st, struct cuptrace_mpi_call *r);
void mpiw_req_freed(mh_t h);

/* ---- records ---- */

/* A call's record with its defaults: no peer, no tag. */
static inline void mpiw_rec(struct cuptrace_mpi_call *r, uint64_t fn, uint64_t t0,
                            const struct mcomm *c, int rc)
{
	*r = (struct cuptrace_mpi_call){.start = t0,
	                                .func = fn,
	                                .comm = mpiw_id(c),
	                                .peer = CT_MPI_NO_PEER,
	                                .world_peer = CT_MPI_NO_PEER,
	                                .tag = CT_MPI_NO_TAG,
	                                .status = rc};
}

static inline void mpiw_emit(struct cuptrace_mpi_call *r)
{
	if (!r->end)
		r->end = mpiw_now();
	if (mpiw_capturing())
		mpiw_api->call(r);
}

/* The start of a call that may wait for others: mpi_enter recorded. */
static inline uint64_t mpiw_enter(uint64_t fn, const struct mcomm *c, uint64_t seq)
{
	uint64_t t0 = mpiw_now();
	if (mpiw_capturing())
		mpiw_api->enter(t0, fn, mpiw_id(c), seq);
	return t0;
}

/* peer (a rank of c) and its world rank into r. */
static inline void mpiw_peer(struct cuptrace_mpi_call *r, const struct mcomm *c, int peer)
{
	r->peer = mpiw_rank(peer);
	r->world_peer = r->peer < 0 ? r->peer : mpiw_world_rank(c, peer, c && c->remote);
}

/* count elements of dt: r's count and datatype; returns the bytes. */
uint64_t mpiw_data(struct cuptrace_mpi_call *r, int64_t count, mh_t dt);
/* The size of dt (0: not known). */
uint64_t mpiw_size(mh_t dt);

#endif
