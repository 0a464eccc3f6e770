// SPDX-License-Identifier: MIT
/* Rank, local rank and world size from the launcher's environment. */
#ifndef CT_RANKENV_H
#define CT_RANKENV_H

#include <stddef.h>

struct ct_rankinfo {
	long rank, local_rank, world_size, local_size; /* -1 = unknown */
	const char *source;			       /* the variable rank came from, or "" */
};

void ct_rank_detect(struct ct_rankinfo *ri, const char *(*get)(const char *));

struct ct_rankset;
/* Whether this process traces under CUPTRACE_RANKS: 1 yes, 0 no, -1 when
 * it cannot be told (why says so): a node-local set where the launcher
 * gives a rank but no local rank (taking it for 0 would make every rank
 * local rank 0). A process without a launcher is rank 0, local rank 0. */
int ct_ranks_decide(const struct ct_rankset *s, const struct ct_rankinfo *ri, char *why,
		    size_t wlen);

/* Set by `cuptrace run --stats/--report` for the processes it starts (not
 * a setting: no CUPTRACE_ prefix): the run its files belong to. */
#define CT_RUN_VAR "_CUPTRACE_RUN"

/* The job a process belongs to, for the header's job id: CT_RUN_VAR, else
 * the launcher's job id (Slurm, PBS, Flux, PMIx, torchelastic); NULL none. */
const char *ct_job_id(const char *(*get)(const char *));

#endif
