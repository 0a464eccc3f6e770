// SPDX-License-Identifier: MIT
/* Internals shared by the files of the NCCL join: nccl_ops.c (the API and
 * the events) -> nccl_ops_plans.c (handing out plans) ->
 * nccl_ops_kernels.c (NCCL kernels to launches) -> nccl_ops_nodes.c (the
 * nodes by id). Calls go that way only. */
/* Events arrive in file order, which is per-thread order only: the proxy
 * thread's kernel-channel events can come before the task they belong to,
 * a plan's events before its launch. So every id names a node, created on
 * first mention (as a placeholder when only referenced), filled in as its
 * events come, and plans are put together only when handed out. */
#ifndef CT_NCCL_OPS_INT_H
#define CT_NCCL_OPS_INT_H

#include "model/nccl_ops.h"
#include "util/idmap.h"

#include <stdint.h>

#define HORIZON_NS  (30ull * 1000000000ull)
#define SWEEP_EVERY 8192
/* The most nodes held before the oldest plans are handed out whether
 * quiet or not (see nops_sweep): a bound in records, not trace time, so
 * memory does not grow with a trace's length or rate. In the files of
 * tests/progs/nccl_harness a plan's records lie at most about 10,000
 * NCCL records apart (a thread's ring chunk reaches the file up to ~90 ms
 * after its first record); this holds several times that. */
#define HOLD_NODES 65536
#define NAME_SLOTS 1024 /* names told apart: NAME_SLOTS / 2 (then "") */

enum { N_NONE = 0 }; /* node kind 0: only referenced so far */
/* F_CAND: in nccl_ops.cand; F_SEEN: met already by the pass over it under way. */
enum { F_STOPPED = 1, F_REPORTED = 2, F_MATCHED = 4, F_CAND = 8, F_SEEN = 16 };

/* 192 bytes, on 64-byte boundaries, the fields in the cache line of the
 * records that come long after a node was made (when it is cold): the
 * held set's scans (nops_sorted, nops_plans, the forced hand-out's pass)
 * and stop records read only line 0, a kernel channel's start and end
 * lines 0 and 1 of its task; line 2 is read when a plan is handed out. */
struct node {
	/* line 0 */
	uint64_t id;
	uint64_t ts, last, end;
	uint64_t parent, link; /* task: its plan; plan: its launch */
	int32_t tasks, sib;    /* plan: first task; task: next task of its plan */
	uint32_t kernel; /* launch: the NCCL kernel that ran it, in e->lk (+ 1; 0 none) */
	uint8_t kind, flags;
	uint8_t kept; /* == nccl_ops.epoch: kept by the forced hand-out under way */
	uint8_t pad0;
	/* line 1 */
	uint64_t gmin, gmax;  /* task: GPU timer span; channel: its start */
	unsigned gch, gdone; /* task: channels that started, that ended */
	int64_t tid;
	uint64_t ctx, count, seq, stream;
	/* line 2 */
	int64_t root, rank;
	uint64_t depth;
	/* Names by number (nops_name): 8 bytes, not 4 x NCCL_NAME, in a
	 * node of which tens of thousands are held, read again when cold. */
	uint16_t func, dtype, algo, proto;
	unsigned nch, nwarps, members;
	unsigned fmask; /* launch: operations of its plan (func_bit) */
	char pad2[16];
};
_Static_assert(sizeof(struct node) == 192, "a node is three cache lines");

struct launch_kernel { /* a kernel matched to a launch still held */
	struct nccl_kernel k;
	int32_t next; /* free list */
};

struct kern {
	struct nccl_kernel k;
	int used;
};

struct smap { /* cudaStream_t value <-> CUPTI (device, stream) */
	uint64_t ptr, device, stream;
};

