// SPDX-License-Identifier: MIT
/* Collectives matched ACROSS trace files (ranks): every rank's arrival at
 * one collective, keyed by (communicator hash, operation, sequence number;
 * NCCL numbers each operation of a communicator on its own). This is the
 * one place where events of different files are paired; reports call it.
 *
 * Memory holds a window: a collective waits here until every rank of its
 * communicator has reported it (nranks comes from the communicator), then
 * it is handed out and forgotten. How deep the window is depends on the
 * caller: files read one after another (clocks.c) hold one rank's
 * collectives; files read in lockstep (nccl_skew, job/drive.c) only
 * those in flight across ranks. `cap` bounds it: past it, the oldest
 * collective is handed out with the ranks it has. */
#ifndef CT_NCCL_MATCH_H
#define CT_NCCL_MATCH_H

#include <stddef.h>
#include <stdint.h>

#define NM_NONE INT64_MIN

struct nm_coll {
	uint64_t comm;         /* the communicator's hash */
	const char *comm_name; /* its name ("" when none) */
	const char *func;      /* "AllReduce", ... */
	uint64_t seq;
	int64_t step; /* as the first rank to report it had it; -1 none */
	int nranks;   /* of the communicator */
	int seen;     /* ranks that reported it */
	/* Per communicator rank: the time (job timeline, ns) or NM_NONE, and
	 * the process's rank (its file's). */
	const int64_t *t, *who;
};

typedef void (*nm_fn)(void *ctx, const struct nm_coll *c);

struct nm;

struct nm *nm_new(size_t cap, nm_fn fn, void *ctx);

/* Communicator rank crank (of nranks) of process `who` reached collective
 * (comm, func, seq) at time t. The strings are copied. */
struct nm_arrival {
	uint64_t comm, seq;
	const char *comm_name, *func;
	int nranks, crank;
	int64_t who, step, t;
	/* Which report counts when two disagree: the lowest order (the
	 * file's index) gives the collective its step, whatever order the
	 * reports come in (files read together reach the matcher in no fixed
	 * order; ties: the first), and a rank reported twice while the
	 * collective is held its time (once handed out, a later report
	 * starts a collective of its own). */
	int64_t order;
};
void nm_put(struct nm *m, const struct nm_arrival *a);
/* nm_put in the order of the calls (order 0). */
void nm_add(struct nm *m, uint64_t comm, const char *comm_name, int nranks, int crank,
            int64_t who, const char *func, uint64_t seq, int64_t step, int64_t t);
/* Hands out what is still waiting (some ranks never reported it) and
 * frees m. Returns how many were handed out incomplete in all. */
size_t nm_finish(struct nm *m);
/* The most collectives held at once so far. */
size_t nm_peak(const struct nm *m);

#endif
