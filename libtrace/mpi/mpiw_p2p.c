// SPDX-License-Identifier: MIT
/* Point-to-point wrappers (mpiw.h): blocking sends and receives (with
 * mpi_enter: they may wait for the peer), non-blocking ones (their
 * request made known to the table, so that the call completing it links
 * back), probes, persistent requests' set-up, and MPI 4's large-count
 * (_c) forms of the common ones. A blocking call made while capture is
 * off is passed straight through; calls that make requests are not, so
 * that the table stays true. */
#include "mpiw.h"

/* The arguments of a send into r. */
static void send_args(struct cuptrace_mpi_call *r, const struct mcomm *c, int dest, int tag,
                      int64_t count, mh_t dt)
{
	mpiw_peer(r, c, dest);
	r->tag = tag;
	r->bytes = mpiw_data(r, count, dt);
}

/* A receive's: the source, tag and bytes its status gives where it
 * succeeded, else the arguments. */
static void recv_args(struct cuptrace_mpi_call *r, const struct mcomm *c, int src, int tag,
                      int64_t count, mh_t dt, const void *st)
{
	uint64_t want = mpiw_data(r, count, dt), got = 0;
	int s = src, t = tag;
	if (!r->status && st)
		mpiw.status_read(st, &s, &t, &got);
	else
		got = want;
	mpiw_peer(r, c, s);
	r->tag = t == -1 ? CT_MPI_ANY_TAG : t;
	r->recv_bytes = got;
}

#define SEND(name, count_t)                                                                        \
	MPIW_API int name(const void *buf, count_t count, mh_t dt, int dest, int tag, mh_t comm)   \
	{                                                                                          \
		NEXT(name);                                                                        \
		if (!mpiw_tracing() || !mpiw_capturing())                                          \
			return next_(buf, count, dt, dest, tag, comm);                             \
		FUNC();                                                                            \
		struct mcomm *c = mpiw_comm(comm);                                                 \
		uint64_t t0 = mpiw_enter(fn, c, 0);                                                \
		int rc = next_(buf, count, dt, dest, tag, comm);                                   \
		struct cuptrace_mpi_call r;                                                        \
		mpiw_rec(&r, fn, t0, c, rc);                                                       \
		r.end = mpiw_now();                                                                \
		send_args(&r, c, dest, tag, (int64_t)count, dt);                                   \
		mpiw_emit(&r);                                                                     \
		return rc;                                                                         \
	}

SEND(MPI_Send, int)
SEND(MPI_Ssend, int)
SEND(MPI_Bsend, int)
SEND(MPI_Rsend, int)
SEND(MPI_Send_c, mpi_count)
SEND(MPI_Ssend_c, mpi_count)

#define RECV(name, count_t)                                                                        \
	MPIW_API int name(void *buf, count_t count, mh_t dt, int src, int tag, mh_t comm,          \
	                  void *status)                                                            \
	{                                                                                          \
		NEXT(name);                                                                        \
		if (!mpiw_tracing() || !mpiw_capturing())                                          \
			return next_(buf, count, dt, src, tag, comm, status);                      \
		FUNC();                                                                            \
		_Alignas(8) char own[MPIW_STATUS_MAX];                                             \
		void *st = mpiw_status(status, own);                                               \
		struct mcomm *c = mpiw_comm(comm);                                                 \
		uint64_t t0 = mpiw_enter(fn, c, 0);                                                \
		int rc = next_(buf, count, dt, src, tag, comm, st);                                \
		struct cuptrace_mpi_call r;                                                        \
		mpiw_rec(&r, fn, t0, c, rc);                                                       \
		r.end = mpiw_now();                                                                \
		recv_args(&r, c, src, tag, (int64_t)count, dt, st);                                \
		mpiw_emit(&r);                                                                     \
		return rc;                                                                         \
	}

RECV(MPI_Recv, int)
RECV(MPI_Recv_c, mpi_count)

#define ISEND(name, count_t, kind, persistent)                                                     \
	MPIW_API int name(const void *buf, count_t count, mh_t dt, int peer, int tag, mh_t comm,   \
	                  mh_t *req)                                                               \
	{                                                                                          \
		NEXT(name);                                                                        \
		if (!mpiw_tracing())                                                               \
			return next_(buf, count, dt, peer, tag, comm, req);                        \
		FUNC();                                                                            \
		struct mcomm *c = mpiw_comm(comm);                                                 \
		uint64_t t0 = mpiw_now();                                                          \
		int rc = next_(buf, count, dt, peer, tag, comm, req);                              \
		struct cuptrace_mpi_call r;                                                        \
		mpiw_rec(&r, fn, t0, c, rc);                                                       \
		r.end = mpiw_now();                                                                \
		send_args(&r, c, peer, tag, (int64_t)count, dt);                                   \
		if (kind == MR_RECV) {                                                             \
			r.recv_bytes = r.bytes;                                                    \
			r.bytes = 0;                                                               \
			r.tag = tag == -1 ? CT_MPI_ANY_TAG : tag;                                  \
		}                                                                                  \
		if (!rc && req)                                                                    \
			r.req = mpiw_req_made(mpiw_at(req, 0), kind, c, &r, persistent);           \
		mpiw_emit(&r);                                                                     \
		return rc;                                                                         \
	}

