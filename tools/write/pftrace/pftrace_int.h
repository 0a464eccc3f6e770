// SPDX-License-Identifier: MIT
/* Internals shared by the .pftrace writer's parts: pftrace.c (packets,
 * interning, events), pftrace_tracks.c (tracks' ids and lanes),
 * pftrace_args.c (each category's args as debug annotations), pftrace_seq.c,
 * pftrace_pack.c, pftrace_file.c.
 *
 * How the writer is laid out. Perfetto TrackEvent protobuf from the
 * resolved events of the model: a consumer that formats, like the Chrome
 * writer it mirrors (names,
 * args, tracks and their order are the JSON's). Field numbers are those of
 * Perfetto's protos/perfetto/trace (trace_packet.proto, track_event/).
 *
 * - Every (file, share) is one trusted packet sequence. Its first packet
 *   clears the incremental state (sequence_flags) and sets the sequence's
 *   TracePacketDefaults: timestamps on clock 64, events without a track_uuid
 *   on the file's first track (pftrace_seq.c). Each track (and the flow
 *   instants of each track, the async ranges, the counters) gets an
 *   incremental clock of its own, sequence-scoped ids 64-127, each started
 *   by a ClockSnapshot pairing it with BOOTTIME at the file's start: a
 *   packet's timestamp is the delta from the last one on its clock (1-3
 *   bytes instead of 4-5), the clock named (timestamp_clock_id) unless it
 *   is 64. A packet that would go back in time on its clock (an NVTX range
 *   is handed after the ranges it holds) gives its absolute time on
 *   BOOTTIME instead. Every later packet carries SEQ_NEEDS_INCREMENTAL_STATE,
 *   as trace_packet.proto asks of sequences with defaults. Event names,
 *   categories and arg names are interned on first use (interned_data in
 *   the packet that needs them).
 * - Packets travel in chunks of 256 KB of whole packets (pftrace_pack.c),
 *   each a zstd_compressed_packets frame or, while the output stays within
 *   half the protobuf, plain; the head (the files' processes) is plain.
 * - Tracks: a process per rank (pftrace_head) and per GPU of a rank, a
 *   thread track per CPU thread, named tracks under the processes for
 *   streams, syncs and NCCL communicators, a counter track per GPU.
 *   child_ordering EXPLICIT with sibling_order_rank keeps the JSON's order.
 * - A slice is a SLICE_BEGIN and a SLICE_END packet; overlapping slices
 *   go to lane tracks (pftrace_tracks.c); args: pftrace_args.c.
 * - Flows: the model hands a flow right after the slice of one of its ends;
 *   the flow id is added to that slice's event (still the last packet
 *   written); the other end, written long before, gets an instant with the
 *   flow id.
 * Lane choices use every event of the file, not only this share's, so that
 * all shares choose alike. */
#ifndef CT_PFTRACE_INT_H
#define CT_PFTRACE_INT_H

#include "model/model.h"
#include "model/nccl_ops.h"
#include "write/pftrace/pb.h"
#include "read/gpu_fields.h"
#include "util/hmap.h"

#include <stdint.h>
#include <stddef.h>

