// SPDX-License-Identifier: MIT
/* The resolved event model (docs/MODEL.md): the decoded records of one
 * trace file become tracks, slices, flows, instants and counters, with
 * every match made here and nowhere else (push/pop pairs and async ranges
 * in spans.c, CUDA calls to the GPU work they launched in model_gpu.c,
 * NCCL operations to their kernels in nccl_ops.c and model_nccl.c).
 * Outputs and reports are consumers of this stream: they format and
 * count, they never match. */
#ifndef CT_MODEL_H
#define CT_MODEL_H

#include "model/nccl_ops.h"
#include "model/spans.h"
#include "read/inputs.h"

#include <stdatomic.h>
#include <stdint.h>

enum m_track_kind {
	MT_THREAD,      /* a CPU thread of the rank (tid: the OS thread id) */
	MT_STREAM,      /* a CUDA stream of a GPU (tid: the stream id, never 0) */
	MT_STREAM_SYNC, /* the host's waits on one stream, beside the stream */
	MT_GPU_OTHER,   /* GPU work of no stream (context-wide syncs) */
	MT_NCCL,        /* a communicator's calls, in the rank's CPU process */
	MT_NCCL_GPU,    /* where the GPU ran a communicator's operations */
	MT_MPI,         /* a thread's MPI calls, beside it (model_mpi.c) */
};

/* A track: a row of slices that nest. It lives in the rank's CPU process
 * or, when on_gpu, in the process of GPU `device` of that rank. */
struct m_track {
	uint32_t id; /* dense in a file, from 1, in order of first sight */
	uint8_t kind, on_gpu;
	uint64_t device;
	int64_t tid;  /* its number inside its process; never 0 */
	int64_t sort; /* order inside its process */
	char *name; /* NUL-terminated; name_len bytes */
	size_t name_len;
	const struct nccl_comm *comm; /* MT_NCCL, MT_NCCL_GPU (NULL: unknown) */
	int64_t thread;               /* MT_MPI: the OS thread whose calls it holds */
};

enum m_type {
	ME_PROCESS, /* a GPU's process, at first sight and when its name is known */
	ME_TRACK,   /* a track, at first sight (threads: at the end, named) */
	ME_SLICE,   /* [ts, end] on track */
	ME_ASYNC,   /* a range that may end on another thread: track, end_track */
	ME_INSTANT, /* at ts on track (NULL: the whole process) */
	ME_COUNTER, /* a value of a GPU's process from ts on */
	ME_FLOW,    /* an arrow from (track, ts) to (flow.to, flow.to_ts) */
};

enum m_cat {
	MC_NVTX,       /* an NVTX push/pop or start/end range (span) */
	MC_STEP,       /* a step (span; span->id is its number) */
	MC_MARK,       /* an NVTX mark (span) */
	MC_CAPTURE,    /* capture switched on or off (span; span->id: on) */
	MC_KERNEL,     /* gpu */
	MC_MEMCPY,     /* gpu */
	MC_MEMSET,     /* gpu */
	MC_SYNC,       /* gpu: the host waited for the GPU */
	MC_RUNTIME,    /* api: a CUDA runtime call */
	MC_DRIVER,     /* api: a CUDA driver call */
	MC_GPU_MEMORY, /* counter: bytes of GPU memory allocated */
	MC_NCCL,       /* nccl: an operation's call (op set) */
	MC_NCCL_GROUP, /* nccl: the group call around members of a group (op: its first) */
	MC_NCCL_GPU,   /* nccl: GPU time of an operation (op), or of a fused kernel (op NULL) */
	MC_DROPS,      /* instant at the file's end: events the tracer dropped */
	MC_LAUNCH,     /* flow: a CUDA call to the GPU work it made */
	MC_NCCL_FLOW,  /* flow: an NCCL call to its GPU time or to its kernel */
	MC_GPU_ANNOTATION, /* an NVTX range's GPU work on one stream (span: the range's
	                    * name, depth; ts/end: the first start and last end of the
	                    * work launched inside it) */
	MC_HANG,       /* instant: the watchdog's hang_suspected, on the communicator's track */
	MC_TORCH_OP,    /* torch: a PyTorch operator (aten, custom, backward, TorchScript) */
	MC_TORCH_SCOPE, /* torch: a record_function scope */
	MC_TORCH_MEM,   /* tmem: an allocation or free by torch (instant on the thread), and
	                 * the allocator's total on that device after it (counter) */
	MC_FWDBWD,      /* flow: a forward operator to the backward one of its sequence number */
	MC_MPI,        /* mpi: an MPI call, on its thread's MPI track */
	MC_MPI_FLOW,   /* flow: a request's call to the call that completed it */
	MC_MPI_COMM,   /* instant (mpi): a communicator this rank is a member of, as defined */
	MC_MPI_HANG,   /* instant (mpi): the watchdog's mpi_hang, on the MPI track */
	MC_NONE,       /* processes and tracks */
	MC_N
};

