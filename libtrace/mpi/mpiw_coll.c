// SPDX-License-Identifier: MIT
/* Blocking collectives (mpiw_args.h): each takes its communicator's next
 * sequence number, writes mpi_enter as it is entered (it waits for the
 * other members) and its mpi_call when it returns, with what this
 * process sends and receives as its arguments describe. */
#include "mpiw_args.h"

WRAP_COLL(MPI_Barrier, (mh_t comm), (comm), comm, (void)c)

WRAP_COLL(MPI_Bcast, (void *buf, int count, mh_t dt, int root, mh_t comm),
          (buf, count, dt, root, comm), comm, a_bcast(&r, c, count, dt, root))
WRAP_COLL(MPI_Bcast_c, (void *buf, mpi_count count, mh_t dt, int root, mh_t comm),
          (buf, count, dt, root, comm), comm, a_bcast(&r, c, count, dt, root))

WRAP_COLL(MPI_Reduce,
          (const void *sbuf, void *rbuf, int count, mh_t dt, mh_t op, int root, mh_t comm),
          (sbuf, rbuf, count, dt, op, root, comm), comm, a_reduce(&r, c, count, dt, root))
WRAP_COLL(MPI_Reduce_c,
          (const void *sbuf, void *rbuf, mpi_count count, mh_t dt, mh_t op, int root, mh_t comm),
          (sbuf, rbuf, count, dt, op, root, comm), comm, a_reduce(&r, c, count, dt, root))

WRAP_COLL(MPI_Allreduce, (const void *sbuf, void *rbuf, int count, mh_t dt, mh_t op, mh_t comm),
          (sbuf, rbuf, count, dt, op, comm), comm, a_allreduce(&r, c, count, dt))
WRAP_COLL(MPI_Allreduce_c,
          (const void *sbuf, void *rbuf, mpi_count count, mh_t dt, mh_t op, mh_t comm),
          (sbuf, rbuf, count, dt, op, comm), comm, a_allreduce(&r, c, count, dt))
WRAP_COLL(MPI_Scan, (const void *sbuf, void *rbuf, int count, mh_t dt, mh_t op, mh_t comm),
          (sbuf, rbuf, count, dt, op, comm), comm, a_allreduce(&r, c, count, dt))
WRAP_COLL(MPI_Exscan, (const void *sbuf, void *rbuf, int count, mh_t dt, mh_t op, mh_t comm),
          (sbuf, rbuf, count, dt, op, comm), comm, a_allreduce(&r, c, count, dt))

WRAP_COLL(MPI_Reduce_scatter_block,
          (const void *sbuf, void *rbuf, int rcount, mh_t dt, mh_t op, mh_t comm),
          (sbuf, rbuf, rcount, dt, op, comm), comm, a_reduce_scatter(&r, c, rcount, NULL, dt))
WRAP_COLL(MPI_Reduce_scatter,
          (const void *sbuf, void *rbuf, const int *rcounts, mh_t dt, mh_t op, mh_t comm),
          (sbuf, rbuf, rcounts, dt, op, comm), comm, a_reduce_scatter(&r, c, 0, rcounts, dt))

WRAP_COLL(MPI_Gather,
          (const void *sbuf, int scount, mh_t stype, void *rbuf, int rcount, mh_t rtype, int root,
           mh_t comm),
          (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), comm,
          a_gather(&r, c, sbuf, scount, stype, rcount, NULL, rtype, root, 0))
WRAP_COLL(MPI_Gatherv,
          (const void *sbuf, int scount, mh_t stype, void *rbuf, const int *rcounts,
           const int *displs, mh_t rtype, int root, mh_t comm),
          (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm), comm,
          a_gather(&r, c, sbuf, scount, stype, 0, rcounts, rtype, root, 0))
WRAP_COLL(MPI_Allgather,
          (const void *sbuf, int scount, mh_t stype, void *rbuf, int rcount, mh_t rtype, mh_t comm),
          (sbuf, scount, stype, rbuf, rcount, rtype, comm), comm,
          a_gather(&r, c, sbuf, scount, stype, rcount, NULL, rtype, 0, 1))
WRAP_COLL(MPI_Allgatherv,
          (const void *sbuf, int scount, mh_t stype, void *rbuf, const int *rcounts,
           const int *displs, mh_t rtype, mh_t comm),
          (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm), comm,
          a_gather(&r, c, sbuf, scount, stype, 0, rcounts, rtype, 0, 1))

WRAP_COLL(MPI_Scatter,
          (const void *sbuf, int scount, mh_t stype, void *rbuf, int rcount, mh_t rtype, int root,
           mh_t comm),
          (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), comm,
          a_scatter(&r, c, scount, NULL, stype, rbuf, rcount, rtype, root))
WRAP_COLL(MPI_Scatterv,
          (const void *sbuf, const int *scounts, const int *displs, mh_t stype, void *rbuf,
           int rcount, mh_t rtype, int root, mh_t comm),
          (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm), comm,
          a_scatter(&r, c, 0, scounts, stype, rbuf, rcount, rtype, root))

WRAP_COLL(MPI_Alltoall,
          (const void *sbuf, int scount, mh_t stype, void *rbuf, int rcount, mh_t rtype, mh_t comm),
          (sbuf, scount, stype, rbuf, rcount, rtype, comm), comm,
          a_alltoall(&r, c, sbuf, scount, NULL, stype, NULL, rcount, NULL, rtype, NULL))
WRAP_COLL(MPI_Alltoallv,
          (const void *sbuf, const int *scounts, const int *sdispls, mh_t stype, void *rbuf,
           const int *rcounts, const int *rdispls, mh_t rtype, mh_t comm),
          (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm), comm,
          a_alltoall(&r, c, sbuf, 0, scounts, stype, NULL, 0, rcounts, rtype, NULL))
WRAP_COLL(MPI_Alltoallw,
          (const void *sbuf, const int *scounts, const int *sdispls, const mh_t *stypes, void *rbuf,
           const int *rcounts, const int *rdispls, const mh_t *rtypes, mh_t comm),
          (sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm), comm,
          a_alltoall(&r, c, sbuf, 0, scounts, 0, stypes, 0, rcounts, 0, rtypes))
