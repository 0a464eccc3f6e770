// SPDX-License-Identifier: MIT
/* Rank, local rank and world size from the launcher's environment. */
#ifndef CT_RANKENV_H
#define CT_RANKENV_H

struct ct_rankinfo {
	long rank, local_rank, world_size, local_size; /* -1 = unknown */
	const char *source;			       /* the variable rank came from, or "" */
};

void ct_rank_detect(struct ct_rankinfo *ri, const char *(*get)(const char *));

/* Set by `cuptrace run --stats/--report` for the processes it starts (not
 * a setting: no CUPTRACE_ prefix): the run its files belong to. */
#define CT_RUN_VAR "_CUPTRACE_RUN"

/* The job a process belongs to, for the header's job id: CT_RUN_VAR, else
 * the launcher's job id (Slurm, PBS, Flux, PMIx, torchelastic); NULL none. */
const char *ct_job_id(const char *(*get)(const char *));

#endif
