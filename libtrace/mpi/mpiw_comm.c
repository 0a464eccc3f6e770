// SPDX-License-Identifier: MIT
/* MPI's life and its communicators (mpiw.h): MPI_Init (MPI_COMM_WORLD and
 * MPI_COMM_SELF registered, so that every rank counts them first),
 * MPI_Finalize (a collective over the world: it takes the world's next
 * sequence number, and after it the wrappers call no MPI of their own),
 * MPI_Abort, the calls that make communicators (collective over the
 * communicator they are made from, whose sequence number they take; the
 * new one registered at once, in the order every member makes it), those
 * that free or rename them, and MPI_Type_free (a datatype's handle may
 * come back as another type). */
#include "mpiw_args.h"

MPIW_API int MPI_Init(int *argc, char ***argv)
{
	NEXT(MPI_Init);
	if (!mpiw_tracing())
		return next_(argc, argv);
	FUNC();
	uint64_t t0 = mpiw_now();
	int rc = next_(argc, argv);
	if (!rc)
		mpiw_set_live(1);
	struct cuptrace_mpi_call r;
	mpiw_rec(&r, fn, t0, rc ? NULL : mpiw_comm_known(mpiw.world), rc);
	mpiw_emit(&r);
	return rc;
}

/* count: the thread level provided. */
MPIW_API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	NEXT(MPI_Init_thread);
	if (!mpiw_tracing())
		return next_(argc, argv, required, provided);
	FUNC();
	uint64_t t0 = mpiw_now();
	int rc = next_(argc, argv, required, provided);
	if (!rc)
		mpiw_set_live(1);
	struct cuptrace_mpi_call r;
	mpiw_rec(&r, fn, t0, rc ? NULL : mpiw_comm_known(mpiw.world), rc);
	r.count = !rc && provided && *provided >= 0 ? (uint64_t)*provided : 0;
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Finalize(void)
{
	NEXT(MPI_Finalize);
	if (!mpiw_tracing())
		return next_();
	FUNC();
	struct mcoll k = {mpiw_comm_known(mpiw.world)};
	k.seq = mpiw_seq(k.c);
	k.rec = mpiw_capturing();
	k.t0 = mpiw_enter(fn, k.c, k.seq);
	mpiw_set_live(2);
	int rc = next_();
	struct cuptrace_mpi_call r;
	mpiw_coll_out(&r, &k, fn, rc);
	mpiw_emit(&r);
	return rc;
}

/* Recorded before the call, which does not return. */
MPIW_API int MPI_Abort(mh_t comm, int code)
{
	NEXT(MPI_Abort);
	if (mpiw_tracing()) {
		FUNC();
		struct cuptrace_mpi_call r;
		uint64_t t = mpiw_now();
		mpiw_rec(&r, fn, t, mpiw_comm_known(comm), 0);
		r.end = t;
		r.count = (uint64_t)(int64_t)code;
		mpiw_emit(&r);
	}
	return next_(comm, code);
}

/* A call that makes the communicator *out from comm, collectively over
 * comm (coll: 0 for MPI_Comm_create_group, collective over its group
 * only, which takes no sequence number of comm). */
#define WRAP_MAKE(name, params, args, comm, out, coll)                                             \
	MPIW_API int name params                                                                   \
	{                                                                                          \
		NEXT(name);                                                                        \
		if (!mpiw_tracing())                                                               \
			return next_ args;                                                         \
		FUNC();                                                                            \
		struct mcoll k = {mpiw_comm(comm)};                                                \
		k.seq = (coll) ? mpiw_seq(k.c) : 0;                                                \
		k.rec = mpiw_capturing();                                                          \
		k.t0 = mpiw_enter(fn, k.c, k.seq);                                                 \
		int rc = next_ args;                                                               \
		if (!rc && (out))                                                                  \
			mpiw_comm_made(mpiw_at(out, 0), mpiw_id(k.c));                             \
		struct cuptrace_mpi_call r;                                                        \
		mpiw_coll_out(&r, &k, fn, rc);                                                     \
		mpiw_emit(&r);                                                                     \
		return rc;                                                                         \
	}

WRAP_MAKE(MPI_Comm_dup, (mh_t comm, mh_t *out), (comm, out), comm, out, 1)
WRAP_MAKE(MPI_Comm_dup_with_info, (mh_t comm, mh_t info, mh_t *out), (comm, info, out), comm, out,
          1)
WRAP_MAKE(MPI_Comm_split, (mh_t comm, int color, int key, mh_t *out), (comm, color, key, out), comm,
          out, 1)