/* ---- field numbers (Perfetto's protos) */
enum {
	TRACE_PACKET = 1,
	TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12,
	TP_SEQ_FLAGS = 13, TP_TRACK_DESCRIPTOR = 60, TP_CLOCK_SNAPSHOT = 6, TP_CLOCK_ID = 58,
	TP_DEFAULTS = 59, TPD_CLOCK_ID = 58, TPD_TRACK_EVENT = 11, TED_TRACK_UUID = 11,
	SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
	CS_CLOCKS = 1, CLK_ID = 1, CLK_TIMESTAMP = 2, CLK_INCREMENTAL = 3,
	CLOCK_BOOTTIME = 6, CLOCK_SEQ_DELTA = 64, /* the first sequence-scoped id: the default */
	CLOCK_SEQ_END = 128,                      /* past the last sequence-scoped id */
	TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT = 5, TD_COUNTER = 8,
	TD_CHILD_ORDERING = 11, TD_SIBLING_RANK = 12, ORDER_EXPLICIT = 3,
	PD_PID = 1, PD_NAME = 6,
	THD_PID = 1, THD_TID = 2, THD_NAME = 5,
	CD_UNIT = 3, UNIT_SIZE_BYTES = 3,
	TE_CATEGORY_IIDS = 3, TE_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10, TE_TRACK = 11,
	TE_NAME = 23, TE_COUNTER_VALUE = 30, TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48,
	TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
	ID_CATEGORIES = 1, ID_NAMES = 2, ID_ANNOTATION_NAMES = 3, IID = 1, IID_NAME = 2,
	DA_NAME_IID = 1, DA_BOOL = 2, DA_UINT = 3, DA_INT = 4, DA_DOUBLE = 5, DA_STRING = 6,
	DA_NAME = 10, DA_ARRAY = 12,
};

/* ---- interned categories and arg names (iid: index + 1) */
enum cat { C_KERNEL, C_MEMCPY, C_MEMSET, C_SYNC, C_RUNTIME, C_DRIVER, C_USER, C_NCCL, C_CUPTRACE,
	   C_AC2G, C_GPU_USER, C_CPU_OP, C_INSTANT, C_FWDBWD, C_MPI, C_N };

#define ANNOTATIONS(X)                                                                             \
	X(A_CORR, "correlation") X(A_DEVICE, "device") X(A_CONTEXT, "context") X(A_STREAM, "stream")  \
	X(A_COMM, "communication") X(A_REGS, "registers per thread") X(A_SMEM, "shared memory")       \
	X(A_BPSM, "blocks per SM") X(A_WPSM, "warps per SM") X(A_GRID, "grid") X(A_BLOCK, "block")    \
	X(A_GRAPH, "graph id") X(A_NODE, "graph node") X(A_BYTES, "bytes")                            \
	X(A_BW, "memory bandwidth (GB/s)") X(A_KIND, "kind") X(A_SRC_DEV, "src device")              \
	X(A_DST_DEV, "dst device") X(A_VALUE, "value") X(A_EVENT, "cuda event") X(A_CBID, "cbid")     \
	X(A_RETURN, "return") X(A_DOMAIN, "domain") X(A_CATEGORY, "category") X(A_COLOR, "color")     \
	X(A_PAYLOAD, "payload") X(A_UNFINISHED, "unfinished") X(A_OP, "op") X(A_SEQ, "seq")           \
	X(A_COUNT, "count") X(A_DATATYPE, "datatype") X(A_PEER, "peer") X(A_ROOT, "root")             \
	X(A_COMMH, "comm") X(A_COMM_NAME, "comm_name") X(A_NRANKS, "nranks") X(A_NNODES, "nnodes")    \
	X(A_RANK, "rank") X(A_ALGO, "algorithm") X(A_PROTO, "protocol") X(A_CHANNELS, "channels")     \
	X(A_WARPS, "warps") X(A_ENQUEUE, "enqueue (us)") X(A_GPU_TIME, "gpu time (us)")               \
	X(A_GPU_CHANNELS, "gpu channels") X(A_GROUP, "group") X(A_GROUP_SIZE, "group size")           \
	X(A_KERNEL, "kernel") X(A_KCORR, "kernel correlation") X(A_STEP, "step")                      \
	X(A_CALLS, "calls") X(A_OPS, "ops")                                                            \
	X(A_WAIT_STREAM, "wait_on_stream") X(A_WAIT_CORR, "wait_on_cuda_event_record_corr_id")  \
	X(A_WAIT_EVENT, "wait_on_cuda_event_id") X(A_OPERATION, "operation")                       \
	X(A_IN_FLIGHT, "in flight (ns)") X(A_EXT, "External id") X(A_SEQNUM, "Sequence number")      \
	X(A_FWD_TID, "Fwd thread id") X(A_DIMS, "Input Dims") X(A_TYPES, "Input type")              \
	X(A_STACK, "Call stack") X(A_ENDED, "ended on thread") X(A_DEV_TYPE, "Device Type")          \
	X(A_DEV_ID, "Device Id") X(A_ADDR, "Addr") X(A_MBYTES, "Bytes")                              \
	X(A_TOTAL_ALLOC, "Total Allocated") X(A_TOTAL_RES, "Total Reserved")             \
	X(A_WORLD_PEER, "world peer") X(A_WORLD_ROOT, "world root") X(A_TAG, "tag")            \
	X(A_RECV_BYTES, "recv bytes") X(A_REQUEST, "request") X(A_DONE, "requests completed")
