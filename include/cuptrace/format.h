// SPDX-License-Identifier: MIT
/* The .ctr trace file format: the one contract between libtrace/ (writer)
 * and tools/ (reader). Encoder and decoder live side by side in
 * libtrace/format/ (enc.c, dec.c) and both take their field layouts from
 * the schema tables (schema*.c), made from each kind's field list in
 * fields.h, so they cannot drift.
 *
 * File layout (docs/FORMAT.md has the long version):
 *   header   "CUPTRACE" u16 major u16 minor u32 len, then len bytes of TLV
 *            fields (varint tag, varint length, bytes), uncompressed, the
 *            last of them a checksum of the header (CT_H_CRC, from 1.1)
 *   blocks   u32 magic CT_BLOCK_MAGIC, u32 compressed length, u32 raw length,
 *            then one zstd frame (with content checksum) of `raw length`
 *            bytes of items
 *   footer   a block whose only item is CT_K_FOOTER, then a trailer (see
 *            CT_TRAILER_MAGIC); a clean file ends exactly after it.
 * Every block decodes on its own apart from the string table, which grows
 * from block to block (strings are stored once per file). String ids only
 * grow but may skip (a block lost): a flight window's first block defines
 * the strings of the blocks it dropped, with their ids, before the blocks
 * it kept define theirs.
 */
#ifndef CUPTRACE_FORMAT_H
#define CUPTRACE_FORMAT_H

#include <stdint.h>

#define CT_MAGIC "CUPTRACE"
#define CT_FORMAT_MAJOR 1
/* 1.1: the header ends with a checksum (CT_H_CRC) and the footer says how the
 * process ended (CT_FT_END); 1.0 files still read. 1.2: the event kind
 * CT_EV_CUDA_EVENT (older readers skip a block holding one as damaged:
 * items carry no length, a kind unknown to a reader cannot be stepped
 * over). 1.3: the footer's CT_FT_NCCL_RANK and the header's
 * CT_H_FORKED_FROM (older readers skip both). 1.4: the kinds of the torch
 * source (CT_EV_TORCH_*) and CT_EV_EXT_CORR (older readers skip a block
 * holding one as damaged, as for 1.2), and those of the MPI source
 * (CT_EV_MPI_*), in the same release. 1.5: the header's CT_H_FLIGHT_*
 * tags of a flight recorder's window (older readers skip them). */
#define CT_FORMAT_MINOR 5
#define CT_BLOCK_MAGIC 0x4b425443u /* "CTBK" little-endian */
/* After a footer block that closes the file: u32 magic, u32 0, u64 offset
 * of that footer block (which holds the FOOTER item alone), so that tools
 * can read the totals before the events. Readers skip trailers met between
 * blocks (a footer written on a signal the program then survived). */
#define CT_TRAILER_MAGIC 0x444e5443u /* "CTND" */
#define CT_TRAILER_SIZE 16
#define CT_HEADER_MAX (1u << 20)
#define CT_BLOCK_RAW_MAX (16u << 20)

