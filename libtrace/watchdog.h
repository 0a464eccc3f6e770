// SPDX-License-Identifier: MIT
/* The hang watchdog (CUPTRACE_HANG_TIMEOUT): the writer shows it the NCCL
 * records it encodes anyway (communicators, tasks, kernel channels and
 * their ends) and the MPI ones (communicators, collectives entered and
 * returned, requests completed), so it knows which operations are in
 * flight without adding anything to NCCL's callbacks or MPI's calls; at
 * each pass the writer asks for the oldest one in flight longer than the
 * timeout that was not reported yet, records hang_suspected (mpi_hang),
 * writes the file and prints one line. Only the
 * writer thread calls these. */
#ifndef CT_WATCHDOG_H
#define CT_WATCHDOG_H

#include "rec.h"

#include <stdint.h>

/* The text of an NCCL string handle (function names); set by the NCCL
 * source, which owns those handles. */
extern const char *(*_Atomic ct_watch_name_hook)(uint64_t handle);
/* The same for the MPI source's string handles (function names). */
extern const char *(*_Atomic ct_watch_mpi_name_hook)(uint64_t handle);

struct ct_watch_hit {
	uint64_t task, ctx, seq, func, ts, in_flight; /* func: a string handle */
	int has_seq;
	int tid;
	/* An MPI collective (ctx: the communicator's id, task: a non-blocking
	 * one's request, 0 for a blocking call): recorded as mpi_hang. */
	int mpi;
	char line[320]; /* "rank 2: AllReduce #37 of world 5eed... in flight for 30 s" */
};

/* Whether the watchdog is on (ct.cfg.hang_timeout > 0). */
int ct_watch_on(void);
/* An NCCL record (kinds CT_EV_NCCL_*) or an MPI one (mpi_comm, mpi_enter,
 * mpi_call, mpi_done) of thread tid, as the writer takes it. */
void ct_watch_record(int tid, const struct ct_rec *r);
/* The oldest operation in flight for longer than the timeout at `now`
 * and not reported yet: 1 and *hit (it is then reported), else 0. */
int ct_watch_due(uint64_t now, struct ct_watch_hit *hit);
void ct_watch_fork_child(void);

#endif
