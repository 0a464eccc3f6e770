// SPDX-License-Identifier: MIT
/* NCCL source: the profiler plugin NCCL loads through NCCL_PROFILER_PLUGIN
 * (lifecycle.c points it at this library). Each callback writes one record and
 * returns; nothing is allocated or looked up per event, so NCCL's threads
 * pay one clock read and a few stores (bench/progs/bench_nccl.c measures it).
 *
 * Handles given to NCCL are not pointers but numbers: a per-thread block of
 * ids shifted left, with the event type in the low four bits. NCCL keeps
 * using handles after stopping them (as parents of later events), which a
 * number survives; the converter joins events by these ids. */
#include "capture.h"
#include "defs.h"
#include "lifecycle.h"
#include "log.h"
#include "nccl_abi.h"
#include "nccl_str.h"
#include "record.h"
#include "thread.h"
#include "trace.h"
#include "watchdog.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* What we ask NCCL for: the API calls (enqueue times, the user's count
 * and datatype), the launches and plans (to reach the kernel), the tasks
 * (sequence number, algorithm, protocol, channels) and the kernel-channel
 * timers (GPU time). Proxy and network events are left off: they are many
 * and say nothing the reports use. */
#define MASK_V5                                                                                    \
	(NP_GROUP_API | NP_COLL_API | NP_P2P_API | NP_KERNEL_LAUNCH | NP_GROUP | NP_COLL |         \
	 NP_P2P | NP_KERNEL_CH)
#define MASK_V4 (NP_GROUP | NP_COLL | NP_P2P | NP_KERNEL_CH)

enum {
	HC_GROUP_API = 1,
	HC_COLL_API,
	HC_P2P_API,
	HC_LAUNCH,
	HC_GROUP,
	HC_COLL,
	HC_P2P,
	HC_KERNEL_CH
};

/* Launches waiting for their plan's Group event, per communicator. NCCL
 * handles one communicator's plans in order, launch first, so the oldest
 * waiting launch is the plan's (also when the plan's host work runs
 * later in a CUDA host callback). */
#define LQ 64

struct nctx {
	uint64_t id;
	_Atomic uint64_t lq[LQ];
	_Atomic uint32_t lhead, ltail;
};

static _Atomic uint64_t next_ctx = 1;
static _Atomic uint64_t next_block = 1;
static __thread uint64_t id_next __attribute__((tls_model("initial-exec")));
static __thread uint64_t id_end __attribute__((tls_model("initial-exec")));

#define BLOCK 4096

static inline uint64_t new_handle(unsigned code)
{
	if (__builtin_expect(id_next == id_end, 0)) {
		id_next = atomic_fetch_add_explicit(&next_block, BLOCK, memory_order_relaxed);
		id_end = id_next + BLOCK;
	}
	return id_next++ << 4 | code;
}

static void lq_push(struct nctx *c, uint64_t h)
{
	uint32_t t = atomic_load_explicit(&c->ltail, memory_order_relaxed);
	uint32_t hd = atomic_load_explicit(&c->lhead, memory_order_acquire);
	/* Full: plans whose Group event never came (their launch failed).
	 * The oldest entry is given up. */
	while (t - hd >= LQ && !atomic_compare_exchange_weak(&c->lhead, &hd, hd + 1))
		;
	atomic_store_explicit(&c->lq[t % LQ], h, memory_order_relaxed);
	atomic_store_explicit(&c->ltail, t + 1, memory_order_release);
}

static uint64_t lq_pop(struct nctx *c)
{
	uint32_t hd = atomic_load_explicit(&c->lhead, memory_order_acquire);
	for (;;) {
		uint32_t t = atomic_load_explicit(&c->ltail, memory_order_acquire);
		if (hd == t)
			return 0;
		uint64_t h = atomic_load_explicit(&c->lq[hd % LQ], memory_order_relaxed);
		if (atomic_compare_exchange_weak(&c->lhead, &hd, hd + 1))
			return h;
	}
}

#define P(x) ((uint64_t)(uintptr_t)(x))

