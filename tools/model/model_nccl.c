// SPDX-License-Identifier: MIT
/* NCCL operations in the model. nccl_ops.c joins the NCCL records of a
 * file into plans (one kernel launch, its operations, their calls and GPU
 * times, the NCCL kernel CUPTI saw); here each plan becomes slices and
 * flows. Each communicator gets two tracks in the rank's CPU process:
 *   MT_NCCL      the calls: one slice per operation from its API call to
 *                the end of its kernel launch (members of an explicit
 *                group: the call itself, inside an MC_NCCL_GROUP slice);
 *   MT_NCCL_GPU  where the GPU ran it (kernel-channel timers, or the NCCL
 *                kernel CUPTI saw), one slice per operation, or one per
 *                fused kernel when its operations overlap;
 * with a flow from each call to its GPU slice, and from the plan's first
 * call to the CUPTI kernel on its stream's track.
 * Track numbers: NCCL_TID + 2 x (communicator's order in the file), + 1
 * for the GPU track; far above any Linux tid (at most 2^22), never 0. */
#include "model/model_int.h"
#include "util/xalloc.h"

#include <stdlib.h>

#define NO_COMM 4095 /* track of operations whose communicator is unknown */

struct model_nccl {
	struct model *m;
	struct nccl_ops *ops;
};

static const struct m_track *comm_track(struct model *m, const struct nccl_comm *cm, int gpu)
{
	int i = cm && cm->index < NO_COMM ? cm->index : NO_COMM;
	return model_track(m, gpu ? MT_NCCL_GPU : MT_NCCL, 0, NCCL_TID + 2 * (int64_t)i + gpu, cm);
}

static void announce(struct model *m, const struct nccl_comm *cm)
{
	comm_track(m, cm, 0);
	comm_track(m, cm, 1);
}

/* Operations of a fused kernel are drawn one by one on the GPU track only
 * when they do not overlap (slices on a track must nest). */
static int disjoint(const struct nccl_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		if (!p->ops[i].gpu_start)
			return 0;
		if (i && p->ops[i].gpu_start < p->ops[i - 1].gpu_end)
			return 0;
	}
	return 1;
}

static void slice(struct model *m, enum m_cat cat, const struct m_track *tr, uint64_t ts,
                  uint64_t end, const struct nccl_op *op, const struct nccl_plan *p)
{
	struct m_event ev;
	model_head(&ev, ME_SLICE, cat, tr, ts, end, NULL);
	ev.nccl.op = op;
	ev.nccl.plan = p;
	model_emit(m, &ev);
}

static void on_plan(void *ctx, const struct nccl_plan *p)
{
	struct model_nccl *n = ctx;
	struct model *m = n->m;
	announce(m, p->comm);
	for (size_t i = 0; i < p->n; i++)
		announce(m, p->ops[i].comm);

	/* GPU side: per operation, or the fused kernel as a whole. */
	int each = disjoint(p);
	uint64_t gs = p->gpu_start, ge = p->gpu_end;
	if (!gs && p->has_kernel) /* no channel timers: the CUPTI kernel */
		gs = p->kernel.ts, ge = p->kernel.end;
	const struct m_track *gtr = comm_track(m, p->comm, 1);
	if (gs && (!each || p->n > 1))
		slice(m, MC_NCCL_GPU, gtr, gs, ge, NULL, p);
	const struct m_track *ktr =
	    p->has_kernel ? model_stream_track(m, p->kernel.device, p->kernel.stream) : NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct nccl_op *op = &p->ops[i];
		const struct m_track *tr = comm_track(m, op->comm, 0);
		/* The group around members of an explicit group. */
		int member = op->group && (op->group_size > 1 || op->group_depth > 1);
		if (member && op->group_first && op->group_end > op->group_start)
			slice(m, MC_NCCL_GROUP, tr, op->group_start, op->group_end, op, p);
		uint64_t s = op->api_start ? op->api_start : op->enqueue_start;
		uint64_t e = member                            ? (op->api_end ? op->api_end : s)
		             : op->group_end > op->enqueue_end ? op->group_end
		                                               : op->enqueue_end;
		if (e < s)
			e = s;
		slice(m, MC_NCCL, tr, s, e, op, p);
		if (each && op->gpu_start)
			slice(m, MC_NCCL_GPU, gtr, op->gpu_start, op->gpu_end, op, p);
		/* The arrow leaves the call at its launch when the call holds it. */
		uint64_t from = p->launch_start >= s && p->launch_start <= e ? p->launch_start
		                                                             : s + (e - s) / 2;
		uint64_t to = each && op->gpu_start ? op->gpu_start : gs;
		if (to)
			model_flow(m, MC_NCCL_FLOW, tr, from, gtr, to);
		if (ktr && i == 0)
			model_flow(m, MC_NCCL_FLOW, tr, from, ktr, p->kernel.ts);
	}
}

