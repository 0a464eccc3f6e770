// SPDX-License-Identifier: MIT
#include "rankenv.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One launcher family per row: its rank, local rank, size and local size
 * variables. The first family whose rank variable is set wins, so the
 * variables of one launcher are never mixed with another's. */
static const struct family {
	const char *rank, *local, *size, *local_size;
} families[] = {
	{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
	 "OMPI_COMM_WORLD_LOCAL_SIZE"},
	{"PMIX_RANK", "PMIX_LOCAL_RANK", "PMIX_SIZE", "PMIX_LOCAL_SIZE"},
	{"PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS"},
	{"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NTASKS_PER_NODE"},
	{"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"},
	{"PALS_RANKID", "PALS_LOCAL_RANKID", "PALS_SIZE", "PALS_LOCAL_SIZE"},
	{"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_SIZE",
	 "MV2_COMM_WORLD_LOCAL_SIZE"},
	{"FLUX_TASK_RANK", "FLUX_TASK_LOCAL_ID", "FLUX_JOB_SIZE", NULL},
};
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

static void take(struct ct_rankinfo *ri, const struct family *f, const char *(*get)(const char *))
{
	ri->rank = num(get, f->rank);
	ri->local_rank = num(get, f->local);
	ri->world_size = num(get, f->size);
	ri->local_size = num(get, f->local_size);
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
	for (size_t i = 0; i < sizeof families / sizeof *families; i++) {
		if (num(get, families[i].rank) >= 0) {
			take(ri, &families[i], get);
			return;
		}
	}
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
