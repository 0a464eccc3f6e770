// SPDX-License-Identifier: MIT
/* The args of the .pftrace writer's slices as debug annotations, the same
 * keys and values as the Chrome JSON's args. */
#include "write/pftrace/pftrace_int.h"

#include <stdio.h>
#include <string.h>

/* ---- args as debug annotations */

static inline void a_uint(struct out *o, unsigned a, uint64_t v)
{
	out_need(o, 4 * PB_MAX);
	char *q = o->buf + o->len;
	*q = (char)(TE_ANNOTATIONS << 3 | PB_LEN);
	char *l = q + 1;
	q = pb_uint(q + 2, DA_NAME_IID, a + 1);
	q = pb_uint(q, DA_UINT, v);
	*l = (char)(q - l - 1);
	o->len = (size_t)(q - o->buf);
}

static inline void a_int(struct out *o, unsigned a, int64_t v)
{
	out_need(o, 4 * PB_MAX);
	char *q = o->buf + o->len;
	*q = (char)(TE_ANNOTATIONS << 3 | PB_LEN);
	char *l = q + 1;
	q = pb_uint(q + 2, DA_NAME_IID, a + 1);
	q = pb_uint(q, DA_INT, (uint64_t)v);
	*l = (char)(q - l - 1);
	o->len = (size_t)(q - o->buf);
}

static void a_bool(struct out *o, unsigned a, int v)
{
	size_t at = pb_open(o, TE_ANNOTATIONS);
	pb_put_uint(o, DA_NAME_IID, a + 1);
	pb_put_uint(o, DA_BOOL, v != 0);
	pb_close(o, at);
}

static void a_double(struct out *o, unsigned a, double v)
{
	size_t at = pb_open(o, TE_ANNOTATIONS);
	pb_put_uint(o, DA_NAME_IID, a + 1);
	pb_put_double(o, DA_DOUBLE, v);
	pb_close(o, at);
}

/* ns or thousandths as the JSON writes them: three decimals */
static void a_milli(struct out *o, unsigned a, int64_t v)
{
	a_double(o, a, (double)v / 1000.0);
}

static void a_str(struct out *o, unsigned a, const char *s, size_t n)
{
	size_t at = pb_open(o, TE_ANNOTATIONS);
	pb_put_uint(o, DA_NAME_IID, a + 1);
	pf_put_text(o, DA_STRING, s, n);
	pb_close(o, at);
}

static void a_hex(struct out *o, unsigned a, uint64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
	a_str(o, a, b, (size_t)n);
}

/* Written in place: three small nested messages whose lengths fit a byte. */
static void a_array3(struct out *o, unsigned a, const uint64_t *v)
{
	out_need(o, 8 * PB_MAX);
	char *q = o->buf + o->len;
	*q = (char)(TE_ANNOTATIONS << 3 | PB_LEN);
	char *l = q + 1;
	q = pb_uint(q + 2, DA_NAME_IID, a + 1);
	for (int i = 0; i < 3; i++) {
		*q = (char)(DA_ARRAY << 3 | PB_LEN);
		char *el = q + 1;
		q = pb_uint(q + 2, DA_UINT, v[i]);
		*el = (char)(q - el - 1);
	}
	*l = (char)(q - l - 1); /* < 64 bytes */
	o->len = (size_t)(q - o->buf);
}