/* Header TLV tags. Numbers are varints inside their value bytes. */
enum ct_htag {
	CT_H_TRACER_VERSION = 1, /* string */
	CT_H_HOST = 2,		 /* string */
	CT_H_PID = 3,		 /* u */
	CT_H_RANK = 4,		 /* i (zigzag); -1 when unknown */
	CT_H_LOCAL_RANK = 5,	 /* i */
	CT_H_WORLD_SIZE = 6,	 /* i */
	CT_H_LOCAL_SIZE = 7,	 /* i */
	CT_H_CMDLINE = 8,	 /* string, arguments separated by NUL */
	CT_H_RT_ANCHOR = 9,	 /* u: CLOCK_REALTIME ns ... */
	CT_H_MONO_ANCHOR = 10,	 /* u: ... taken together with this tracer clock ns */
	CT_H_CONFIG = 11,	 /* string: "KEY=value\n" lines of the effective config */
	CT_H_RANK_SOURCE = 12,	 /* string: the variable the rank came from */
	CT_H_PPID = 13,		 /* u */
	CT_H_JOB_ID = 14,	 /* string, may be empty */
	CT_H_PART = 16,		 /* u: the file's number among its process's files
				  * (cuptrace_rotate: 2, 3, ...); absent in the first */
	CT_H_FORKED_FROM = 17,	 /* u (1.3): the pid of the traced process this one
				  * was forked from without exec (a DataLoader
				  * worker); absent otherwise */
	/* 1.5: a flight recorder's window (CUPTRACE_FLIGHT): the file holds
	 * the process's last moments, written on a trigger. Absent otherwise. */
	CT_H_FLIGHT_WANT = 18,	 /* u: the window asked, ns */
	CT_H_FLIGHT_FROM = 19,	 /* u: tracer clock ns: the window kept starts ... */
	CT_H_FLIGHT_TO = 20,	 /* u: ... and ends here (the trigger) */
	CT_H_FLIGHT_CAUSE = 21,	 /* string: the trigger, in words */
	CT_H_FLIGHT_BUDGET = 22, /* u: the window's memory budget, bytes */
	CT_H_FLIGHT_SHORT = 23,	 /* u: ns of the window the budget left out; absent: none */
	CT_H_FLIGHT_HELD = 24,	 /* u: the most bytes the store held at once, up to the trigger */
	/* From format 1.1, the last field, always the CT_HEADER_CRC_SIZE
	 * bytes 0x0f 0x04 c0 c1 c2 c3: the CRC-32C (little endian) of every
	 * byte of the file before c0 (magic, versions, length, fields). A
	 * reader checks it whatever the minor version says (a flipped bit
	 * there must not turn the check off) and requires it from 1.1 on. */
	CT_H_CRC = 15,
};
#define CT_HEADER_CRC_SIZE 6

/* Item kinds inside a block. Values below CT_EV_FIRST are structural. */
enum ct_kind {
	CT_K_NONE = 0,
	CT_K_STR = 1,	 /* varint id, varint len, bytes: defines string id `id` */
	CT_K_THREAD = 2, /* varint tid, varint base ts: following events belong to tid */
	CT_K_FOOTER = 3, /* TLV fields, see ct_ftag; last item of the file */
	CT_K_DROPS = 4,	 /* varint kind, varint cumulative count for the current thread */
	/* First item of a block, when present: varint n, then four byte planes
	 * of n bytes each (bits 0-7 of n 32-bit values, then 8-15, 16-23,
	 * 24-31). The TS and DUR fields of the block's events take these values
	 * in order instead of inline varints; 0xffffffff means "the value
	 * follows inline as a varint". Timestamps carry most of a trace's
	 * entropy: apart from the rest and split by byte, zstd codes each byte
	 * plane close to its entropy. */
	CT_K_TSPLANES = 5,

	/* Each source owns a range of kinds (schema_<source>.c): NVTX and
	 * control 16-47, CUPTI 48-79, NCCL 80-111, PyTorch 112-127, MPI
	 * 128-143. */
	CT_EV_FIRST = 16,
	CT_EV_NVTX_PUSH = 16,
	CT_EV_NVTX_POP = 17,
	CT_EV_NVTX_START = 18,
	CT_EV_NVTX_END = 19,
	CT_EV_NVTX_MARK = 20,
	CT_EV_THREAD_NAME = 21, /* names any OS thread of the process */
	CT_EV_CATEGORY = 22,	/* names a category of a domain */
	CT_EV_CAPTURE = 23,	/* capture switched on (1) or off (0) */
	CT_EV_STEP = 24,	/* a step boundary: step number */
	CT_EV_RESET = 25,	/* this thread's open ranges were cut by a capture stop */
	CT_EV_HANG = 26,	/* hang_suspected: an NCCL operation in flight too long (1.2+) */
	CT_EV_CORE_END,