extern const char *const m_cat_name[MC_N];

/* GPU activity (kernels, copies, memsets, syncs). */
struct m_gpu {
	uint64_t device, context, stream, corr;
	struct sref name; /* kernels: the demangled name (sid: the raw name's id) */
	uint64_t grid[3], block[3], regs, ssmem, dsmem, graph, node; /* kernels */
	int comm;                                                    /* an NCCL kernel */
	uint64_t bytes, kind, src_kind, dst_kind, src_dev, dst_dev;  /* copies (kind) */
	uint64_t value, mem_kind;                                    /* memsets */
	uint64_t sync_type, event;                                   /* syncs */
	/* Event syncs and stream waits: the stream the event was recorded
	 * on and that cudaEventRecord's correlation id; -1 when not known. */
	int64_t wait_stream, wait_corr;
	/* Of the device: SMs and warp size when its record was seen, else 0. */
	uint64_t sms, warp;
	/* The id of the PyTorch operator that launched it (its call's
	 * external correlation), 0 none. */
	uint64_t ext;
};

/* An MPI communicator as a file defines it (its latest definition). */
struct mpi_comm {
	uint64_t id, handle, size, remote, parent;
	int64_t rank;
	char name[64];
};

/* An MPI call (MC_MPI), a communicator (MC_MPI_COMM: comm alone), the
 * watchdog's mpi_hang (MC_MPI_HANG: comm, func, seq, req, in_flight).
 * Fields as the mpi_call record has them (libtrace/format/fields.h). */
struct m_mpi {
	const struct mpi_comm *comm; /* NULL: none, or its definition is missing */
	uint64_t comm_id, seq, count, bytes, recv_bytes, req;
	int64_t peer, world_peer, tag, status;
	struct sref func, datatype;
	uint64_t done;      /* requests this call completed */
	uint64_t in_flight; /* MC_MPI_HANG: ns */
	int unfinished;     /* entered, never returned: the file ends inside it */
};

/* A CUDA runtime or driver call. */
struct m_api {
	uint64_t corr, cbid, status;
	struct sref name;
	uint64_t ext; /* the PyTorch operator it was made in (external correlation), 0 none */
};

/* A PyTorch operator or record_function scope (MC_TORCH_OP, MC_TORCH_SCOPE),
 * on the track of the thread it began on. */
struct m_torch {
	uint64_t id;      /* from 1 in the process; what its CUDA work carries as ext */
	uint64_t seq;     /* torch's sequence number + 1; 0: none */
	uint64_t rf_tid;  /* torch's number of the thread that ran it */
	uint64_t fwd_tid; /* of a backward op: that number of its forward op's thread; 0 none */
	uint32_t scope;   /* CUPTRACE_TORCH_SCOPE_* (include/cuptrace/torch_abi.h) */
	/* Text as the file gave it (any bytes; empty when not recorded):
	 * dims "2,3;3" (inputs by ';', sizes by ','), types "float;float",
	 * stack: Python frames, innermost first, by ';'. */
	struct sref name, dims, types, stack;
	const struct m_track *end_track; /* the thread that ended it, when another; else NULL */
	/* The operators and scopes directly inside it on its thread (they
	 * came before it: each is written when it ends): their ids (valid
	 * during the call) and durations' sum, so self time = end - ts -
	 * child_ns; and what it allocated itself (torch_mem with its id). */
	const uint64_t *kids;
	size_t nkids;
	uint64_t child_ns;
	uint64_t allocs, alloc_bytes;
};

/* A torch allocation (bytes > 0) or free (bytes < 0) (MC_TORCH_MEM). */
struct m_tmem {
	uint64_t ptr;
	int64_t bytes;
	int64_t device; /* -1: the CPU, else the CUDA device */
	uint64_t allocated, reserved; /* the allocator's totals on the device after it */
	uint64_t op;                  /* the innermost operator open on the thread, 0 none */
};

