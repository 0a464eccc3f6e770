// SPDX-License-Identifier: MIT
/* Field layouts of the CUPTI kinds (48-79): GPU activity and CUDA API calls
 * as libtrace/cupti_rec.c writes them and tools/chrome_cupti.c reads them.
 *
 * Field order matters for size on disk: the fields that change from one
 * record to the next (times, correlation id) come first and the ones that
 * repeat (device, stream, name, shape) last, so that zstd sees one literal
 * run and one long match per record.
 *
 * "end" is a TS field, not a DUR: both decode to the absolute end, but as
 * TS it also becomes the thread's last timestamp, so the next record's
 * start is stored as the gap after this one's end. Work on one stream and
 * calls of one thread follow each other, so that gap is small and regular
 * (a few bits) where start-to-start deltas carry every duration's jitter.
 *
 * Correlation ids are DELTA fields: they count up call after call, and as
 * plain varints their changing low byte costs about two bytes per record
 * after compression; as deltas from the previous record of the kind, a
 * few bits.
 *
 * Contract with the NCCL source: "kernel" has fields named ts, end, device,
 * context, stream, correlation and name; "cuda_api" has ts, end,
 * correlation and name. Tools find fields by name, not by position. */
#include "cuptrace/format.h"

#define TS CT_F_TS
#define DUR CT_F_DUR
#define U CT_F_U
#define SID CT_F_SID
#define STR CT_F_STR
#define DELTA CT_F_DELTA
#define K(kind) [(kind) - CT_EV_CUPTI_FIRST]

const struct ct_schema ct_schemas_cupti[CT_EV_CUPTI_END - CT_EV_CUPTI_FIRST] = {
	/* name: mangled, as CUPTI gives it; the tools demangle. */
	K(CT_EV_KERNEL) = {"kernel", 18,
			   {TS, TS, DELTA, U, U, U, SID, U, U, U, U, U, U, U, U, U, U, U},
			   {"ts", "end", "correlation", "device", "context", "stream", "name",
			    "grid_x", "grid_y", "grid_z", "block_x", "block_y", "block_z",
			    "registers", "static_smem", "dynamic_smem", "graph_id", "graph_node"}},
	/* copy_kind, src_kind, dst_kind: CUPTI's memcpy and memory kinds.
	 * src_device/dst_device differ from device for peer-to-peer copies. */
	K(CT_EV_MEMCPY) = {"memcpy", 15,
			   {TS, TS, DELTA, U, U, U, U, U, U, U, U, U, U, U, U},
			   {"ts", "end", "correlation", "bytes", "device", "context", "stream",
			    "copy_kind", "src_kind", "dst_kind", "src_device", "dst_device",
			    "flags", "graph_id", "graph_node"}},
	K(CT_EV_MEMSET) = {"memset", 11,
			   {TS, TS, DELTA, U, U, U, U, U, U, U, U},
			   {"ts", "end", "correlation", "bytes", "device", "context", "stream",
			    "value", "memory_kind", "graph_id", "graph_node"}},
	/* type: CUpti_ActivitySynchronizationType; event: CUDA event id. */
	K(CT_EV_SYNC) = {"sync", 7, {TS, TS, DELTA, U, U, U, U},
			 {"ts", "end", "correlation", "context", "stream", "type", "event"}},
	/* tid: OS thread id of the caller; api: 1 driver, 2 runtime (CUPTI's
	 * callback domains); status: the call's return code. */
	K(CT_EV_CUDA_API) = {"cuda_api", 8, {TS, TS, DELTA, U, SID, U, U, U},
			     {"ts", "end", "correlation", "tid", "name", "status", "api", "cbid"}},
	/* op: 1 allocation, 2 release (CUpti_ActivityMemoryOperationType). */
	K(CT_EV_GPU_MEMORY) = {"gpu_memory", 9, {TS, DELTA, U, U, U, U, U, U, U},
			       {"ts", "correlation", "op", "bytes", "address", "device", "context",
				"stream", "memory_kind"}},
	/* One per GPU, early in the file: what deviceProperties lists. */
	K(CT_EV_GPU_DEVICE) = {"gpu_device", 19,
			       {TS, U, STR, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, STR},
			       {"ts", "device", "name", "global_memory", "cc_major", "cc_minor",
				"sms", "max_threads_per_block", "max_warps_per_sm",
				"max_blocks_per_sm", "regs_per_block", "regs_per_sm",
				"smem_per_block", "smem_per_sm", "warp_size", "l2_cache",
				"core_clock_khz", "memory_bandwidth_kbs", "uuid"}},
	K(CT_EV_GPU_CONTEXT) = {"gpu_context", 4, {TS, U, U, U},
				{"ts", "context", "device", "null_stream"}},
	/* A cudaEventRecord (CUPTI's CUDA_EVENT record): the stream an event
	 * was recorded on, and the call's correlation id. CUPTI gives it no
	 * time, so it has no ts: the tools tie an event sync or stream wait to
	 * it (wait_on_stream, wait_on_cuda_event_record_corr_id). */
	K(CT_EV_CUDA_EVENT) = {"cuda_event", 4, {DELTA, U, U, U},
			       {"correlation", "context", "stream", "event"}},
	/* Never written as events: the bucket that CUPTI's own dropped-record
	 * count goes into (CUPTI does not say of which kind they were). */
	K(CT_EV_CUPTI_DROPPED) = {"cupti_dropped", 1, {TS}, {"ts"}},
};