	/* GPU activity and CUDA API calls (schema_cupti.c). */
	CT_EV_CUPTI_FIRST = 48,
	CT_EV_KERNEL = 48,
	CT_EV_MEMCPY = 49,
	CT_EV_MEMSET = 50,
	CT_EV_SYNC = 51,
	CT_EV_CUDA_API = 52,
	CT_EV_GPU_MEMORY = 53,
	CT_EV_GPU_DEVICE = 54,
	CT_EV_GPU_CONTEXT = 55,
	CT_EV_CUPTI_DROPPED = 56, /* drop counts only: records CUPTI itself lost */
	CT_EV_CUDA_EVENT = 57,	  /* a cudaEventRecord: which stream the event was recorded on */
	CT_EV_EXT_CORR = 58,	  /* a CUDA call's correlation id and the id the program
				   * pushed around it (a PyTorch operator's) (1.4) */
	CT_EV_CUPTI_END = 80,
	/* NCCL (schema_nccl.c). Ids are the handles the plugin gave NCCL;
	 * parent, group and launch fields hold such ids (0 = none). */
	CT_EV_NCCL_FIRST = 80,
	CT_EV_NCCL_COMM = 80,	   /* a communicator (a definition) */
	CT_EV_NCCL_FINI = 81,	   /* its profiler context finalized */
	CT_EV_NCCL_GROUP_API = 82, /* outermost ncclGroupStart..End (or implicit) */
	CT_EV_NCCL_COLL_API = 83,  /* a collective API call */
	CT_EV_NCCL_P2P_API = 84,   /* a send/recv API call */
	CT_EV_NCCL_LAUNCH = 85,	   /* a kernel launch (one per plan) */
	CT_EV_NCCL_GROUP = 86,	   /* a plan's host-side work; names its launch */
	CT_EV_NCCL_COLL = 87,	   /* a collective task as scheduled */
	CT_EV_NCCL_P2P = 88,	   /* a send or recv task as scheduled */
	CT_EV_NCCL_KERNEL_CH = 89, /* one channel of a task started on the GPU */
	CT_EV_NCCL_STOP = 90,	   /* an event above ended */
	CT_EV_NCCL_STATE = 91,	   /* a state change of an event above */
	CT_EV_NCCL_END = 112,

	/* PyTorch, from the Python package's RecordFunction observer (1.4) */
	CT_EV_TORCH_FIRST = 112,
	CT_EV_TORCH_OP = 112,  /* an operator or a record_function scope, written when it ends */
	CT_EV_TORCH_MEM = 113, /* an allocation or a free by one of torch's allocators */
	CT_EV_TORCH_END = 128,

	/* MPI calls, from libcuptrace-mpi.so's wrappers (schema_mpi.c) (1.4) */
	CT_EV_MPI_FIRST = 128,
	CT_EV_MPI_COMM = 128,  /* a communicator: its job-wide id (a definition) */
	CT_EV_MPI_CALL = 129,  /* a call, written when it returns */
	CT_EV_MPI_ENTER = 130, /* a call that may wait for other ranks, as it is entered */
	CT_EV_MPI_DONE = 131,  /* a request completed by the call written next on the thread */
	CT_EV_MPI_HANG = 132,  /* the watchdog: an MPI collective in flight too long */
	CT_EV_MPI_END = 144,
	CT_EV_LAST = 144
};
#define CT_NKINDS 144 /* counters per kind are sized by this */

/* Field encodings. */
enum ct_ftype {
	CT_F_TS = 1,  /* absolute ns; stored as zigzag delta from the thread's last ts */
	CT_F_DUR = 2, /* ns after the record's previous TS field; zigzag */
	CT_F_U = 3,   /* unsigned varint */
	CT_F_I = 4,   /* zigzag varint */
	CT_F_SID = 5, /* in the ring: a string handle; on disk: a string ref */
	CT_F_STR = 6, /* in the ring: inline bytes; on disk: a string ref */
	CT_F_DELTA = 7, /* counter: zigzag delta from this field in the previous record of the
			 * same kind in the block (0 at the block's start) */
};