void span_args(struct pft *p, const struct span *s)
{
	struct out *o = p->o;
	if (s->domain.sid != CT_SREF_NONE)
		a_str(o, A_DOMAIN, s->domain.s, s->domain.len);
	if (s->category) {
		if (s->category_name.sid != CT_SREF_NONE)
			a_str(o, A_CATEGORY, s->category_name.s, s->category_name.len);
		else
			a_uint(o, A_CATEGORY, s->category);
	}
	if (s->color & CT_COLOR_SET) {
		char b[8];
		snprintf(b, sizeof b, "#%06x", (unsigned)(s->color & 0xffffff));
		a_str(o, A_COLOR, b, 7);
	}
	if (s->ptype) {
		union {
			uint64_t u;
			double d;
		} d64 = {s->payload};
		union {
			uint32_t u;
			float f;
		} f32 = {(uint32_t)s->payload};
		switch (s->ptype) {
		case CT_PAYLOAD_U64: a_uint(o, A_PAYLOAD, s->payload); break;
		case CT_PAYLOAD_I64: a_int(o, A_PAYLOAD, (int64_t)s->payload); break;
		case CT_PAYLOAD_DOUBLE: a_double(o, A_PAYLOAD, d64.d); break;
		case CT_PAYLOAD_U32: a_uint(o, A_PAYLOAD, (uint32_t)s->payload); break;
		case CT_PAYLOAD_I32: a_int(o, A_PAYLOAD, (int32_t)(uint32_t)s->payload); break;
		case CT_PAYLOAD_FLOAT: a_double(o, A_PAYLOAD, (double)f32.f); break;
		default: break;
		}
	}
	if (s->unfinished)
		a_bool(o, A_UNFINISHED, 1);
}

/* A slice on its track (or on a lane of it when it overlaps). */

void span_event_args(struct pft *p, const struct m_event *ev)
{
	span_args(p, ev->span);
}

void kernel_args(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	const struct m_gpu *k = &ev->gpu;
	a_uint(o, A_CORR, k->corr);
	a_uint(o, A_DEVICE, k->device);
	a_uint(o, A_CONTEXT, k->context);
	a_uint(o, A_STREAM, k->stream);
	if (k->comm)
		a_bool(o, A_COMM, 1);
	a_uint(o, A_REGS, k->regs);
	a_uint(o, A_SMEM, k->ssmem + k->dsmem);
	const uint64_t *g = k->grid, *b = k->block;
	if (k->sms) {
		uint64_t blocks = g[0] * g[1] * g[2], threads = b[0] * b[1] * b[2];
		uint64_t warp = k->warp ? k->warp : 32;
		uint64_t bpsm = blocks * 1000 / k->sms;
		a_milli(o, A_BPSM, (int64_t)bpsm);
		a_milli(o, A_WPSM, (int64_t)(bpsm * ((threads + warp - 1) / warp)));
	}
	a_array3(o, A_GRID, g);
	a_array3(o, A_BLOCK, b);
	if (k->graph) {
		a_uint(o, A_GRAPH, k->graph);
		a_uint(o, A_NODE, k->node);
	}
	if (k->ext)
		a_uint(o, A_EXT, k->ext);
}

void transfer_args(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	const struct m_gpu *g = &ev->gpu;
	uint64_t dur = ev->end > ev->ts ? ev->end - ev->ts : 0;
	a_uint(o, A_DEVICE, g->device);
	a_uint(o, A_CONTEXT, g->context);
	a_uint(o, A_STREAM, g->stream);
	a_uint(o, A_CORR, g->corr);
	if (g->ext)
		a_uint(o, A_EXT, g->ext);
	a_uint(o, A_BYTES, g->bytes);
	a_milli(o, A_BW, dur ? (int64_t)((double)g->bytes * 1000.0 / (double)dur) : 0);
	if (ev->cat == MC_MEMSET) {
		a_uint(o, A_VALUE, g->value);
		return;
	}
	const char *kind = gpu_copy_kind(g->kind);
	a_str(o, A_KIND, kind, strlen(kind));
	if (g->src_dev != g->device || g->dst_dev != g->device) {
		a_uint(o, A_SRC_DEV, g->src_dev);
		a_uint(o, A_DST_DEV, g->dst_dev);
	}
}

void sync_args(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	const struct m_gpu *y = &ev->gpu;
	a_uint(o, A_DEVICE, y->device);
	a_uint(o, A_CONTEXT, y->context);
	if (y->stream < 0xffffffffull)
		a_uint(o, A_STREAM, y->stream);
	a_uint(o, A_CORR, y->corr);
	if (y->ext)
		a_uint(o, A_EXT, y->ext);
	if (y->event < 0xffffffffull)
		a_uint(o, A_EVENT, y->event);
	if (gpu_sync_on_event(y->sync_type)) {
		a_int(o, A_WAIT_STREAM, y->wait_stream);
		a_int(o, A_WAIT_CORR, y->wait_corr);
		a_int(o, A_WAIT_EVENT, y->event < 0xffffffffull ? (int64_t)y->event : -1);
	}
}