const char *m_nccl_name(const struct m_event *ev, char *buf, size_t cap)
{
	const struct nccl_plan *p = ev->nccl.plan;
	if (ev->cat == MC_NCCL_GROUP)
		return "ncclGroup";
	if (ev->nccl.op)
		return ev->nccl.op->func;
	if (p->n == 1)
		return p->ops[0].func;
	snprintf(buf, cap, "ncclGroup (%zu ops)", p->n);
	return buf;
}

/* The watchdog's hang_suspected: an instant on the communicator's track. */
static void hang(struct model *m, struct nccl_ops *ops, const struct ct_event *ev)
{
	const struct nccl_comm *cm = NULL;
	for (size_t i = 0; i < nccl_ops_ncomms(ops) && !cm; i++)
		if (nccl_ops_comm(ops, i)->ctx == ev->v[F_HANG_CTX])
			cm = nccl_ops_comm(ops, i);
	announce(m, cm);
	struct m_event e;
	uint64_t ts = ev->v[F_HANG_TS];
	model_head(&e, ME_INSTANT, MC_HANG, comm_track(m, cm, 0), ts, ts, ev);
	e.hang.comm = cm;
	e.hang.func = (struct sref){ev->v[F_HANG_FUNC], ev->s[F_HANG_FUNC], ev->sl[F_HANG_FUNC]};
	e.hang.has_seq = ev->v[F_HANG_HAS_SEQ] != 0;
	e.hang.seq = ev->v[F_HANG_SEQ];
	e.hang.in_flight = ev->v[F_HANG_IN_FLIGHT];
	model_emit(m, &e);
}

void model_nccl_record(struct model *m, const struct ct_event *ev)
{
	struct model_nccl *n = m->nccl;
	if (!n) {
		n = xcalloc(1, sizeof *n);
		n->m = m;
		n->ops = nccl_ops_new(on_plan, n);
		nccl_ops_step_range(n->ops, nccl_step_range_of(&m->t->f.h));
		m->nccl = n;
	}
	if (ev->kind == CT_EV_HANG) {
		hang(m, n->ops, ev);
		return;
	}
	nccl_ops_event(n->ops, ev);
	/* A communicator's calls track from its definition on: a rank that
	 * never called an operation on it is still one of its members (a hang
	 * at the first collective). Not in a forked child's file or a later
	 * part's, which repeat their process's definitions. */
	const struct ct_header *hd = &m->t->f.h;
	for (size_t i = 0; ev->kind == CT_EV_NCCL_COMM && !hd->forked_from && !ct_header_later_part(hd) &&
	                   i < nccl_ops_ncomms(n->ops); i++)
		if (nccl_ops_comm(n->ops, i)->ctx == ev->v[F_NCCL_COMM_CTX])
			comm_track(m, nccl_ops_comm(n->ops, i), 0);
}

void model_nccl_end(struct model *m)
{
	struct model_nccl *n = m->nccl;
	if (!n)
		return;
	nccl_ops_finish(n->ops);
	nccl_ops_free(n->ops);
	free(n);
	m->nccl = NULL;
}