static inline uint64_t *begin(struct ct_thread *t, unsigned kind, unsigned n, struct ct_rec **r)
{
	*r = ct_rec_begin(t, kind, n, 0);
	if (!*r)
		return NULL;
	(*r)->reserved = ct_tick_flag; /* every one's ts (f[F_TS]) is a ct_stamp() */
	return (*r)->f;
}

static inline void commit(struct ct_thread *t, struct ct_rec *r)
{
	ct_commit(t, r->size);
}

/* One startEvent; type is the event's bit, v4 when called through the
 * version 4 table (no API events, the Group is the task's parent). */
static int start_event(struct nctx *c, void **out, const struct np_descr *d, uint64_t type, int v4)
{
	if (!out)
		return 0;
	*out = NULL;
	if (!d)
		return 0;
	struct ct_thread *t = ct_recorder();
	/* A channel of a task that was recorded (its parent handle is ours)
	 * is recorded whatever the gate, as its end (a state) is: a window
	 * that closes while NCCL work is queued must not leave recorded
	 * collectives without the channels that complete them. */
	if (!t && type == NP_KERNEL_CH && d->parent && ct.active)
		t = ct_self();
	uint64_t ctx = c ? c->id : 0, h = 0, *f;
	struct ct_rec *r;
	/* Launches and plans are paired even while not capturing, so that
	 * the pairing survives a capture switch. */
	if (type == NP_KERNEL_LAUNCH) {
		h = t ? new_handle(HC_LAUNCH) : 0;
		if (c)
			lq_push(c, h);
	}
	uint64_t launch = type == NP_GROUP && c ? lq_pop(c) : 0;
	if (!t)
		return 0;
	uint64_t now = ct_stamp();
	switch (type) {
	case NP_GROUP_API:
		if (!(f = begin(t, CT_EV_NCCL_GROUP_API, F_NCCL_GROUP_API_N, &r)))
			return 0;
		h = new_handle(HC_GROUP_API);
		f[F_NCCL_START_TS] = now, f[F_NCCL_START_ID] = h, f[F_NCCL_START_CTX] = ctx;
		f[F_NCCL_GROUP_API_DEPTH] = (uint64_t)d->group_api.depth;
		f[F_NCCL_GROUP_API_GRAPH] = d->group_api.graph != 0;
		break;
	case NP_COLL_API:
		if (!(f = begin(t, CT_EV_NCCL_COLL_API, F_NCCL_COLL_API_N, &r)))
			return 0;
		h = new_handle(HC_COLL_API);
		f[F_NCCL_START_TS] = now, f[F_NCCL_START_ID] = h, f[F_NCCL_START_CTX] = ctx;
		f[F_NCCL_COLL_API_PARENT] = P(d->parent);
		f[F_NCCL_COLL_API_FUNC] = ct_nccl_str(d->coll_api.func);
		f[F_NCCL_COLL_API_DATATYPE] = ct_nccl_str(d->coll_api.datatype);
		f[F_NCCL_COLL_API_COUNT] = d->coll_api.count;
		f[F_NCCL_COLL_API_ROOT] = (uint64_t)(int64_t)d->coll_api.root;
		f[F_NCCL_COLL_API_STREAM] = P(d->coll_api.stream);
		f[F_NCCL_COLL_API_GRAPH] = d->coll_api.graph != 0;
		break;
	case NP_P2P_API:
		if (!(f = begin(t, CT_EV_NCCL_P2P_API, F_NCCL_P2P_API_N, &r)))
			return 0;
		h = new_handle(HC_P2P_API);
		f[F_NCCL_START_TS] = now, f[F_NCCL_START_ID] = h, f[F_NCCL_START_CTX] = ctx;
		f[F_NCCL_P2P_API_PARENT] = P(d->parent);
		f[F_NCCL_P2P_API_FUNC] = ct_nccl_str(d->p2p_api.func);
		f[F_NCCL_P2P_API_DATATYPE] = ct_nccl_str(d->p2p_api.datatype);
		f[F_NCCL_P2P_API_COUNT] = d->p2p_api.count;
		f[F_NCCL_P2P_API_STREAM] = P(d->p2p_api.stream);
		f[F_NCCL_P2P_API_GRAPH] = d->p2p_api.graph != 0;
		break;
	case NP_KERNEL_LAUNCH:
		if (!(f = begin(t, CT_EV_NCCL_LAUNCH, F_NCCL_LAUNCH_N, &r)))
			return 0;
		f[F_NCCL_START_TS] = now, f[F_NCCL_START_ID] = h, f[F_NCCL_START_CTX] = ctx;
		f[F_NCCL_LAUNCH_PARENT] = P(d->parent);
		f[F_NCCL_LAUNCH_STREAM] = P(d->launch.stream);
		break;
	case NP_GROUP:
		if (!(f = begin(t, CT_EV_NCCL_GROUP, F_NCCL_GROUP_N, &r)))
			return 0;
		h = new_handle(HC_GROUP);
		f[F_NCCL_START_TS] = now, f[F_NCCL_START_ID] = h, f[F_NCCL_START_CTX] = ctx;
		f[F_NCCL_GROUP_LAUNCH] = launch;
		break;
	case NP_COLL:
		if (!(f = begin(t, CT_EV_NCCL_COLL, F_NCCL_COLL_N, &r)))
			return 0;
		h = new_handle(HC_COLL);
		f[F_NCCL_START_TS] = now, f[F_NCCL_START_ID] = h, f[F_NCCL_START_CTX] = ctx;
		f[F_NCCL_COLL_PARENT] = v4 ? 0 : P(d->parent);
		f[F_NCCL_COLL_GROUP] = v4 ? P(d->parent) : P(d->coll.group);
		f[F_NCCL_COLL_SEQ] = d->coll.seq;
		f[F_NCCL_COLL_FUNC] = ct_nccl_str(d->coll.func);
		f[F_NCCL_COLL_DATATYPE] = ct_nccl_str(d->coll.datatype);
		f[F_NCCL_COLL_COUNT] = d->coll.count;
		f[F_NCCL_COLL_ROOT] = (uint64_t)(int64_t)d->coll.root;
		f[F_NCCL_COLL_CHANNELS] = d->coll.nchannels;
		f[F_NCCL_COLL_WARPS] = d->coll.nwarps;
		f[F_NCCL_COLL_ALGO] = ct_nccl_str(d->coll.algo);
		f[F_NCCL_COLL_PROTO] = ct_nccl_str(d->coll.proto);
		f[F_NCCL_COLL_RANK] = (uint64_t)(int64_t)d->rank;
		break;
	case NP_P2P:
		if (!(f = begin(t, CT_EV_NCCL_P2P, F_NCCL_P2P_N, &r)))
			return 0;
		h = new_handle(HC_P2P);
		f[F_NCCL_START_TS] = now, f[F_NCCL_START_ID] = h, f[F_NCCL_START_CTX] = ctx;
		f[F_NCCL_P2P_PARENT] = v4 ? 0 : P(d->parent);
		f[F_NCCL_P2P_GROUP] = v4 ? P(d->parent) : P(d->p2p.group);
		f[F_NCCL_P2P_FUNC] = ct_nccl_str(d->p2p.func);
		f[F_NCCL_P2P_DATATYPE] = ct_nccl_str(d->p2p.datatype);
		f[F_NCCL_P2P_COUNT] = d->p2p.count;
		f[F_NCCL_P2P_PEER] = (uint64_t)(int64_t)d->p2p.peer;
		f[F_NCCL_P2P_CHANNELS] = d->p2p.nchannels;
		f[F_NCCL_P2P_RANK] = (uint64_t)(int64_t)d->rank;
		break;
	case NP_KERNEL_CH:
		if (!(f = begin(t, CT_EV_NCCL_KERNEL_CH, F_NCCL_KERNEL_CH_N, &r)))
			return 0;
		h = new_handle(HC_KERNEL_CH);
		f[F_NCCL_START_TS] = now, f[F_NCCL_START_ID] = h, f[F_NCCL_START_CTX] = ctx;
		f[F_NCCL_KERNEL_CH_PARENT] = P(d->parent);
		f[F_NCCL_KERNEL_CH_CHANNEL] = d->kernel_ch.channel;
		f[F_NCCL_KERNEL_CH_GPU_START] = d->kernel_ch.timer;
		break;
	default: /* proxy, network, copy-engine: not asked for */
		return 0;
	}
	commit(t, r);
	*out = (void *)(uintptr_t)h;
	return 0;
}

