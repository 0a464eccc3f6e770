// SPDX-License-Identifier: MIT
#include "rankenv.h"
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One launcher family per row: the variables of its rank, local rank, size
 * and local size, each value's names in the order tried. The first family
 * whose rank variable is set gives the rank, so one launcher's rank is
 * never taken for another's (torchrun's RANK under srun's SLURM_PROCID).
 * A value that family lacks comes from another family that gives the same
 * rank: Cray's PALS sets PMI_RANK with no MPI_LOCALRANKID, and its local
 * rank is PALS_LOCAL_RANKID (or Cray PMI's PMI_LOCAL_RANK). */
#define NAMES 3
static const struct family {
	const char *rank, *local[NAMES], *size[NAMES], *local_size[NAMES];
} families[] = {
	{"OMPI_COMM_WORLD_RANK", {"OMPI_COMM_WORLD_LOCAL_RANK"}, {"OMPI_COMM_WORLD_SIZE"},
	 {"OMPI_COMM_WORLD_LOCAL_SIZE"}},
	{"PMIX_RANK", {"PMIX_LOCAL_RANK"}, {"PMIX_SIZE"}, {"PMIX_LOCAL_SIZE"}},
	{"PMI_RANK", {"MPI_LOCALRANKID", "PMI_LOCAL_RANK"}, {"PMI_SIZE"},
	 {"MPI_LOCALNRANKS", "PMI_LOCAL_SIZE"}},
	{"SLURM_PROCID", {"SLURM_LOCALID"}, {"SLURM_NTASKS"}, {"SLURM_NTASKS_PER_NODE"}},
	{"RANK", {"LOCAL_RANK"}, {"WORLD_SIZE"}, {"LOCAL_WORLD_SIZE"}},
	{"PALS_RANKID", {"PALS_LOCAL_RANKID"}, {"PALS_SIZE"}, {"PALS_LOCAL_SIZE"}},
	{"MV2_COMM_WORLD_RANK", {"MV2_COMM_WORLD_LOCAL_RANK"}, {"MV2_COMM_WORLD_SIZE"},
	 {"MV2_COMM_WORLD_LOCAL_SIZE"}},
	{"FLUX_TASK_RANK", {"FLUX_TASK_LOCAL_ID"}, {"FLUX_JOB_SIZE"}, {NULL}},
};
#define NFAMILIES (sizeof families / sizeof *families)
#define TORCH_FAMILY 4

static long num(const char *(*get)(const char *), const char *name)
{
	const char *s = name ? get(name) : NULL;
	if (!s || !isdigit((unsigned char)*s))
		return -1;
	errno = 0;
	char *end;
	long v = strtol(s, &end, 10);
	/* Node counts may come as "4(x2)" (Slurm's per-node lists); the leading number is
	 * what this node runs. */
	if (errno || (*end && *end != '('))
		return -1;
	return v;
}

/* The first of names that is set. */
static long first(const char *(*get)(const char *), const char *const names[NAMES])
{
	for (int i = 0; i < NAMES && names[i]; i++) {
		long v = num(get, names[i]);
		if (v >= 0)
			return v;
	}
	return -1;
}

/* A value of the chosen family f, else of a family that gives the same
 * rank. which: offsetof the names in struct family. */
static long value(const char *(*get)(const char *), const struct family *f, long rank,
		  size_t which)
{
	long v = first(get, (const char *const *)((const char *)f + which));
	for (size_t i = 0; v < 0 && i < NFAMILIES; i++)
		if (&families[i] != f && num(get, families[i].rank) == rank)
			v = first(get, (const char *const *)((const char *)&families[i] + which));
	return v;
}

static void take(struct ct_rankinfo *ri, const struct family *f, const char *(*get)(const char *))
{
	ri->rank = num(get, f->rank);
	ri->local_rank = value(get, f, ri->rank, offsetof(struct family, local));
	ri->world_size = value(get, f, ri->rank, offsetof(struct family, size));
	ri->local_size = value(get, f, ri->rank, offsetof(struct family, local_size));
	ri->source = f->rank;
}

void ct_rank_detect(struct ct_rankinfo *ri, const char *(*get)(const char *))
{
	ri->rank = ri->local_rank = ri->world_size = ri->local_size = -1;
	ri->source = "";
	/* torchrun workers inherit the variables of the srun or mpiexec that
	 * started torchrun itself; their own rank is RANK. */
	if (get("TORCHELASTIC_RUN_ID") && num(get, "RANK") >= 0) {
		take(ri, &families[TORCH_FAMILY], get);
		return;
	}
	for (size_t i = 0; i < NFAMILIES; i++) {
		if (num(get, families[i].rank) >= 0) {
			take(ri, &families[i], get);
			return;
		}
	}
}

int ct_ranks_decide(const struct ct_rankset *s, const struct ct_rankinfo *ri, char *why,
		    size_t wlen)
{
	if (s->all)
		return 1;
	if (ri->rank < 0) /* no launcher: a lone process */
		return ct_rankset_has(s, 0, 0);
	if (s->local && ri->local_rank < 0) {
		snprintf(why, wlen,
			 "rank %ld (%s) has no local rank here: no launcher variable gives it "
			 "(PALS_LOCAL_RANKID, PMI_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID, ...)",
			 ri->rank, ri->source);
		return -1;
	}
	return ct_rankset_has(s, ri->rank, ri->local_rank);
}

const char *ct_job_id(const char *(*get)(const char *))
{
	static const char *const vars[] = {CT_RUN_VAR,     "SLURM_JOB_ID",   "PBS_JOBID",
	                                   "FLUX_JOB_ID",  "PMIX_NAMESPACE", "TORCHELASTIC_RUN_ID"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *v = get(vars[i]);
		if (v && *v)
			return v;
	}
	return NULL;
}