struct nccl_ops {
	nccl_plan_fn fn;
	void *ctx;
	struct node *n;
	size_t nn, cap;
	size_t live, hold; /* nodes in use; the most held before forcing plans out */
	/* Free nodes (a stack: the top is taken first); after a forced
	 * hand-out, lowest index on top. */
	int32_t *free;
	size_t nfree, freecap;
	struct idmap ids; /* node id -> its index in n */
	/* Indices of the nodes that may be plans (plan_like), so that finding
	 * the plans does not scan the held set: every live node that is
	 * plan_like is here and has F_CAND. Entries of nodes since dropped
	 * or no longer plan_like (and repeats) go at the next nops_plans. */
	int32_t *cand;
	size_t ncand, candcap;
	struct nccl_comm **comm; /* each allocated alone: ops and tracks keep pointers */
	size_t ncomm, commcap;
	struct kern *kern;
	size_t nkern, kerncap;
	struct smap *sm;
	size_t nsm;
	struct {
		uint64_t ts;
		int64_t step;
	} * steps;
	size_t nsteps, stepcap;
	int steps_unsorted; /* a step record older than the one before it */
	int step_range;
	uint8_t *is_nccl; /* per kernel-name string id: 0 not yet seen, 1 NCCL's, 2 not */
	size_t nis;
	int64_t gpu_offset; /* tracer clock - GPU timer, best estimate */
	int have_offset;
	uint64_t now, horizon;
	/* At most the smallest `last` of the live nodes: every value a record
	 * gives `last` is that record's ts, so the smallest ts since the
	 * last full scan (which makes it exact) bounds it. A sweep whose
	 * limit is below it has nothing quiet to hand out or forget, and
	 * skips its scans of the held set. */
	uint64_t min_last;
	unsigned since_sweep;
	uint8_t epoch; /* of the last forced hand-out (never 0: new nodes have 0) */
	struct nccl_op *ops;
	size_t opcap;
	/* The names nodes hold (operations, datatypes, algorithms, protocols:
	 * a few dozen); name 0 is "". Found by hash: slot -> number + 1. */
	struct launch_kernel *lk; /* few: launches are handed out soon after their kernel */
	size_t nlk, lkcap;
	int32_t lkfree;
	char (*names)[NCCL_NAME];
	size_t nnames, namecap;
	uint16_t name_slot[NAME_SLOTS];
};

static inline struct node *nops_find(struct nccl_ops *e, uint64_t id)
{
	int64_t i = id ? idmap_get(&e->ids, id) : -1;
	return i >= 0 ? &e->n[i] : NULL;
}

/* The node of id, created empty when new. Pointers into e->n stay valid
 * until the next call (the array may move). */
struct node *nops_get(struct nccl_ops *e, uint64_t id);
void nops_drop(struct nccl_ops *e, struct node *x);
/* Slot i is free (taken before the slots freed earlier). */
void nops_free_push(struct nccl_ops *e, int32_t i);
/* The number of name s (len bytes, cut at NCCL_NAME - 1 and at a NUL, as
 * a copy into char[NCCL_NAME] would); e->names[it] is the name. */
uint16_t nops_name(struct nccl_ops *e, const char *s, size_t len);
/* Launch x ran kernel k (x owns k's name from now on). */
void nops_set_kernel(struct nccl_ops *e, struct node *x, const struct nccl_kernel *k);
/* The kernel of launch x, or NULL. */
static inline const struct nccl_kernel *nops_kernel(const struct nccl_ops *e, const struct node *x)
{
	return x->kernel ? &e->lk[x->kernel - 1].k : NULL;
}

static inline int is_task(const struct node *x)
{
	return x->kind == CT_EV_NCCL_COLL || x->kind == CT_EV_NCCL_P2P;
}

/* A plan: a node with tasks, or a task without a plan. */
static inline int plan_like(const struct node *x)
{
	return x->tasks >= 0 || (is_task(x) && !x->link);
}

void nops_cand_add(struct nccl_ops *e, struct node *x);
/* After x's kind, link or tasks changed: x is listed if it became a plan. */
static inline void nops_cand(struct nccl_ops *e, struct node *x)
{
	if (!(x->flags & F_CAND) && plan_like(x))
		nops_cand_add(e, x);
}

static inline void nops_touch(struct nccl_ops *e, uint64_t id, uint64_t ts)
{
	struct node *x = nops_find(e, id);
	if (x && ts > x->last)
		x->last = ts;
}

/* The live nodes for which want(x, limit) holds, by start time, then id;
 * *n of them. The caller frees the array. */
struct node **nops_sorted(struct nccl_ops *e, int (*want)(const struct node *x, uint64_t limit),
                          uint64_t limit, size_t *n);

/* The same, over the plans only (want(x) implies plan_like(x)), from
 * the list of candidates rather than the whole held set. */
struct node **nops_plans(struct nccl_ops *e, int (*want)(const struct node *x, uint64_t limit),
                         uint64_t limit, size_t *n);

/* A GPU kernel event: an NCCL kernel is kept for the join. */
void nops_kernel_event(struct nccl_ops *e, const struct ct_event *ev);
void nops_match_kernels(struct nccl_ops *e, uint64_t limit);

void nops_sweep(struct nccl_ops *e, int final);

#endif