#define X_ENUM(e, s) e,
#define X_NAME(e, s) s,
enum ann { ANNOTATIONS(X_ENUM) A_N };
#define BIT(a) (1ull << (a))


/* ---- tracks and lanes */
#define STACK 8  /* recent outermost slices of a track, to find overlaps */
#define LANES 16 /* lane tracks of a track (or of the async ranges of a file) */
#define NAMES_MAX (1u << 20) /* interned names per sequence; then written inline */

struct lanes {
	uint64_t b[LANES], e[LANES]; /* what each lane holds spans [b, e] */
	uint32_t n, announced;
};

struct ptrack {
	uint64_t sb[STACK], se[STACK];
	uint64_t max_se; /* no recent slice ends later */
	uint32_t ns;
	uint8_t announced;
	uint8_t clock; /* its incremental clock (see struct pft), 0 until it needs one */
	uint8_t flow_clock; /* that of its flow instants (in the order of the flows' other ends) */
	struct lanes l;
};

struct pft {
	struct out *o;
	int plain; /* --pftrace-plain: packets go out as they are (pack_chunk) */
	struct inputs *in;
	struct tfile *t;
	const uint8_t *mine; /* the event at hand is this share's to write */
	uint32_t seq;
	uint64_t def_track; /* the sequence's default track (TrackEventDefaults): no track_uuid */
	/* The sequence's incremental clocks, one per track while the 64
	 * sequence-scoped ids last (a track's events come in time order; the
	 * tracks of a file do not: CPU calls, then the GPU work they launched):
	 * the last timestamp each reached. A packet that goes back in time on
	 * its clock (the slice enclosing those just written), or whose track
	 * got none, states its time on BOOTTIME instead. */
	uint64_t clock_last[CLOCK_SEQ_END - CLOCK_SEQ_DELTA];
	uint32_t next_clock;
	uint8_t async_clock, counter_clock;
	uint64_t cats_done, devs_done; /* interned / counter tracks written */
	int anns_done;                 /* the annotation names are interned (all at once) */
	struct hmap by_sid, by_text;
	uint64_t next_iid;
	struct ptrack *tr;
	size_t ntr;
	struct lanes async;
	/* chunks compressed (pftrace_pack.c) */
	struct ZSTD_CCtx_s *zctx;
	char *zbuf;
	size_t zcap;
	uint64_t pb_bytes, file_bytes; /* protobuf handed to pack_chunk, bytes it wrote */
	/* The last slice written, whose END is not yet: a flow may add to it. */
	struct {
		int on;
		const struct m_track *track;
		uint64_t ts, end, uuid;
		uint8_t clock;
		size_t pkt_at, te_at; /* where the packet's and the event's lengths are */
		unsigned pkt_size, te_size;
	} open;
};


/* pftrace.c */
static inline uint64_t ts_of(const struct pft *p, uint64_t t)
{
	int64_t ns = (int64_t)t + p->t->off_ns;
	return ns > 0 ? (uint64_t)ns : 0;
}

/* pftrace_seq.c: a packet without a time (flags 0 outside the files'
 * sequences), a sequence's first packet, the ClockSnapshot starting
 * incremental clock `id` at the file's start, descriptors; a string field
 * of text from the traced program (pf_put_text: invalid UTF-8 becomes
 * U+FFFD, as in the JSON). */
