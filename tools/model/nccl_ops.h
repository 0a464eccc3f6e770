// SPDX-License-Identifier: MIT
/* Joins the NCCL events of one trace file into operations: each task
 * (a collective or a send/recv as NCCL scheduled it) with its API call,
 * its group, the kernel launch of its plan, its GPU time from the
 * kernel-channel timers and, when CUPTI recorded kernels, the NCCL kernel
 * that ran it. Operations are handed out one plan (one kernel launch) at
 * a time, once nothing has touched the plan for a while, or when too many
 * records are held (oldest first), or at the end, so memory holds a
 * window of the trace, not all of it. */
#ifndef CT_NCCL_OPS_H
#define CT_NCCL_OPS_H

#include "dec.h"

#include <stddef.h>
#include <stdint.h>

#define NCCL_NAME 32

struct nccl_comm {
	uint64_t ctx, hash;
	char name[64];
	int64_t rank, nranks, nnodes;
	unsigned abi;
	int index; /* order of definition in the file, from 0 */
};

struct nccl_op {
	uint64_t id;                  /* the task's handle */
	const struct nccl_comm *comm; /* NULL when the definition is missing */
	char func[NCCL_NAME], datatype[NCCL_NAME], algo[NCCL_NAME], proto[NCCL_NAME];
	int is_p2p;
	uint64_t count;     /* as passed to the API */
	unsigned type_size; /* 0 when the datatype is unknown */
	uint64_t bytes;     /* message size as nccl-tests counts it */
	int64_t root, peer; /* -1 when it does not apply */
	uint64_t seq;       /* per communicator and operation; has_seq */
	int has_seq;
	unsigned channels, warps;
	uint64_t stream;
	int64_t rank; /* in its communicator, -1 unknown */
	int64_t tid;  /* thread of the API call (or of the task) */
	/* Tracer clock; 0 = unknown. Enqueue: from the API call to the end
	 * of the kernel launch that carried it. */
	uint64_t api_start, api_end, enqueue_start, enqueue_end;
	uint64_t gpu_start, gpu_end;         /* mapped onto the tracer clock */
	uint64_t gpu_raw_start, gpu_raw_end; /* NCCL's GPU timer */
	unsigned gpu_channels;               /* channels that reported */
	/* The GPU finished it: every channel that started reported its end,
	 * or the CUPTI kernel that ran it ended. 0 when the file does not say
	 * (no channel timers, no kernel) or it never finished (a hang). */
	int gpu_done;
	/* Its group call (outermost ncclGroupStart..End, or the implicit
	 * one of a lone call). */
	uint64_t group;
	uint64_t group_start, group_end;
	unsigned group_size;  /* API calls in the group */
	unsigned group_depth; /* 1: implicit group */
	int group_first;      /* first operation handed out for this group */
	int64_t step;         /* -1: before the first step */
};

struct nccl_kernel {
	uint64_t ts, end, device, context, stream, correlation;
	char *name;
};

struct nccl_plan {
	const struct nccl_comm *comm;
	uint64_t id, launch, launch_start, launch_end, stream;
	int has_kernel;
	struct nccl_kernel kernel;
	uint64_t gpu_start, gpu_end; /* over its operations; 0 unknown */
	struct nccl_op *ops;         /* by GPU start, then API start */
	size_t n;
};

typedef void (*nccl_plan_fn)(void *ctx, const struct nccl_plan *p);

struct nccl_ops;

struct nccl_ops *nccl_ops_new(nccl_plan_fn fn, void *ctx);
void nccl_ops_free(struct nccl_ops *e);
/* Any event of the file; what is not NCCL, a step or a kernel is ignored. */
void nccl_ops_event(struct nccl_ops *e, const struct ct_event *ev);
/* Hands out everything still held. */
void nccl_ops_finish(struct nccl_ops *e);

/* Steps before the first step record are step 0, unless the file took its
 * steps from an NVTX range (then they are in no step). */
void nccl_ops_step_range(struct nccl_ops *e, int on);
/* Whether a file's configuration names a step range. */
int nccl_step_range_of(const struct ct_header *h);

/* Communicators defined so far. */
size_t nccl_ops_ncomms(const struct nccl_ops *e);
const struct nccl_comm *nccl_ops_comm(const struct nccl_ops *e, size_t i);

/* Test hook: how long (trace ns) a plan must be quiet before it is handed
 * out. */
void nccl_ops_horizon(struct nccl_ops *e, uint64_t ns);
/* Test hook: how many nodes (calls, tasks, plans, launches, channels) are
 * held before the oldest plans are handed out, quiet or not. */
void nccl_ops_hold(struct nccl_ops *e, size_t nodes);

#endif
