// SPDX-License-Identifier: MIT
/* Non-blocking collectives (mpiw_args.h): the same arguments as the
 * blocking ones, a sequence number taken at the call (MPI orders them as
 * called), no mpi_enter (they return at once), and their request made
 * known, so that the wait that completes it links back to the call. */
#include "mpiw_args.h"

WRAP_ICOLL(MPI_Ibarrier, (mh_t comm, mh_t *req), (comm, req), comm, (void)c)

WRAP_ICOLL(MPI_Ibcast, (void *buf, int count, mh_t dt, int root, mh_t comm, mh_t *req),
           (buf, count, dt, root, comm, req), comm, a_bcast(&r, c, count, dt, root))

WRAP_ICOLL(MPI_Ireduce,
           (const void *sbuf, void *rbuf, int count, mh_t dt, mh_t op, int root, mh_t comm,
            mh_t *req),
           (sbuf, rbuf, count, dt, op, root, comm, req), comm, a_reduce(&r, c, count, dt, root))

WRAP_ICOLL(MPI_Iallreduce,
           (const void *sbuf, void *rbuf, int count, mh_t dt, mh_t op, mh_t comm, mh_t *req),
           (sbuf, rbuf, count, dt, op, comm, req), comm, a_allreduce(&r, c, count, dt))

WRAP_ICOLL(MPI_Iscan,
           (const void *sbuf, void *rbuf, int count, mh_t dt, mh_t op, mh_t comm, mh_t *req),
           (sbuf, rbuf, count, dt, op, comm, req), comm, a_allreduce(&r, c, count, dt))

WRAP_ICOLL(MPI_Iexscan,
           (const void *sbuf, void *rbuf, int count, mh_t dt, mh_t op, mh_t comm, mh_t *req),
           (sbuf, rbuf, count, dt, op, comm, req), comm, a_allreduce(&r, c, count, dt))

WRAP_ICOLL(MPI_Ireduce_scatter_block,
           (const void *sbuf, void *rbuf, int rcount, mh_t dt, mh_t op, mh_t comm, mh_t *req),
           (sbuf, rbuf, rcount, dt, op, comm, req), comm, a_reduce_scatter(&r, c, rcount, NULL, dt))

WRAP_ICOLL(MPI_Ireduce_scatter,
           (const void *sbuf, void *rbuf, const int *rcounts, mh_t dt, mh_t op, mh_t comm,
            mh_t *req),
           (sbuf, rbuf, rcounts, dt, op, comm, req), comm, a_reduce_scatter(&r, c, 0, rcounts, dt))

WRAP_ICOLL(MPI_Igather,
           (const void *sbuf, int scount, mh_t stype, void *rbuf, int rcount, mh_t rtype, int root,
            mh_t comm, mh_t *req),
           (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req), comm,
           a_gather(&r, c, sbuf, scount, stype, rcount, NULL, rtype, root, 0))

WRAP_ICOLL(MPI_Igatherv,
           (const void *sbuf, int scount, mh_t stype, void *rbuf, const int *rcounts,
            const int *displs, mh_t rtype, int root, mh_t comm, mh_t *req),
           (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm, req), comm,
           a_gather(&r, c, sbuf, scount, stype, 0, rcounts, rtype, root, 0))

WRAP_ICOLL(MPI_Iallgather,
           (const void *sbuf, int scount, mh_t stype, void *rbuf, int rcount, mh_t rtype, mh_t comm,
            mh_t *req),
           (sbuf, scount, stype, rbuf, rcount, rtype, comm, req), comm,
           a_gather(&r, c, sbuf, scount, stype, rcount, NULL, rtype, 0, 1))

WRAP_ICOLL(MPI_Iallgatherv,
           (const void *sbuf, int scount, mh_t stype, void *rbuf, const int *rcounts,
            const int *displs, mh_t rtype, mh_t comm, mh_t *req),
           (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req), comm,
           a_gather(&r, c, sbuf, scount, stype, 0, rcounts, rtype, 0, 1))

WRAP_ICOLL(MPI_Iscatter,
           (const void *sbuf, int scount, mh_t stype, void *rbuf, int rcount, mh_t rtype, int root,
            mh_t comm, mh_t *req),
           (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, req), comm,
           a_scatter(&r, c, scount, NULL, stype, rbuf, rcount, rtype, root))

WRAP_ICOLL(MPI_Iscatterv,
           (const void *sbuf, const int *scounts, const int *displs, mh_t stype, void *rbuf,
            int rcount, mh_t rtype, int root, mh_t comm, mh_t *req),
           (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req), comm,
           a_scatter(&r, c, 0, scounts, stype, rbuf, rcount, rtype, root))

WRAP_ICOLL(MPI_Ialltoall,
           (const void *sbuf, int scount, mh_t stype, void *rbuf, int rcount, mh_t rtype, mh_t comm,
            mh_t *req),
           (sbuf, scount, stype, rbuf, rcount, rtype, comm, req), comm,
           a_alltoall(&r, c, sbuf, scount, NULL, stype, NULL, rcount, NULL, rtype, NULL))

WRAP_ICOLL(MPI_Ialltoallv,
           (const void *sbuf, const int *scounts, const int *sdispls, mh_t stype, void *rbuf,
            const int *rcounts, const int *rdispls, mh_t rtype, mh_t comm, mh_t *req),
           (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm, req), comm,
           a_alltoall(&r, c, sbuf, 0, scounts, stype, NULL, 0, rcounts, rtype, NULL))

WRAP_ICOLL(MPI_Ialltoallw,
           (const void *sbuf, const int *scounts, const int *sdispls, const mh_t *stypes,
            void *rbuf, const int *rcounts, const int *rdispls, const mh_t *rtypes, mh_t comm,
            mh_t *req),
           (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm, req), comm,
           a_alltoall(&r, c, sbuf, 0, scounts, 0, stypes, 0, rcounts, 0, rtypes))
