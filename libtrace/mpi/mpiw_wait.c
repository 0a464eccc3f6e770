// SPDX-License-Identifier: MIT
/* Completion wrappers (mpiw.h): the waits (with mpi_enter) and tests, each
 * request they complete recorded as an mpi_done just before the call's
 * mpi_call, with the id the call that made it gave it; persistent
 * requests started; requests freed and cancelled. The handles are read
 * before the call (MPI sets a completed one to MPI_REQUEST_NULL), and
 * where the program ignores the statuses the call fills ours, so that a
 * receive's source and size are known. The table is kept while capture
 * is off too: a request made then and completed later links to nothing,
 * never to an older request of the same handle. */
#include "mpiw.h"

#include <stdlib.h>
#include <string.h>

#define UNDEFINED (-32766) /* MPI_UNDEFINED, the same in both */
#define NSTACK    64

/* The requests of a call: their handles before it, and statuses. */
struct batch {
	int n, free_h, free_st;
	mh_t *h;
	struct mreq_seen *seen; /* each request as seen before the call */
	char *st;               /* the statuses to read (NULL: none) */
	void *user_st;          /* what the call is given: the program's, or ours */
	mh_t hv[NSTACK];
	struct mreq_seen seenv[NSTACK];
	_Alignas(8) char sv[NSTACK * MPIW_STATUS_MAX];
};

static void batch_in(struct batch *b, int n, const void *reqs, void *statuses)
{
	b->n = n > 0 && reqs ? n : 0;
	b->free_h = b->n > NSTACK;
	b->h = b->free_h ? malloc((size_t)b->n * sizeof *b->h) : b->hv;
	b->seen = b->free_h ? malloc((size_t)b->n * sizeof *b->seen) : b->seenv;
	if (!b->h || !b->seen) {
		if (b->free_h)
			free(b->h), free(b->seen);
		b->n = 0, b->free_h = 0;
	}
	for (int i = 0; i < b->n; i++) {
		b->h[i] = mpiw_at(reqs, (size_t)i);
		mpiw_req_see(b->h[i], &b->seen[i], b->seen, (size_t)i);
	}
	b->user_st = statuses;
	b->st = statuses;
	b->free_st = 0;
	if ((uintptr_t)statuses == mpiw.status_ignore) {
		b->free_st = b->n > NSTACK;
		b->st = b->free_st ? malloc((size_t)b->n * mpiw.status_size) : b->sv;
		if (b->st)
			b->user_st = b->st;
		else
			b->free_st = 0;
	}
}

static const void *batch_status(const struct batch *b, int k)
{
	return b->st ? b->st + (size_t)k * mpiw.status_size : NULL;
}

static void batch_out(struct batch *b)
{
	if (b->free_h)
		free(b->h), free(b->seen);
	if (b->free_st)
		free(b->st);
}

/* Request i of b completed, with its status (k-th of the statuses). */
static void one(struct batch *b, int i, int k, struct cuptrace_mpi_call *r)
{
	if (i >= 0 && i < b->n)
		mpiw_req_done(&b->seen[i], batch_status(b, k), r);
}

static void finish(struct cuptrace_mpi_call *r, uint64_t fn, uint64_t t0, int rc)
{
	mpiw_rec(r, fn, t0, NULL, rc);
	r->end = mpiw_now();
}