void pf_put_text(struct out *o, unsigned field, const char *s, size_t n);
size_t bare_packet(struct out *o, uint32_t seq, unsigned flags);
void seq_start(struct pft *p);
void clock_snapshot(struct pft *p, unsigned id);
void descriptor(struct out *o, uint32_t seq, uint64_t uuid, uint64_t parent, const char *name,
                size_t name_len, int64_t rank);
void process_descriptor(struct out *o, uint32_t seq, unsigned flags, uint64_t pid, const char *name,
                        int64_t rank);

/* pftrace_tracks.c: uuids of processes and tracks, lanes. */
uint64_t proc_uuid(uint64_t pid);
uint64_t gpu_pid(const struct pft *p, uint64_t dev);
uint64_t track_proc_uuid(const struct pft *p, const struct m_track *tr);
uint64_t async_uuid(const struct pft *p, unsigned lane);
uint64_t counter_uuid(const struct pft *p, uint64_t dev);
struct ptrack *ptrack_grow(struct pft *p, const struct m_track *tr);
unsigned lane_pick(struct lanes *l, uint64_t b, uint64_t e);
unsigned slice_lane(struct ptrack *pt, uint64_t b, uint64_t e);

/* Inline, as they are used for every event: a track's uuid (small for the
 * first file's tracks, they are written with every event); its state. */
static inline uint64_t track_id_uuid(const struct pft *p, uint32_t id, unsigned lane)
{
	return ((uint64_t)p->t->index << 24 | (uint64_t)(id & 0x3ffff) << 5 | lane) + 1;
}

static inline uint64_t track_uuid(const struct pft *p, const struct m_track *tr, unsigned lane)
{
	return track_id_uuid(p, tr->id, lane);
}

static inline struct ptrack *ptrack(struct pft *p, const struct m_track *tr)
{
	return tr->id < p->ntr ? &p->tr[tr->id] : ptrack_grow(p, tr);
}

/* pftrace_pack.c: once o holds `threshold` bytes or more (whole packets),
 * they go to the sink as one zstd-compressed packet, or plain while the
 * share's output stays within 1/PF_KEEP of its protobuf. */
#define PF_CHUNK (256u << 10) /* bytes of whole packets compressed at once */
#define PF_ZSTD_LEVEL (-1) /* measured, bench/JOURNAL.md */
#define PF_KEEP 2 /* the output: 1/PF_KEEP of the protobuf (the rest of the chunks plain) */
void pack_chunk(struct pft *p, size_t threshold);

/* pftrace.c, for pftrace_file.c: one event of the model into the share's
 * sequence (the consumer's event); the slice still open written out. */
void pftrace_event(void *ctx, const struct m_event *ev);
void close_open_slice(struct pft *p);
void pack_free(struct pft *p);

static inline void close_open(struct pft *p)
{
	if (p->open.on)
		close_open_slice(p);
}

/* Between packets (inline: once for every packet): the slice left open
 * ends, the buffer may go to the sink. */
static inline void boundary(struct pft *p)
{
	close_open(p);
	if (p->o->len >= PF_CHUNK)
		pack_chunk(p, PF_CHUNK);
}

/* pftrace_args.c: the args of each kind of slice, as debug annotations
 * (names interned by pftrace.c through the `need` of the event). */
void span_args(struct pft *p, const struct span *s);
void span_event_args(struct pft *p, const struct m_event *ev);
void kernel_args(struct pft *p, const struct m_event *ev);
void transfer_args(struct pft *p, const struct m_event *ev);
void sync_args(struct pft *p, const struct m_event *ev);
void api_args(struct pft *p, const struct m_event *ev);
void nccl_args(struct pft *p, const struct m_event *ev);
void mpi_args(struct pft *p, const struct m_event *ev);
void hang_args(struct pft *p, const struct m_event *ev);
void torch_args(struct pft *p, const struct m_event *ev);
void tmem_args(struct pft *p, const struct m_event *ev);

#endif
