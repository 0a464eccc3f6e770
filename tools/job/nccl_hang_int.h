// SPDX-License-Identifier: MIT
/* Internals of the hang diagnosis: nccl_hang.c (what each file holds) ->
 * nccl_hang_match.c (ranks matched: nh_finish) -> nccl_hang_verdict.c
 * (the one-line verdict). */
#ifndef CT_NCCL_HANG_INT_H
#define CT_NCCL_HANG_INT_H

#include "job/nccl_hang.h"
#include "util/hmap.h"

#define NH_FUNCS 16 /* operations told apart per communicator */

struct nh_op { /* a collective as one rank entered it */
	uint16_t func, dtype;
	uint8_t done;
	uint64_t seq, count;
	int64_t t; /* entry (API call), job timeline */
};

struct nh_max {
	uint16_t func;
	uint64_t max; /* highest sequence number entered */
};

struct nh_rc { /* one file on one communicator */
	uint64_t comm;
	int suspected; /* the watchdog's hang_suspected came on it */
	uint16_t name;
	int64_t nranks; /* of the communicator */
	/* The latest entry of a collective it finished: one entered before
	 * and not shown finished did finish (NCCL runs a communicator's
	 * collectives in order), its ends were lost. */
	int64_t last_done_t;
	size_t file;
	struct nh_op ring[NH_KEEP]; /* the last NH_KEEP, by position n % NH_KEEP */
	uint64_t n;
	struct nh_max f[NH_FUNCS];
	unsigned nf;
};

struct nh_file {
	int64_t rank;
	int known;       /* some collective showed its end: completion is judged */
	int64_t cap_off; /* capture switched off for good (job ns), else INT64_MAX */
	char *ranges;    /* open at the end, outermost first; NULL none */
	int64_t open_for;
	int cut; /* no footer: the end is the last event's */
	int64_t end_t; /* the file's end, job timeline ns */
	size_t first_rc; /* its communicators: rc[first_rc..] up to the next file's */
};

struct nh_open {
	int64_t tid;
	uint64_t ts;
	int depth;
	uint16_t name;
};

struct nh {
	int mpi; /* MPI collectives (nh_new_mpi), not NCCL's */
	struct hmap pending; /* MPI: a non-blocking collective's call -> its op, until done */
	int64_t min_wait; /* ns: the files' CUPTRACE_HANG_TIMEOUT (the least), else NH_MIN_WAIT_NS */
	char **str;
	size_t nstr, strcap;
	struct hmap sidx;
	struct nh_rc **rc;
	size_t nrc, rccap;
	struct nh_file *f;
	size_t nf, fcap;
	/* the file being read */
	struct tfile *cur_t;
	size_t cur_file;
	struct nh_open *open;
	size_t nopen, opencap;
	uint64_t last_ts, cur_end;
	int64_t nccl_tid;
	size_t colls;
	struct nh_result res;
};

/* Closes the file being read (nh_finish calls it first). */
void nh_files_done(struct nh *h);
uint16_t nh_str(struct nh *h, const char *s, size_t len);
void nh_ranks_add(struct nh_ranks *r, int64_t v);
/* The verdict line of h->res (nccl_hang_verdict.c); NULL when nothing was
 * left incomplete. */
char *nh_verdict(const struct nh *h);

#endif