/* A string ref on disk: 0 = none/empty, 1 = an uninterned string follows
 * (varint len, bytes), n >= 2 = string id n. String ids count from 2 in the
 * order of CT_K_STR items. */
#define CT_SREF_NONE 0
#define CT_SREF_INLINE 1
#define CT_SID_FIRST 2

#define CT_MAX_FIELDS 24
#define CT_MAX_STR (1u << 20) /* longest string kept whole */

struct ct_schema {
	const char *name; /* short kind name for tools: "nvtx_push" */
	uint8_t nfields;
	uint8_t type[CT_MAX_FIELDS];
	const char *field[CT_MAX_FIELDS];
};

/* NULL for kinds that are not events. */
const struct ct_schema *ct_schema_of(unsigned kind);

/* NVTX payload types as stored (same numbers as nvtxPayloadType_t). */
enum ct_payload {
	CT_PAYLOAD_NONE = 0,
	CT_PAYLOAD_U64 = 1,
	CT_PAYLOAD_I64 = 2,
	CT_PAYLOAD_DOUBLE = 3,
	CT_PAYLOAD_U32 = 4,
	CT_PAYLOAD_I32 = 5,
	CT_PAYLOAD_FLOAT = 6,
};
/* Ranks and tags as the MPI kinds store them (peer, world_peer, tag):
 * MPI's own values of these differ between implementations. */
enum ct_mpi_rank {
	CT_MPI_ANY_SOURCE = -1,
	CT_MPI_PROC_NULL = -2,
	CT_MPI_ROOT = -3,    /* an intercommunicator's root group */
	CT_MPI_NO_PEER = -4, /* the call has no peer or root */
};
#define CT_MPI_ANY_TAG -1
#define CT_MPI_NO_TAG -2 /* the call has no tag */

/* The color field holds (1 << 32) | ARGB when a color was given, else 0. */
#define CT_COLOR_SET (1ull << 32)

/* Footer TLV tags. */
enum ct_ftag {
	CT_FT_EVENTS = 1,    /* repeated: varint kind, varint count */
	CT_FT_DROPS = 2,     /* repeated: varint kind, varint count */
	CT_FT_RT_END = 3,    /* u: CLOCK_REALTIME ns at close */
	CT_FT_MONO_END = 4,  /* u: tracer clock ns at close */
	CT_FT_TRUNC_STR = 5, /* u: strings cut to CT_MAX_STR */
	/* Since 1.1, optional: varint how (ct_end), varint detail. Absent in
	 * older files and where the writer did not know. */
	CT_FT_END = 6,
	/* Since 1.3, optional: varint rank, varint nranks: the process's rank
	 * in its largest NCCL communicator (the first of that size). */
	CT_FT_NCCL_RANK = 7,
};

/* How the process ended, as the footer's CT_FT_END records it. */
enum ct_end {
	CT_END_UNKNOWN = 0,
	CT_END_EXIT = 1,     /* exit() or a return from main; detail: CT_EXIT_STATUS_KNOWN |
	                        status where the library saw it (format 1.2), else 0 */
	CT_END_EXIT_NOW = 2, /* _exit() or _Exit(); detail: the status */
	CT_END_EXEC = 3,     /* execve() or a sibling; detail 0 */
	CT_END_SIGNAL = 4,   /* killed by a signal; detail: its number */
	CT_END_ROTATE = 5,   /* cuptrace_rotate(): the process goes on in its next
	                      * file; detail: this file's number (1, 2, ...) */
};
#define CT_EXIT_STATUS_KNOWN 0x100u

#endif