void api_args(struct pft *p, const struct m_event *ev)
{
	a_uint(p->o, A_CBID, ev->api.cbid);
	a_uint(p->o, A_CORR, ev->api.corr);
	if (ev->api.ext)
		a_uint(p->o, A_EXT, ev->api.ext);
	if (ev->api.status)
		a_uint(p->o, A_RETURN, ev->api.status);
}

/* A PyTorch operator or scope: the JSON's args, dims and types as the
 * file has them (text: "2,3;3", "float;float"). */
void torch_args(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	const struct m_torch *t = &ev->torch;
	a_uint(o, A_EXT, t->id);
	if (t->seq) {
		a_uint(o, A_SEQNUM, t->seq - 1);
		a_uint(o, A_FWD_TID, t->fwd_tid);
	}
	if (t->dims.len)
		a_str(o, A_DIMS, t->dims.s, t->dims.len);
	if (t->types.len)
		a_str(o, A_TYPES, t->types.s, t->types.len);
	if (t->stack.len)
		a_str(o, A_STACK, t->stack.s, t->stack.len);
	if (t->end_track)
		a_int(o, A_ENDED, t->end_track->tid);
}

/* A torch allocation or free: Kineto's [memory] args. */
void tmem_args(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	const struct m_tmem *a = &ev->tmem;
	a_uint(o, A_DEV_TYPE, a->device < 0 ? 0 : 1);
	a_int(o, A_DEV_ID, a->device);
	a_uint(o, A_ADDR, a->ptr);
	a_int(o, A_MBYTES, a->bytes);
	a_uint(o, A_TOTAL_ALLOC, a->allocated);
	a_uint(o, A_TOTAL_RES, a->reserved);
	if (a->op)
		a_uint(o, A_EXT, a->op);
}

void hang_args(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	a_str(o, A_OPERATION, ev->hang.func.s ? ev->hang.func.s : "", ev->hang.func.s ? ev->hang.func.len : 0);
	if (ev->hang.has_seq)
		a_int(o, A_SEQ, (int64_t)ev->hang.seq);
	a_int(o, A_IN_FLIGHT, (int64_t)ev->hang.in_flight);
	if (ev->hang.comm) {
		a_hex(o, A_COMMH, ev->hang.comm->hash);
		a_str(o, A_COMM_NAME, ev->hang.comm->name,
		      strnlen(ev->hang.comm->name, sizeof ev->hang.comm->name));
	}
}

