// SPDX-License-Identifier: MIT
/* State shared by the parts of the injected library. */
#ifndef CT_TRACE_H
#define CT_TRACE_H

#include "config.h"
#include "rankenv.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>

#define CT_API __attribute__((visibility("default")))

struct ct_state {
	int active; /* this process traces: config valid and rank selected */
	struct ct_config cfg;
	struct ct_rankinfo rank;
	char host[256];
	char self_path[PATH_MAX]; /* absolute path of libcuptrace.so */
	char *cmdline;
	size_t cmdline_len;
	uint64_t rt_anchor, mono_anchor;
	int pid;
	int forked_from; /* the traced process this one was forked from, 0: none */
	_Atomic uint64_t truncated_strings; /* NVTX messages cut to fit (nvtx.c) */
	/* The process's rank in its largest NCCL communicator, for the footer:
	 * nranks << 32 | rank, 0 before any (nccl.c; a forked child's is 0) */
	_Atomic uint64_t nccl_rank;
};

extern struct ct_state ct;

/* Once per process: fills `ct` (init.c). lifecycle.c's ct_start calls it;
 * the entry points call ct_start. Only the first call does work. */
void ct_init(void);

#endif