struct m_event {
	uint8_t type, cat;
	const struct m_track *track;
	const struct m_track *end_track; /* ME_ASYNC: where the range ended */
	uint64_t ts, end; /* tracer clock of the file, ns */
	union {
		const struct span *span; /* MC_NVTX, MC_STEP, MC_MARK, MC_CAPTURE, MC_GPU_ANNOTATION */
		struct m_gpu gpu;
		struct m_api api;
		struct {
			const struct nccl_op *op;
			const struct nccl_plan *plan;
		} nccl;
		struct {
			const struct m_track *to;
			uint64_t to_ts;
			uint64_t id; /* unique in the file, from 1 */
			/* MC_LAUNCH: the call's end; the GPU work's end, category
			 * (MC_KERNEL, MC_MEMCPY, MC_MEMSET, MC_SYNC) and, for a
			 * kernel, its demangled name (len 0 when not known) */
			uint64_t from_end, to_end;
			uint8_t to_cat;
			struct sref name;
		} flow;
		struct { /* MC_GPU_ANNOTATION: span first, as in `span` above */
			const struct span *span_;
			uint64_t range_ts, range_end; /* the NVTX range on its thread */
			uint64_t ops;                 /* GPU operations in this part */
			uint32_t part, nparts;        /* parts (streams) handed out in a row */
			uint8_t torch;                /* of a record_function scope, not NVTX */
		} annot;
		struct m_torch torch; /* MC_TORCH_OP, MC_TORCH_SCOPE */
		struct m_tmem tmem;   /* MC_TORCH_MEM: ME_INSTANT on the thread's track, or
		                       * ME_COUNTER (track NULL) of the device's process */
		struct {
			uint64_t device;
			const char *name; /* the GPU's name, or NULL while unknown */
		} process;            /* ME_PROCESS */
		struct {
			uint64_t device;
			int64_t value;
			/* MC_GPU_MEMORY: the allocation or release that changed it
			 * (CUPTI's: op 1 allocation, 2 release; memory kind; stream
			 * all ones when not asynchronous) */
			uint64_t op, bytes, address, context, stream, mem_kind, corr;
		} counter; /* ME_COUNTER */
		const struct m_mpi *mpi; /* MC_MPI, MC_MPI_COMM, MC_MPI_HANG */
		uint64_t dropped;     /* MC_DROPS: all kinds (per kind: the file's drops) */
		struct {              /* MC_HANG */
			const struct nccl_comm *comm; /* NULL when its definition is missing */
			struct sref func;
			uint64_t seq, in_flight; /* ns it had been in flight */
			int has_seq;
		} hang;
	};
	const struct ct_event *rec; /* the record it came from, NULL when none */
};

/* The name every output gives an NCCL slice (MC_NCCL, MC_NCCL_GROUP,
 * MC_NCCL_GPU): the operation's function, "ncclGroup" for a group call,
 * "ncclGroup (N ops)" for a fused kernel's operations as a whole. Returns
 * buf or a constant string. */
const char *m_nccl_name(const struct m_event *ev, char *buf, size_t cap);

/* A consumer: an output or a report. Files come one at a time per
 * consumer instance; begin_file/end_file bracket each. */
struct m_consumer {
	void (*begin_file)(void *ctx, struct tfile *t);
	void (*event)(void *ctx, const struct m_event *ev);
	void (*end_file)(void *ctx, struct tfile *t);
};

/* What a reader of a file follows as it is read (NULL: nothing). */
struct m_watch {
	_Atomic uint64_t *progress; /* records read, added 65536 at a time */
	/* When not NULL: called before the events of block `block` (from 1)
	 * whenever the block changes, and with the file's block count + 1
	 * before what the file's end produces, so that a reader that shares
	 * the file with others by blocks knows whose the events that follow
	 * are (job/drive.c). */
	void (*block)(void *ctx, uint64_t block);
	void *ctx;
};

/* Reads file t from where it stands to its end and hands its events to
 * the consumer. -1 when the file turned out corrupt (what came before the
 * damage was handed out; t->f.err says why), else 0. */
int model_file(struct tfile *t, const struct m_consumer *c, void *ctx, const struct m_watch *w);

/* model_file a piece at a time, for readers that keep several files in
 * step (job/drive.c's lockstep): open, then model_step reads at most
 * max records (1: more remain; 0: the file ended and its end was handed
 * out), model_close finishes what is not (-1: the file was corrupt). */
struct model_run;
struct model_run *model_open(struct tfile *t, const struct m_consumer *c, void *ctx,
                             const struct m_watch *w);
int model_step(struct model_run *r, uint64_t max);
int model_close(struct model_run *r);

#endif
