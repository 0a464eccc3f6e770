// SPDX-License-Identifier: MIT
/* Reports of `cuptrace stats`. Each report is a consumer of the resolved
 * events of every file (model/model.h), then renders tables. */
#ifndef CT_STATS_H
#define CT_STATS_H

#include "model/model.h"
#include "read/inputs.h"
#include "stats/table.h"
#include "util/pack.h"

struct nccl_log_steps;

/* Options of `cuptrace stats` that reports honour. */
struct stats_opts {
	int explicit_list; /* --report named the reports */
	int steps;	   /* --steps A-B given */
	int64_t step_lo, step_hi;
	/* --steps on NCCL logs: the lines that begin a step (--log-step-pattern
	 * compiled; NULL: the default pattern) and the option's text */
	const struct nccl_log_steps *log_steps;
	const char *log_step_pattern;
	int by_step;	  /* --by step (breakdown, steps) */
	int by_time;	  /* --by time (breakdown: busy per time bucket) */
	int by_shape;	  /* --by shape (torch_op_sum: per input shapes) */
	uint64_t min_gap; /* --min-gap, ns (gpu_gaps) */
	double flops_per_step; /* --flops-per-step N (0: not given) */
	int verbose;           /* --verbose: reports say how they ran, on stderr */
};

struct report {
	const char *name;
	const char *desc;
	void *(*begin)(const struct stats_opts *opts);
	void (*event)(void *st, struct tfile *t, const struct m_event *ev);
	/* Appends its tables to out (at most 4). */
	int (*end)(void *st, struct table **out);
	/* An input that is an NCCL_DEBUG log, not a trace (may be NULL). */
	void (*log)(void *st, const char *path);
	/* Follows --steps itself (by the step an operation was issued in);
	 * the others see only events that start inside the steps. */
	int own_steps;
	/* Files are read in parallel (collect.c): each file's events go to a
	 * part of its own, made by part(st) (NULL: begin(opts)); merge folds
	 * a part into st and frees it, parts in file order, so that the
	 * tables do not depend on how many workers read the files. */
	void (*merge)(void *st, void *part);
	void *(*part)(void *st);
	/* Reports that match events ACROSS files (nccl_skew; the matching
	 * itself is model/'s): with two files or more, collect.c has them
	 * read in lockstep (job/drive.c), a chunk of one file at a time, and
	 * after each chunk drain(st, part) hands st what the part has
	 * gathered so far, under a lock, in no fixed order of files (the
	 * tables must not depend on it). merge still comes once per file,
	 * after its last drain. */
	void (*drain)(void *st, void *part);
	/* The ranks of an MPI job (docs/parallel-tools.md): pack writes a
	 * file's part as bytes (on the rank that read the file; the part is
	 * merged after, as ever); unpack makes a part of them again on rank 0
	 * (st: its state, as part(st) takes it; in: the inputs, the same on
	 * every rank, so that a file goes as its index), which merge folds
	 * in, in file order. A report without them is not shared out: rank 0
	 * reads every file then. */
	void (*pack)(void *part, struct pack *b);
	void *(*unpack)(void *st, struct pack *b, struct inputs *in);
	/* Frees a part once packed (a rank above 0 keeps nothing of its
	 * files but their bytes). NULL: it is merged into the rank's state
	 * instead, which nothing reads (memory: that state grows). */
	void (*drop)(void *part);
};

extern const struct report report_nvtx_sum;
/* "domain:name" of an NVTX range, as nsys's reports name it (nvtx.c). */
void nvtx_range_label(const struct span *s, char *buf, size_t len);
extern const struct report report_cuda_gpu_kern_sum, report_cuda_gpu_mem_time_sum,
	report_cuda_api_sum;
extern const struct report report_nccl_sum, report_nccl_sizes, report_nccl_calls,
	report_nccl_ranks;
extern const struct report report_nvtx_gpu_proj_sum, report_cuda_gpu_mem_size_sum,
	report_breakdown, report_gpu_gaps, report_launch;
extern const struct report report_steps, report_nccl_skew;
extern const struct report report_nccl_hang; /* nccl_hang.c: rendering job/nccl_hang.c */
extern const struct report report_mpi_sum, report_mpi_skew, report_mpi_hang;
extern const struct report report_torch_op_sum, report_torch_mem;

#endif