void nccl_args(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	const struct nccl_op *op = ev->nccl.op;
	const struct nccl_plan *pl = ev->nccl.plan;
	if (ev->cat == MC_NCCL_GROUP) {
		a_uint(o, A_CALLS, op->group_size);
		return;
	}
	if (!op) {
		a_uint(o, A_OPS, pl->n);
		if (pl->has_kernel && pl->kernel.name) {
			a_str(o, A_KERNEL, pl->kernel.name, strlen(pl->kernel.name));
			a_int(o, A_KCORR, (int64_t)pl->kernel.correlation);
		}
		return;
	}
	a_str(o, A_OP, op->func, strlen(op->func));
	if (op->has_seq)
		a_int(o, A_SEQ, (int64_t)op->seq);
	a_int(o, A_COUNT, (int64_t)op->count);
	a_str(o, A_DATATYPE, op->datatype, strlen(op->datatype));
	a_int(o, A_BYTES, (int64_t)op->bytes);
	if (op->is_p2p)
		a_int(o, A_PEER, (int64_t)op->peer);
	else
		a_int(o, A_ROOT, (int64_t)op->root);
	if (op->comm) {
		a_hex(o, A_COMMH, op->comm->hash);
		if (op->comm->name[0])
			a_str(o, A_COMM_NAME, op->comm->name, strlen(op->comm->name));
		a_int(o, A_NRANKS, (int64_t)op->comm->nranks);
		a_int(o, A_NNODES, (int64_t)op->comm->nnodes);
	}
	a_int(o, A_RANK, (int64_t)op->rank);
	if (op->algo[0])
		a_str(o, A_ALGO, op->algo, strlen(op->algo));
	if (op->proto[0])
		a_str(o, A_PROTO, op->proto, strlen(op->proto));
	a_int(o, A_CHANNELS, (int64_t)op->channels);
	if (op->warps)
		a_int(o, A_WARPS, (int64_t)op->warps);
	if (op->stream)
		a_hex(o, A_STREAM, op->stream);
	if (op->enqueue_end >= op->enqueue_start)
		a_milli(o, A_ENQUEUE, (int64_t)(op->enqueue_end - op->enqueue_start));
	if (op->gpu_end > op->gpu_start && op->gpu_start) {
		a_milli(o, A_GPU_TIME, (int64_t)(op->gpu_end - op->gpu_start));
		a_int(o, A_GPU_CHANNELS, (int64_t)op->gpu_channels);
	}
	if (op->group) {
		a_hex(o, A_GROUP, op->group);
		a_int(o, A_GROUP_SIZE, (int64_t)op->group_size);
	}
	if (pl->has_kernel && pl->kernel.name) {
		a_str(o, A_KERNEL, pl->kernel.name, strlen(pl->kernel.name));
		a_int(o, A_KCORR, (int64_t)pl->kernel.correlation);
	}
	if (op->step >= 0)
		a_int(o, A_STEP, (int64_t)op->step);
}

/* An MPI call's arguments (MC_MPI), or the watchdog's mpi_hang's. */
void mpi_args(struct pft *p, const struct m_event *ev)
{
	struct out *o = p->o;
	const struct m_mpi *x = ev->mpi;
	a_str(o, ev->cat == MC_MPI_HANG ? A_OPERATION : A_OP, x->func.s, x->func.len);
	if (x->comm_id)
		a_hex(o, A_COMMH, x->comm_id);
	if (x->comm) {
		if (x->comm->name[0])
			a_str(o, A_COMM_NAME, x->comm->name, strlen(x->comm->name));
		a_int(o, A_NRANKS, (int64_t)x->comm->size);
		a_int(o, A_RANK, x->comm->rank);
	}
	if (x->seq)
		a_int(o, A_SEQ, (int64_t)x->seq);
	if (ev->cat == MC_MPI_HANG) {
		a_int(o, A_IN_FLIGHT, (int64_t)x->in_flight);
		return;
	}
	static const char *const special[] = {"MPI_ANY_SOURCE", "MPI_PROC_NULL", "MPI_ROOT"};
	if (x->peer >= 0)
		a_int(o, x->seq ? A_ROOT : A_PEER, x->peer);
	else if (x->peer >= CT_MPI_ROOT) /* as the JSON names them */
		a_str(o, x->seq ? A_ROOT : A_PEER, special[-x->peer - 1], strlen(special[-x->peer - 1]));
	if (x->peer >= 0 && x->world_peer >= 0)
		a_int(o, x->seq ? A_WORLD_ROOT : A_WORLD_PEER, x->world_peer);
	if (x->tag != CT_MPI_NO_TAG)
		a_int(o, A_TAG, x->tag);
	if (x->count || x->datatype.len)
		a_int(o, A_COUNT, (int64_t)x->count);
	if (x->datatype.len)
		a_str(o, A_DATATYPE, x->datatype.s, x->datatype.len);
	if (x->bytes)
		a_int(o, A_BYTES, (int64_t)x->bytes);
	if (x->recv_bytes)
		a_int(o, A_RECV_BYTES, (int64_t)x->recv_bytes);
	if (x->req)
		a_int(o, A_REQUEST, (int64_t)x->req);
	if (x->done)
		a_int(o, A_DONE, (int64_t)x->done);
	if (x->status)
		a_int(o, A_RETURN, x->status);
	if (x->unfinished)
		a_bool(o, A_UNFINISHED, 1);
}
