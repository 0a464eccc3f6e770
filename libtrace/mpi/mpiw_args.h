// SPDX-License-Identifier: MIT
/* What the collective wrappers share (mpiw_coll.c, blocking; mpiw_icoll.c,
 * non-blocking; mpiw_comm.c, the calls that make communicators): the
 * sequence number every collective takes on its communicator, whether
 * capture is on or off (the numbers must agree across ranks whatever
 * each recorded), and the bytes a call's arguments describe. Arguments
 * MPI calls insignificant on a rank (a non-root's receive side) are never
 * looked at there: they may be anything. */
#ifndef CT_MPIW_ARGS_H
#define CT_MPIW_ARGS_H

#include "mpiw.h"

struct mcoll {
	struct mcomm *c;
	uint64_t seq, t0;
	int rec; /* capture was on at its start */
};

/* blocking: it may wait for other ranks (mpi_enter). */
static inline void mpiw_coll_in(struct mcoll *k, uint64_t fn, mh_t comm, int blocking)
{
	k->c = mpiw_comm(comm);
	k->seq = mpiw_seq(k->c);
	k->rec = mpiw_capturing();
	k->t0 = blocking ? mpiw_enter(fn, k->c, k->seq) : mpiw_now();
}

static inline void mpiw_coll_out(struct cuptrace_mpi_call *r, const struct mcoll *k, uint64_t fn,
                                 int rc)
{
	mpiw_rec(r, fn, k->t0, k->c, rc);
	r->seq = k->seq;
	r->end = mpiw_now();
}

/* The members a rooted or all-to-all call exchanges with. */
static inline int64_t mpiw_n(const struct mcomm *c)
{
	return c ? (c->remote ? c->remote : c->size) : 0;
}

/* This process is the root (an intercommunicator's: MPI_ROOT). */
static inline int mpiw_is_root(const struct mcomm *c, int root)
{
	return root == mpiw.root || (c && !c->remote && root == c->rank);
}

static inline int64_t mpiw_sum(const int *counts, int64_t n)
{
	int64_t s = 0;
	for (int64_t i = 0; counts && i < n; i++)
		s += counts[i] > 0 ? counts[i] : 0;
	return s;
}

static inline void a_root(struct cuptrace_mpi_call *r, const struct mcomm *c, int root)
{
	mpiw_peer(r, c, root);
}

static inline void a_bcast(struct cuptrace_mpi_call *r, const struct mcomm *c, int64_t count,
                           mh_t dt, int root)
{
	uint64_t b = mpiw_data(r, count, dt);
	a_root(r, c, root);
	if (mpiw_is_root(c, root))
		r->bytes = b;
	else
		r->recv_bytes = b;
}

static inline void a_reduce(struct cuptrace_mpi_call *r, const struct mcomm *c, int64_t count,
                            mh_t dt, int root)
{
	r->bytes = mpiw_data(r, count, dt);
	a_root(r, c, root);
	r->recv_bytes = mpiw_is_root(c, root) ? r->bytes : 0;
}

static inline void a_allreduce(struct cuptrace_mpi_call *r, const struct mcomm *c, int64_t count,
                               mh_t dt)
{
	(void)c;
	r->bytes = r->recv_bytes = mpiw_data(r, count, dt);
}

/* Gather (root >= 0 or MPI_ROOT) and allgather (all): rcounts given for
 * the v forms, else rcount from each. */
static inline void a_gather(struct cuptrace_mpi_call *r, const struct mcomm *c, const void *sbuf,
                            int64_t scount, mh_t stype, int64_t rcount, const int *rcounts,
                            mh_t rtype, int root, int all)
{
	int me = all || mpiw_is_root(c, root);
	if (sbuf == mpiw.in_place)
		r->bytes = mpiw_data(
		    r,
		    rcounts ? (c && c->rank >= 0 && c->rank < mpiw_n(c) ? rcounts[c->rank] : 0)
		            : rcount,
		    rtype);
	else if (!(c && c->remote && me && !all)) /* an intercommunicator's root sends nothing */
		r->bytes = mpiw_data(r, scount, stype);
	if (!all)
		a_root(r, c, root);
	if (me)
		r->recv_bytes =
		    (uint64_t)(rcounts ? mpiw_sum(rcounts, mpiw_n(c)) : rcount * mpiw_n(c)) *
		    mpiw_size(rtype);
}

