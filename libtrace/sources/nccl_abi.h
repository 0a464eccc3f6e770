// SPDX-License-Identifier: MIT
/* NCCL's profiler plugin ABI as NCCL calls it, versions 4 to 6 (NCCL
 * 2.25-2.29; 2.28 looks for ncclProfiler_v5 first, then v4, ...). Our own
 * definitions, reduced to what we read, laid out as NCCL's
 * ext-profiler headers lay them out:
 *
 *   descriptor: event type (v4: one byte, v5/v6: eight), parent handle,
 *               rank, then a union of per-type structs at offset 24.
 *   v5 added the API-level events (group, collective and p2p calls,
 *   kernel launch) and a parent-group pointer at the end of the
 *   collective and p2p structs; v6 adds copy-engine events we do not ask
 *   for, the v5 members stay where they were.
 *
 * Quirks of NCCL 2.28 worth knowing: API events carry rank 0 whatever the
 * rank (the context knows it); the collective event of AllGather and
 * Broadcast reports its count in bytes and datatype ncclInt8 (the API
 * event keeps the user's); handles are passed as parents after they were
 * stopped; kernel-channel events come from NCCL's proxy thread. */
#ifndef CT_NCCL_ABI_H
#define CT_NCCL_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Event type bits, also the activation mask. */
enum {
	NP_GROUP = 1 << 0,
	NP_COLL = 1 << 1,
	NP_P2P = 1 << 2,
	NP_PROXY_OP = 1 << 3,
	NP_PROXY_STEP = 1 << 4,
	NP_PROXY_CTRL = 1 << 5,
	NP_KERNEL_CH = 1 << 6,
	NP_NET = 1 << 7,
	NP_GROUP_API = 1 << 8, /* v5 */
	NP_COLL_API = 1 << 9,
	NP_P2P_API = 1 << 10,
	NP_KERNEL_LAUNCH = 1 << 11,
};

/* The states we look at (ncclProfilerEventState_t). */
enum {
	NPS_KERNEL_CH_STOP = 22,       /* args: GPU timer at the channel's end */
	NPS_GROUP_START_API_STOP = 23, /* ncclGroupStart returned */
	NPS_GROUP_END_API_START = 24,  /* ncclGroupEnd was called */
};

struct np_descr {
	uint64_t type; /* v4: only the first byte is NCCL's */
	void *parent;
	int rank;
	union {
		struct {
			uint8_t graph; /* bool in NCCL's headers, int in some copies */
			int depth;     /* ncclGroupDepth: 1 for an implicit group */
		} group_api;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			int root;
			void *stream;
			uint8_t graph;
		} coll_api;
		struct {
			const char *func;
			size_t count;
			const char *datatype;
			void *stream;
			uint8_t graph;
		} p2p_api;
		struct {
			void *stream;
		} launch;
		struct {
			uint64_t seq;
			const char *func;
			const void *sendbuf;
			void *recvbuf;
			size_t count;
			int root;
			const char *datatype;
			uint8_t nchannels;
			uint8_t nwarps;
			const char *algo;
			const char *proto;
			void *group; /* v5: the Group event; v4 passes it as parent */
		} coll;
		struct {
			const char *func;
			void *buf;
			const char *datatype;
			size_t count;
			int peer;
			uint8_t nchannels;
			void *group; /* v5 */
		} p2p;
		struct {
			uint8_t channel;
			uint64_t timer; /* GPU globaltimer, ns */
		} kernel_ch;
	};
};

union np_state_args {
	struct {
		size_t trans_size;
	} proxy_step;
	struct {
		int appended;
	} proxy_ctrl;
	struct {
		void *data;
	} net;
	struct {
		uint64_t timer;
	} kernel_ch;
};

typedef void (*np_logfn)(void);

struct np_v5 { /* also v6: same functions, wider descriptor we do not read */
	const char *name;
	int (*init)(void **ctx, uint64_t comm_id, int *mask, const char *comm_name, int nnodes,
	            int nranks, int rank, np_logfn log);
	int (*start)(void *ctx, void **handle, struct np_descr *d);
	int (*stop)(void *handle);
	int (*record)(void *handle, int state, union np_state_args *args);
	int (*finalize)(void *ctx);
};

struct np_v4 {
	const char *name;
	int (*init)(void **ctx, int *mask, const char *comm_name, uint64_t comm_hash, int nnodes,
	            int nranks, int rank, np_logfn log);
	int (*start)(void *ctx, void **handle, struct np_descr *d);
	int (*stop)(void *handle);
	int (*record)(void *handle, int state, union np_state_args *args);
	int (*finalize)(void *ctx);
};

/* The layout NCCL compiles against (LP64). */
_Static_assert(offsetof(struct np_descr, parent) == 8, "descriptor layout");
_Static_assert(offsetof(struct np_descr, rank) == 16, "descriptor layout");
_Static_assert(offsetof(struct np_descr, coll) == 24, "descriptor layout");
_Static_assert(offsetof(struct np_descr, group_api.depth) == 28, "group api layout");
_Static_assert(offsetof(struct np_descr, coll_api.root) == 48, "coll api layout");
_Static_assert(offsetof(struct np_descr, coll_api.graph) == 64, "coll api layout");
_Static_assert(offsetof(struct np_descr, coll.count) == 56, "coll layout");
_Static_assert(offsetof(struct np_descr, coll.datatype) == 72, "coll layout");
_Static_assert(offsetof(struct np_descr, coll.nchannels) == 80, "coll layout");
_Static_assert(offsetof(struct np_descr, coll.algo) == 88, "coll layout");
_Static_assert(offsetof(struct np_descr, coll.group) == 104, "coll layout");
_Static_assert(offsetof(struct np_descr, p2p.peer) == 56, "p2p layout");
_Static_assert(offsetof(struct np_descr, p2p.group) == 64, "p2p layout");
_Static_assert(offsetof(struct np_descr, kernel_ch.timer) == 32, "kernel channel layout");

#endif