static int start_v5(void *ctx, void **out, struct np_descr *d)
{
	return start_event(ctx, out, d, d ? d->type : 0, 0);
}

static int start_v4(void *ctx, void **out, struct np_descr *d)
{
	return start_event(ctx, out, d, d ? *(const uint8_t *)d : 0, 1);
}

/* Stops are written even when capture went off meanwhile, so that what
 * was started inside a window has its end. Only the calls' and launches'
 * ends are kept: a task's or plan's stop only says its host work is done,
 * and a channel's end comes with its GPU timer (a state). */
static int stop_event(void *handle)
{
	uint64_t h = P(handle);
	unsigned code = h & 15;
	if (!h || code == HC_GROUP || code == HC_COLL || code == HC_P2P || code == HC_KERNEL_CH ||
	    !ct.active)
		return 0;
	struct ct_thread *t = ct_self();
	struct ct_rec *r;
	uint64_t *f;
	if (!t || !(f = begin(t, CT_EV_NCCL_STOP, F_NCCL_STOP_N, &r)))
		return 0;
	f[F_NCCL_STOP_TS] = ct_stamp(), f[F_NCCL_STOP_ID] = h;
	commit(t, r);
	return 0;
}

static int record_state(void *handle, int state, union np_state_args *args)
{
	uint64_t h = P(handle), value = 0;
	if (!h || !ct.active)
		return 0;
	if (state == NPS_KERNEL_CH_STOP)
		value = args ? args->kernel_ch.timer : 0;
	else if (state != NPS_GROUP_START_API_STOP && state != NPS_GROUP_END_API_START)
		return 0;
	struct ct_thread *t = ct_self();
	struct ct_rec *r;
	uint64_t *f;
	if (!t || !(f = begin(t, CT_EV_NCCL_STATE, F_NCCL_STATE_N, &r)))
		return 0;
	f[F_NCCL_STATE_TS] = ct_stamp(), f[F_NCCL_STATE_ID] = h;
	f[F_NCCL_STATE_STATE] = (uint64_t)state, f[F_NCCL_STATE_VALUE] = value;
	commit(t, r);
	return 0;
}

