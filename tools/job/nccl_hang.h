// SPDX-License-Identifier: MIT
/* Hang diagnosis ACROSS trace files (ranks), of NCCL's or MPI's
 * collectives: which collectives did not
 * complete on every rank of their communicator, who never arrived, who
 * waited, what each rank was doing when its trace ended (the NVTX ranges
 * still open), and mismatches (ranks of one communicator waiting in
 * different operations; one collective called with different counts or
 * datatypes). Fed the model's events of every file in turn (NCCL
 * operation slices and the NVTX ranges a file left open); the matching of
 * ranks happens here, reports render the result (docs/ANALYSIS.md,
 * "nccl_hang").
 *
 * Memory: per (file, communicator) the last NH_KEEP collectives and the
 * highest sequence number entered per operation (about 8 KB), so a hang
 * is found from the tail of each rank's trace whatever its length; a
 * rank that enqueued more than NH_KEEP collectives after the one it is
 * stuck in is seen waiting in a later one. A collective is
 * "entered" by a rank whose file holds its task; "completed" when the GPU
 * finished it (nccl_op.gpu_done). Files where no collective ever shows
 * its end (no kernel-channel timers, no kernels) say nothing about
 * completion: only arrival is judged there. */
#ifndef CT_NCCL_HANG_H
#define CT_NCCL_HANG_H

#include "model/model.h"

#include <stddef.h>
#include <stdint.h>

#define NH_KEEP 256

struct nh_ranks {
	int64_t *v; /* ranks of the files (world ranks), ascending */
	size_t n;
};

/* A collective that some rank present never entered or never finished. */
struct nh_coll {
	uint64_t comm;
	const char *comm_name, *func;
	uint64_t seq;
	int64_t first_t; /* earliest entry, job timeline ns */
	struct nh_ranks entered, missing, incomplete;
	struct nh_ranks stopped; /* members whose capture had ended before it: not judged */
	int suspected; /* the hang watchdog flagged its communicator (CUPTRACE_HANG_TIMEOUT) */
	/* How long it was waited in: from the first entry of a rank that waited
	 * in it (incomplete) to the latest end such a rank's footer gives (-1:
	 * none has a footer; a file cut short ends at its last event, which
	 * says nothing of how long it waited). */
	int64_t waited;
};

/* A verdict says "hang" only where a rank waited at least this long (or
 * the files' CUPTRACE_HANG_TIMEOUT, where set; or how long is not known,
 * or the watchdog flagged it): shorter, the job was stopped while a collective
 * ran (a time limit), not stuck. */
#define NH_MIN_WAIT_NS 1000000000LL

/* NH_IDLE: a member that called no collective on the communicator (none
 * was waited for there). */
enum nh_state { NH_FINISHED, NH_WAITING, NH_NEVER_ARRIVED, NH_IDLE };

/* One rank on one communicator. */
struct nh_rank {
	int64_t rank;
	uint64_t comm;
	const char *comm_name;
	int64_t last_entered, last_completed; /* sequence numbers; -1 none (or not known) */
	enum nh_state state;
	const char *func; /* of the state (waiting, never arrived) */
	uint64_t seq;
	const char *ranges; /* NVTX ranges open at the end, "a > b"; "" none */
	int64_t open_for;   /* ns the innermost had been open; -1 none */
	int cut;            /* no footer (SIGKILL): its end is its last event, open_for a floor */
};

/* Ranks of one communicator that disagree: one row per group of ranks. */
struct nh_mismatch {
	uint64_t comm;
	const char *comm_name;
	const char *problem; /* "operation", "count", "datatype" */
	struct nh_ranks ranks;
	const char *func, *datatype;
	uint64_t seq, count;
};

struct nh_result {
	const char *verdict; /* one line; NULL when nothing was left incomplete */
	struct nh_coll *c;   /* most recent first */
	size_t nc;
	struct nh_rank *r; /* by rank, then communicator */
	size_t nr;
	struct nh_mismatch *m;
	size_t nm;
	size_t colls; /* collectives seen in all */
	/* Communicators with fewer files than ranks, e.g. "1 of the 4 ranks
	 * of world 5eed0001c0ffee00 had a file given": the others are not
	 * judged. NULL when every rank's file was given. */
	const char *partial;
};

struct nh;

struct nh *nh_new(void);
/* The same for MPI collectives (the mpi source's calls: mpi_hang): a
 * member is a rank whose file defines the communicator, a collective is
 * entered by a rank whose file holds its call (or its mpi_enter) and
 * completed when the call returned (a non-blocking one: when the call
 * that completed its request returned). */
struct nh *nh_new_mpi(void);
/* Events of file t, in the model's order, files one after another (a file
 * ends when the next one's first event or nh_finish comes). */
void nh_event(struct nh *h, struct tfile *t, const struct m_event *ev);
/* Folds src (fed files of its own, read after dst's) into dst as if dst
 * had been fed them; frees src. */
void nh_merge(struct nh *dst, struct nh *src);
/* A part (one file's, read to its end) as bytes for another process of an
 * MPI job, and back as a part to merge (nccl_hang_pack.c). */
struct pack;
void nh_pack(struct nh *h, struct pack *b);
struct nh *nh_unpack(int mpi, struct pack *b);
/* The analysis; valid until nh_free. */
const struct nh_result *nh_finish(struct nh *h);
void nh_free(struct nh *h);

/* "world 5eed0001c0ffee00": how tables and the verdict name a communicator. */
void nh_comm_label(char *buf, size_t n, const char *name, uint64_t hash);

#endif