ISEND(MPI_Isend, int, MR_SEND, 0)
ISEND(MPI_Issend, int, MR_SEND, 0)
ISEND(MPI_Ibsend, int, MR_SEND, 0)
ISEND(MPI_Irsend, int, MR_SEND, 0)
ISEND(MPI_Irecv, int, MR_RECV, 0)
ISEND(MPI_Isend_c, mpi_count, MR_SEND, 0)
ISEND(MPI_Irecv_c, mpi_count, MR_RECV, 0)
ISEND(MPI_Send_init, int, MR_SEND, 1)
ISEND(MPI_Ssend_init, int, MR_SEND, 1)
ISEND(MPI_Bsend_init, int, MR_SEND, 1)
ISEND(MPI_Rsend_init, int, MR_SEND, 1)
ISEND(MPI_Recv_init, int, MR_RECV, 1)

MPIW_API int MPI_Sendrecv(const void *sbuf, int scount, mh_t stype, int dest, int stag, void *rbuf,
                          int rcount, mh_t rtype, int src, int rtag, mh_t comm, void *status)
{
	NEXT(MPI_Sendrecv);
	if (!mpiw_tracing() || !mpiw_capturing())
		return next_(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm,
		             status);
	FUNC();
	_Alignas(8) char own[MPIW_STATUS_MAX];
	void *st = mpiw_status(status, own);
	struct mcomm *c = mpiw_comm(comm);
	uint64_t t0 = mpiw_enter(fn, c, 0);
	int rc = next_(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, src, rtag, comm, st);
	struct cuptrace_mpi_call r, rr;
	mpiw_rec(&r, fn, t0, c, rc);
	r.end = mpiw_now();
	rr = r;
	recv_args(&rr, c, src, rtag, rcount, rtype, st);
	send_args(&r, c, dest, stag, scount, stype);
	r.recv_bytes = rr.recv_bytes;
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Sendrecv_replace(void *buf, int count, mh_t dt, int dest, int stag, int src,
                                  int rtag, mh_t comm, void *status)
{
	NEXT(MPI_Sendrecv_replace);
	if (!mpiw_tracing() || !mpiw_capturing())
		return next_(buf, count, dt, dest, stag, src, rtag, comm, status);
	FUNC();
	_Alignas(8) char own[MPIW_STATUS_MAX];
	void *st = mpiw_status(status, own);
	struct mcomm *c = mpiw_comm(comm);
	uint64_t t0 = mpiw_enter(fn, c, 0);
	int rc = next_(buf, count, dt, dest, stag, src, rtag, comm, st);
	struct cuptrace_mpi_call r, rr;
	mpiw_rec(&r, fn, t0, c, rc);
	r.end = mpiw_now();
	rr = r;
	recv_args(&rr, c, src, rtag, count, dt, st);
	send_args(&r, c, dest, stag, count, dt);
	r.recv_bytes = rr.recv_bytes;
	mpiw_emit(&r);
	return rc;
}

/* A probe's record: the message it found (source, tag, bytes). */
static void probe_args(struct cuptrace_mpi_call *r, const struct mcomm *c, int src, int tag,
                       const void *st, int found)
{
	int s = src, t = tag;
	uint64_t got = 0;
	if (!r->status && found)
		mpiw.status_read(st, &s, &t, &got);
	mpiw_peer(r, c, s);
	r->tag = t == -1 ? CT_MPI_ANY_TAG : t;
	r->recv_bytes = got;
}

MPIW_API int MPI_Probe(int src, int tag, mh_t comm, void *status)
{
	NEXT(MPI_Probe);
	if (!mpiw_tracing() || !mpiw_capturing())
		return next_(src, tag, comm, status);
	FUNC();
	_Alignas(8) char own[MPIW_STATUS_MAX];
	void *st = mpiw_status(status, own);
	struct mcomm *c = mpiw_comm(comm);
	uint64_t t0 = mpiw_enter(fn, c, 0);
	int rc = next_(src, tag, comm, st);
	struct cuptrace_mpi_call r;
	mpiw_rec(&r, fn, t0, c, rc);
	r.end = mpiw_now();
	probe_args(&r, c, src, tag, st, 1);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Iprobe(int src, int tag, mh_t comm, int *flag, void *status)
{
	NEXT(MPI_Iprobe);
	if (!mpiw_tracing() || !mpiw_capturing())
		return next_(src, tag, comm, flag, status);
	FUNC();
	_Alignas(8) char own[MPIW_STATUS_MAX];
	void *st = mpiw_status(status, own);
	struct mcomm *c = mpiw_comm(comm);
	uint64_t t0 = mpiw_now();
	int rc = next_(src, tag, comm, flag, st);
	struct cuptrace_mpi_call r;
	mpiw_rec(&r, fn, t0, c, rc);
	r.end = mpiw_now();
	probe_args(&r, c, src, tag, st, flag && *flag);
	mpiw_emit(&r);
	return rc;
}
