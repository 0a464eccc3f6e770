// SPDX-License-Identifier: MIT
/* What a CPU thread was running at a given time: the innermost NVTX
 * push/pop range or CUDA call that held it, among the thread's recent ones
 * (gpu_gaps asks it what the thread that launched the work after a GPU
 * idle gap was doing when the gap began). A consumer feeds it the model's
 * events; it keeps, per thread, the last CPU_AT_KEEP ranges and calls
 * (memory stays flat in the length of the trace). Ranges still open when
 * asked are not known to it. */
#ifndef CT_CPU_AT_H
#define CT_CPU_AT_H

#include "model/model.h"

#define CPU_AT_KEEP 4096
#define CPU_AT_NAME 96

struct cpu_at;

struct cpu_range {
	uint64_t ts, end;
	int is_call; /* a CUDA call, else an NVTX range */
	char name[CPU_AT_NAME]; /* cut to fit */
};

struct cpu_at *cpu_at_new(void);
void cpu_at_free(struct cpu_at *c);
/* Takes NVTX push/pop ranges and CUDA calls on thread tracks; ignores the rest. */
void cpu_at_event(struct cpu_at *c, const struct m_event *ev);
/* The innermost range or call on thread tid with ts <= t < end: 1 and *out, else 0. */
int cpu_at_query(const struct cpu_at *c, int64_t tid, uint64_t t, struct cpu_range *out);

#endif
