/* Reports of `cuptrace stats`. Each report sees every file's spans (and,
 * for reports that need them, raw events) once, then renders tables. */
#ifndef CT_STATS_H
#define CT_STATS_H

#include "read/inputs.h"
#include "model/spans.h"
#include "report/table.h"

struct report {
	const char *name;
	const char *desc;
	void *(*begin)(void);
	void (*span)(void *st, struct tfile *t, const struct span *s); /* may be NULL */
	void (*event)(void *st, struct tfile *t, const struct ct_event *ev); /* may be NULL */
	/* Appends its tables to out (at most 4). */
	int (*end)(void *st, struct table **out);
	/* An input that is an NCCL_DEBUG log, not a trace (may be NULL). */
	void (*log)(void *st, const char *path);
	/* Follows --steps itself (by the step an operation was issued in);
	 * the others see only spans and events that start inside the steps. */
	int own_steps;
};

/* Options of `cuptrace stats` that reports honour. */
struct stats_opts {
	int explicit_list; /* --report named the reports */
	int steps;	   /* --steps A-B given */
	int64_t step_lo, step_hi;
};
extern struct stats_opts stats_opts;

extern const struct report report_nvtx_sum;
extern const struct report report_cuda_gpu_kern_sum, report_cuda_gpu_mem_time_sum,
	report_cuda_api_sum;
extern const struct report report_nccl_sum, report_nccl_sizes, report_nccl_ranks;

/* Text key helpers shared by reports: "domain:name" or "name". */
void range_label(const struct span *s, char *buf, size_t len);

#endif