/* NCCL unloads the plugin when its last communicator goes; our writer
 * thread and handlers must outlive that, so the library stays mapped. */
static void pin_library(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_RELAXED) || !ct.self_path[0])
		return;
	if (!dlopen(ct.self_path, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
		ct_debug("cannot pin %s: %s", ct.self_path, dlerror());
}

/* The communicator's definition goes through the definitions queue: the
 * proxy thread's events name it too and must find it first in the file. */
static void define_comm(uint64_t ctx, uint64_t hash, const char *name, int nnodes, int nranks,
                        int rank, unsigned abi)
{
	size_t len = name ? strnlen(name, 4096) : 0;
	struct ct_rec *r = ct_rec_new(CT_EV_NCCL_COMM, F_NCCL_COMM_N, (uint32_t)len);
	if (!r)
		return;
	r->f[F_NCCL_COMM_CTX] = ctx;
	r->f[F_NCCL_COMM_COMM] = hash;
	r->f[F_NCCL_COMM_NNODES] = (uint64_t)nnodes;
	r->f[F_NCCL_COMM_NRANKS] = (uint64_t)nranks;
	r->f[F_NCCL_COMM_RANK] = (uint64_t)(int64_t)rank;
	r->f[F_NCCL_COMM_ABI] = abi;
	r->f[F_NCCL_COMM_NAME] = len;
	if (len)
		memcpy(&r->f[F_NCCL_COMM_N], name, len);
	/* Filed under the process, not the calling thread: defining a
	 * communicator must not make a process that records nothing write
	 * a file. */
	ct_defs_add_record(ct.pid, r);
	free(r);
}

/* The footer names the process's rank in its largest communicator (the
 * first of that size): what the tools show for a process that no launcher
 * gave a rank (torch.multiprocessing.spawn). */
static void note_rank(int nranks, int rank)
{
	if (nranks <= 0 || rank < 0 || rank >= nranks)
		return;
	uint64_t want = (uint64_t)(uint32_t)nranks << 32 | (uint32_t)rank;
	uint64_t cur = atomic_load(&ct.nccl_rank);
	while ((cur >> 32) < (uint64_t)(uint32_t)nranks &&
	       !atomic_compare_exchange_weak(&ct.nccl_rank, &cur, want))
		;
}

static int init_common(void **ctx, int *mask, uint64_t hash, const char *name, int nnodes,
                       int nranks, int rank, unsigned abi)
{
	ct_enter();
	if (ctx)
		*ctx = NULL;
	int want = abi >= 5 ? MASK_V5 : MASK_V4;
	if (!ct.active || !(ct.cfg.sources & CT_SRC_NCCL) || !ctx) {
		if (mask)
			*mask = 0; /* NCCL then skips every call */
		return 0;
	}
	pin_library();
	if (ct_watch_on())
		atomic_store(&ct_watch_name_hook, ct_nccl_str_of);
	/* Contexts are never freed: NCCL's proxy thread may still report a
	 * channel of a communicator that is being finalized. */
	struct nctx *c = calloc(1, sizeof *c);
	if (!c) {
		ct_once(nccl_oom, CT_LOG_WARN, "out of memory; NCCL collectives are not traced");
		if (mask)
			*mask = 0;
		return 0;
	}
	c->id = atomic_fetch_add(&next_ctx, 1);
	define_comm(c->id, hash, name, nnodes, nranks, rank, abi);
	note_rank(nranks, rank);
	/* The mask is NCCL's, shared by all communicators: the last init
	 * sets it for all. */
	if (mask)
		*mask = want;
	*ctx = c;
	ct_debug("NCCL communicator %s (rank %d of %d) attached, profiler ABI v%u",
	         name ? name : "", rank, nranks, abi);
	return 0;
}

static int init_v5(void **ctx, uint64_t comm_id, int *mask, const char *name, int nnodes,
                   int nranks, int rank, np_logfn log)
{
	(void)log;
	return init_common(ctx, mask, comm_id, name, nnodes, nranks, rank, 5);
}

static int init_v4(void **ctx, int *mask, const char *name, uint64_t hash, int nnodes, int nranks,
                   int rank, np_logfn log)
{
	(void)log;
	return init_common(ctx, mask, hash, name, nnodes, nranks, rank, 4);
}

static int finalize(void *ctx)
{
	struct nctx *c = ctx;
	if (!c || !ct.active)
		return 0;
	struct ct_thread *t = ct_recorder();
	struct ct_rec *r;
	uint64_t *f;
	if (t && (f = begin(t, CT_EV_NCCL_FINI, F_NCCL_FINI_N, &r))) {
		f[F_NCCL_FINI_TS] = ct_stamp(), f[F_NCCL_FINI_CTX] = c->id;
		commit(t, r);
	}
	return 0;
}

CT_API const struct np_v5 ncclProfiler_v6 = {"cuptrace", init_v5,      start_v5,
                                             stop_event, record_state, finalize};
CT_API const struct np_v5 ncclProfiler_v5 = {"cuptrace", init_v5,      start_v5,
                                             stop_event, record_state, finalize};
CT_API const struct np_v4 ncclProfiler_v4 = {"cuptrace", init_v4,      start_v4,
                                             stop_event, record_state, finalize};