static inline void a_scatter(struct cuptrace_mpi_call *r, const struct mcomm *c, int64_t scount,
                             const int *scounts, mh_t stype, const void *rbuf, int64_t rcount,
                             mh_t rtype, int root)
{
	a_root(r, c, root);
	if (mpiw_is_root(c, root)) {
		int64_t n = scounts ? mpiw_sum(scounts, mpiw_n(c)) : scount * mpiw_n(c);
		r->bytes = mpiw_data(r, n, stype);
		if (rbuf != mpiw.in_place && !(c && c->remote))
			r->recv_bytes = (uint64_t)rcount * mpiw_size(rtype);
	} else {
		r->recv_bytes = mpiw_data(r, rcount, rtype);
	}
}

/* alltoall (counts NULL), alltoallv (counts), alltoallw (types too). */
static inline void a_alltoall(struct cuptrace_mpi_call *r, const struct mcomm *c, const void *sbuf,
                              int64_t scount, const int *scounts, mh_t stype, const void *stypes,
                              int64_t rcount, const int *rcounts, mh_t rtype, const void *rtypes)
{
	int64_t n = mpiw_n(c);
	if (rtypes) {
		uint64_t sb = 0, rb = 0;
		for (int64_t i = 0; i < n; i++) {
			if (sbuf != mpiw.in_place && scounts[i] > 0)
				sb += (uint64_t)scounts[i] * mpiw_size(mpiw_at(stypes, (size_t)i));
			if (rcounts[i] > 0)
				rb += (uint64_t)rcounts[i] * mpiw_size(mpiw_at(rtypes, (size_t)i));
		}
		r->count = (uint64_t)mpiw_sum(sbuf != mpiw.in_place ? scounts : rcounts, n);
		r->bytes = sbuf != mpiw.in_place ? sb : rb;
		r->recv_bytes = rb;
		return;
	}
	int64_t rn = rcounts ? mpiw_sum(rcounts, n) : rcount * n;
	if (sbuf == mpiw.in_place)
		r->bytes = mpiw_data(r, rn, rtype);
	else
		r->bytes = mpiw_data(r, scounts ? mpiw_sum(scounts, n) : scount * n, stype);
	r->recv_bytes = (uint64_t)rn * mpiw_size(rtype);
}

/* reduce_scatter (rcounts) and reduce_scatter_block (rcount each). */
static inline void a_reduce_scatter(struct cuptrace_mpi_call *r, const struct mcomm *c,
                                    int64_t rcount, const int *rcounts, mh_t dt)
{
	int64_t n = mpiw_n(c);
	int64_t all = rcounts ? mpiw_sum(rcounts, n) : rcount * n;
	int64_t mine = rcounts ? (c && c->rank >= 0 && c->rank < n ? rcounts[c->rank] : 0) : rcount;
	r->bytes = mpiw_data(r, all, dt);
	r->recv_bytes = (uint64_t)(mine > 0 ? mine : 0) * mpiw_size(dt);
}

/* A blocking collective: name, its parameters and arguments (in
 * parentheses), its communicator, and an expression that fills r from
 * them (c: the communicator). */
#define WRAP_COLL(name, params, args, comm, fill)                                                  \
	MPIW_API int name params                                                                   \
	{                                                                                          \
		NEXT(name);                                                                        \
		if (!mpiw_tracing())                                                               \
			return next_ args;                                                         \
		FUNC();                                                                            \
		struct mcoll k;                                                                    \
		mpiw_coll_in(&k, fn, comm, 1);                                                     \
		int rc = next_ args;                                                               \
		if (k.rec) {                                                                       \
			struct cuptrace_mpi_call r;                                                \
			const struct mcomm *c = k.c;                                               \
			mpiw_coll_out(&r, &k, fn, rc);                                             \
			fill;                                                                      \
			mpiw_emit(&r);                                                             \
		}                                                                                  \
		return rc;                                                                         \
	}

/* The same, non-blocking: its request (the parameter req) links the wait
 * that completes it; made known whether capture is on or not. */
#define WRAP_ICOLL(name, params, args, comm, fill)                                                 \
	MPIW_API int name params                                                                   \
	{                                                                                          \
		NEXT(name);                                                                        \
		if (!mpiw_tracing())                                                               \
			return next_ args;                                                         \
		FUNC();                                                                            \
		struct mcoll k;                                                                    \
		mpiw_coll_in(&k, fn, comm, 0);                                                     \
		int rc = next_ args;                                                               \
		struct cuptrace_mpi_call r;                                                        \
		const struct mcomm *c = k.c;                                                       \
		mpiw_coll_out(&r, &k, fn, rc);                                                     \
		if (k.rec)                                                                         \
			fill;                                                                      \
		if (!rc && req)                                                                    \
			r.req = mpiw_req_made(mpiw_at(req, 0), MR_COLL, c, &r, 0);                 \
		if (k.rec)                                                                         \
			mpiw_emit(&r);                                                             \
		return rc;                                                                         \
	}

#endif