MPIW_API int MPI_Wait(mh_t *req, void *status)
{
	NEXT(MPI_Wait);
	if (!mpiw_tracing())
		return next_(req, status);
	FUNC();
	_Alignas(8) char own[MPIW_STATUS_MAX];
	void *st = mpiw_status(status, own);
	struct mreq_seen seen;
	mpiw_req_see(req ? mpiw_at(req, 0) : 0, &seen, NULL, 0);
	uint64_t t0 = mpiw_enter(fn, NULL, 0);
	int rc = next_(req, st);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	if (!rc)
		mpiw_req_done(&seen, st, &r);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Test(mh_t *req, int *flag, void *status)
{
	NEXT(MPI_Test);
	if (!mpiw_tracing())
		return next_(req, flag, status);
	FUNC();
	_Alignas(8) char own[MPIW_STATUS_MAX];
	void *st = mpiw_status(status, own);
	struct mreq_seen seen;
	mpiw_req_see(req ? mpiw_at(req, 0) : 0, &seen, NULL, 0);
	uint64_t t0 = mpiw_now();
	int rc = next_(req, flag, st);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	if (!rc && flag && *flag)
		mpiw_req_done(&seen, st, &r);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Waitany(int n, mh_t *reqs, int *index, void *status)
{
	NEXT(MPI_Waitany);
	if (!mpiw_tracing())
		return next_(n, reqs, index, status);
	FUNC();
	_Alignas(8) char own[MPIW_STATUS_MAX];
	void *st = mpiw_status(status, own);
	struct batch b;
	batch_in(&b, n, reqs, NULL);
	uint64_t t0 = mpiw_enter(fn, NULL, 0);
	int rc = next_(n, reqs, index, st);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	if (!rc && index && *index != UNDEFINED && *index >= 0 && *index < b.n)
		mpiw_req_done(&b.seen[*index], st, &r);
	batch_out(&b);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Testany(int n, mh_t *reqs, int *index, int *flag, void *status)
{
	NEXT(MPI_Testany);
	if (!mpiw_tracing())
		return next_(n, reqs, index, flag, status);
	FUNC();
	_Alignas(8) char own[MPIW_STATUS_MAX];
	void *st = mpiw_status(status, own);
	struct batch b;
	batch_in(&b, n, reqs, NULL);
	uint64_t t0 = mpiw_now();
	int rc = next_(n, reqs, index, flag, st);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	if (!rc && flag && *flag && index && *index != UNDEFINED && *index >= 0 && *index < b.n)
		mpiw_req_done(&b.seen[*index], st, &r);
	batch_out(&b);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Waitall(int n, mh_t *reqs, void *statuses)
{
	NEXT(MPI_Waitall);
	if (!mpiw_tracing())
		return next_(n, reqs, statuses);
	FUNC();
	struct batch b;
	batch_in(&b, n, reqs, statuses);
	uint64_t t0 = mpiw_enter(fn, NULL, 0);
	int rc = next_(n, reqs, b.user_st);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	for (int i = 0; !rc && i < b.n; i++)
		one(&b, i, i, &r);
	batch_out(&b);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Testall(int n, mh_t *reqs, int *flag, void *statuses)
{
	NEXT(MPI_Testall);
	if (!mpiw_tracing())
		return next_(n, reqs, flag, statuses);
	FUNC();
	struct batch b;
	batch_in(&b, n, reqs, statuses);
	uint64_t t0 = mpiw_now();
	int rc = next_(n, reqs, flag, b.user_st);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	for (int i = 0; !rc && flag && *flag && i < b.n; i++)
		one(&b, i, i, &r);
	batch_out(&b);
	mpiw_emit(&r);
	return rc;
}

#define SOME(name, enter)                                                                          \
	MPIW_API int name(int n, mh_t *reqs, int *outcount, int *indices, void *statuses)          \
	{                                                                                          \
		NEXT(name);                                                                        \
		if (!mpiw_tracing())                                                               \
			return next_(n, reqs, outcount, indices, statuses);                        \
		FUNC();                                                                            \
		struct batch b;                                                                    \
		batch_in(&b, n, reqs, statuses);                                                   \
		uint64_t t0 = enter ? mpiw_enter(fn, NULL, 0) : mpiw_now();                        \
		int rc = next_(n, reqs, outcount, indices, b.user_st);                             \
		struct cuptrace_mpi_call r;                                                        \
		finish(&r, fn, t0, rc);                                                            \
		int m = !rc && outcount && *outcount != UNDEFINED ? *outcount : 0;                 \
		for (int k = 0; indices && k < m && k < b.n; k++)                                  \
			one(&b, indices[k], k, &r);                                                \
		batch_out(&b);                                                                     \
		mpiw_emit(&r);                                                                     \
		return rc;                                                                         \
	}

SOME(MPI_Waitsome, 1)
SOME(MPI_Testsome, 0)

MPIW_API int MPI_Start(mh_t *req)
{
	NEXT(MPI_Start);
	if (!mpiw_tracing())
		return next_(req);
	FUNC();
	mh_t h = req ? mpiw_at(req, 0) : 0;
	uint64_t t0 = mpiw_now();
	int rc = next_(req);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	uint64_t id = mpiw_req_ids(1);
	if (!rc && mpiw_req_start(h, id, &r))
		r.req = id, r.count = 1;
	mpiw_emit(&r);
	return rc;
}

/* The requests it starts get ids in a row: req is the first, count how
 * many. */
MPIW_API int MPI_Startall(int n, mh_t *reqs)
{
	NEXT(MPI_Startall);
	if (!mpiw_tracing())
		return next_(n, reqs);
	FUNC();
	struct batch b;
	batch_in(&b, n, reqs, NULL);
	uint64_t t0 = mpiw_now();
	int rc = next_(n, reqs);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	if (!rc && b.n) {
		uint64_t id = mpiw_req_ids((unsigned)b.n);
		for (int i = 0; i < b.n; i++)
			mpiw_req_start(b.h[i], id + (uint64_t)i, &r);
		r.req = id, r.count = (uint64_t)b.n;
	}
	batch_out(&b);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Request_free(mh_t *req)
{
	NEXT(MPI_Request_free);
	if (!mpiw_tracing())
		return next_(req);
	FUNC();
	mh_t h = req ? mpiw_at(req, 0) : 0;
	uint64_t t0 = mpiw_now();
	int rc = next_(req);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	if (!rc)
		mpiw_req_freed(h);
	mpiw_emit(&r);
	return rc;
}

MPIW_API int MPI_Cancel(mh_t *req)
{
	NEXT(MPI_Cancel);
	if (!mpiw_tracing() || !mpiw_capturing())
		return next_(req);
	FUNC();
	uint64_t t0 = mpiw_now();
	int rc = next_(req);
	struct cuptrace_mpi_call r;
	finish(&r, fn, t0, rc);
	mpiw_emit(&r);
	return rc;
}