WRAP_MAKE(MPI_Comm_split_type, (mh_t comm, int type, int key, mh_t info, mh_t *out),
          (comm, type, key, info, out), comm, out, 1)
WRAP_MAKE(MPI_Comm_create, (mh_t comm, mh_t group, mh_t *out), (comm, group, out), comm, out, 1)
WRAP_MAKE(MPI_Comm_create_group, (mh_t comm, mh_t group, int tag, mh_t *out),
          (comm, group, tag, out), comm, out, 0)
WRAP_MAKE(MPI_Cart_create,
          (mh_t comm, int ndims, const int *dims, const int *periods, int reorder, mh_t *out),
          (comm, ndims, dims, periods, reorder, out), comm, out, 1)
WRAP_MAKE(MPI_Cart_sub, (mh_t comm, const int *remain, mh_t *out), (comm, remain, out), comm, out,
          1)
WRAP_MAKE(MPI_Graph_create,
          (mh_t comm, int nnodes, const int *index, const int *edges, int reorder, mh_t *out),
          (comm, nnodes, index, edges, reorder, out), comm, out, 1)
WRAP_MAKE(MPI_Dist_graph_create_adjacent,
          (mh_t comm, int indeg, const int *sources, const int *sweights, int outdeg,
           const int *dests, const int *dweights, mh_t info, int reorder, mh_t *out),
          (comm, indeg, sources, sweights, outdeg, dests, dweights, info, reorder, out), comm, out,
          1)
WRAP_MAKE(MPI_Dist_graph_create,
          (mh_t comm, int n, const int *sources, const int *degrees, const int *dests,
           const int *weights, mh_t info, int reorder, mh_t *out),
          (comm, n, sources, degrees, dests, weights, info, reorder, out), comm, out, 1)
WRAP_MAKE(MPI_Intercomm_create,
          (mh_t local, int local_leader, mh_t peer, int remote_leader, int tag, mh_t *out),
          (local, local_leader, peer, remote_leader, tag, out), local, out, 1)
WRAP_MAKE(MPI_Intercomm_merge, (mh_t inter, int high, mh_t *out), (inter, high, out), inter, out, 1)

/* Non-blocking: the new handle may not be used before the request
 * completes, so it is registered at its first use. */
MPIW_API int MPI_Comm_idup(mh_t comm, mh_t *out, mh_t *req)
{
	NEXT(MPI_Comm_idup);
	if (!mpiw_tracing())
		return next_(comm, out, req);
	FUNC();
	struct mcoll k;
	mpiw_coll_in(&k, fn, comm, 0);
	int rc = next_(comm, out, req);
	struct cuptrace_mpi_call r;
	mpiw_coll_out(&r, &k, fn, rc);
	if (!rc && req)
		r.req = mpiw_req_made(mpiw_at(req, 0), MR_OTHER, k.c, &r, 0);
	mpiw_emit(&r);
	return rc;
}

#define WRAP_FREE(name)                                                                            \
	MPIW_API int name(mh_t *comm)                                                              \
	{                                                                                          \
		NEXT(name);                                                                        \
		if (!mpiw_tracing())                                                               \
			return next_(comm);                                                        \
		FUNC();                                                                            \
		mh_t h = comm ? mpiw_at(comm, 0) : 0;                                              \
		struct mcomm *c = mpiw_comm_known(h);                                              \
		uint64_t t0 = mpiw_enter(fn, c, 0);                                                \
		int rc = next_(comm);                                                              \
		struct cuptrace_mpi_call r;                                                        \
		mpiw_rec(&r, fn, t0, c, rc);                                                       \
		if (!rc)                                                                           \
			mpiw_comm_gone(h);                                                         \
		mpiw_emit(&r);                                                                     \
		return rc;                                                                         \
	}

WRAP_FREE(MPI_Comm_free)
WRAP_FREE(MPI_Comm_disconnect)

MPIW_API int MPI_Comm_set_name(mh_t comm, const char *name)
{
	NEXT(MPI_Comm_set_name);
	if (!mpiw_tracing())
		return next_(comm, name);
	FUNC();
	uint64_t t0 = mpiw_now();
	int rc = next_(comm, name);
	if (!rc)
		mpiw_comm_renamed(comm);
	struct cuptrace_mpi_call r;
	mpiw_rec(&r, fn, t0, mpiw_comm_known(comm), rc);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Type_free(mh_t *type)
{
	NEXT(MPI_Type_free);
	if (!mpiw_tracing())
		return next_(type);
	mh_t h = type ? mpiw_at(type, 0) : 0;
	int rc = next_(type);
	if (!rc)
		mpiw_type_gone(h);
	return rc;
}
