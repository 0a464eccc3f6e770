// SPDX-License-Identifier: MIT
/* The tools as ranks of an MPI job (docs/parallel-tools.md): whether this
 * process is one of N > 1 ranks of a launcher (its variables), the MPI
 * library found at run time (dlopen; never linked, never needed
 * otherwise) and the handful of calls the tools make: init, rank and size,
 * bytes sent and received point to point, finalize. Open MPI and MPICH
 * (and those built on it) are told apart at run time: their handles
 * differ (a pointer to a global in Open MPI, an int constant in MPICH). */
#ifndef CT_MPIRT_H
#define CT_MPIRT_H

#include <stddef.h>

/* What mpirt_start decided for this process. */
enum {
	MPIRT_SERIAL = 0, /* no launcher, one rank: the command as ever */
	MPIRT_RANKS = 1,  /* N > 1 ranks with MPI up: the work is shared */
	MPIRT_IDLE = 2,   /* N > 1 but no MPI library: a rank above 0, which
	                     exits 0 quietly while rank 0 runs alone */
};

/* Called once, before the command parses its options. With N > 1 ranks
 * and MPI found, initialises MPI, and on ranks above 0 silences stdout
 * and the tools' lines on stderr (rank 0 says everything, once). Without
 * the library: one warning (rank 0) and MPIRT_SERIAL on rank 0. */
int mpirt_start(void);
/* Rank 0 runs the command alone (one that does not share its work out):
 * from now on the job is of one rank, this one. */
void mpirt_alone(void);
/* The same, decided by the command (an output it does not share out):
 * on a rank above 0, 1 (it has nothing to do: exit 0); on rank 0, 0 and
 * the job is of one rank from now on. */
int mpirt_solo(void);
/* This process's rank and the job's ranks (0 and 1 when serial or alone). */
int mpirt_rank(void);
int mpirt_size(void);
/* The files [*lo, *hi) of n that this rank reads: file i is rank
 * i * size / n's, so that each rank's are contiguous, in file order. */
void mpirt_share(size_t n, size_t *lo, size_t *hi);
/* The same of another rank's. */
void mpirt_share_of(int rank, size_t n, size_t *lo, size_t *hi);
/* n bytes to rank `to`; the receiver learns the length. 0, or -1. */
int mpirt_send(int to, const void *buf, size_t n);
/* The next bytes from rank `from` into *buf (malloc'd) and *n. 0, or -1. */
int mpirt_recv(int from, void **buf, size_t *n);
/* The same bytes on every rank: rank 0's buf (n bytes) to all the
 * others, whose *buf and *n are set (malloc'd). 0, or -1. */
int mpirt_bcast(void **buf, size_t *n);
/* Every rank waits for the others. */
void mpirt_barrier(void);
/* Ends MPI (where started); returns rc for main to return. */
int mpirt_end(int rc);

#endif
