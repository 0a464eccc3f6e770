// SPDX-License-Identifier: MIT
/* NCCL slices of the model as Chrome trace events (cat nccl): calls on
 * their communicator's track, group calls around members of a group, GPU
 * time on the communicator's GPU track, with the operation's arguments. */
#include "write/chrome/chrome_int.h"
#include "model/nccl_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void hex(struct out *o, uint64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof b, "\"0x%llx\"", (unsigned long long)v);
	out_mem(o, b, (size_t)n);
}

static int slice(struct chrome *c, const char *name, const struct m_event *ev)
{
	struct out *o = c->o;
	uint64_t ts = ev->ts, end = ev->end;
	if (!chrome_sep(c))
		return 0;
	out_lit(o, "{\"ph\":\"X\",\"cat\":\"nccl\",\"name\":");
	out_json_str(o, name, strlen(name));
	chrome_track_pt(c, ev->track);
	chrome_ts(c, ts);
	out_lit(o, ",\"dur\":");
	out_us(o, end > ts ? (int64_t)(end - ts) : 0);
	return 1;
}

#define STR(k, v)                                                                                  \
	do {                                                                                       \
		out_lit(o, ",\"" k "\":");                                                         \
		out_json_str(o, (v), strlen(v));                                                   \
	} while (0)
#define NUM(k, v)                                                                                  \
	do {                                                                                       \
		out_lit(o, ",\"" k "\":");                                                         \
		out_i64(o, (int64_t)(v));                                                          \
	} while (0)

static void op_args(struct chrome *c, const struct nccl_op *op, const struct nccl_plan *p)
{
	struct out *o = c->o;
	out_lit(o, ",\"args\":{\"op\":");
	out_json_str(o, op->func, strlen(op->func));
	if (op->has_seq)
		NUM("seq", op->seq);
	NUM("count", op->count);
	STR("datatype", op->datatype);
	NUM("bytes", op->bytes);
	if (op->is_p2p)
		NUM("peer", op->peer);
	else
		NUM("root", op->root);
	if (op->comm) {
		out_lit(o, ",\"comm\":");
		hex(o, op->comm->hash);
		if (op->comm->name[0])
			STR("comm_name", op->comm->name);
		NUM("nranks", op->comm->nranks);
		NUM("nnodes", op->comm->nnodes);
	}
	NUM("rank", op->rank);
	if (op->algo[0])
		STR("algorithm", op->algo);
	if (op->proto[0])
		STR("protocol", op->proto);
	NUM("channels", op->channels);
	if (op->warps)
		NUM("warps", op->warps);
	if (op->stream) {
		out_lit(o, ",\"stream\":");
		hex(o, op->stream);
	}
	if (op->enqueue_end >= op->enqueue_start) {
		out_lit(o, ",\"enqueue (us)\":");
		out_us(o, (int64_t)(op->enqueue_end - op->enqueue_start));
	}
	if (op->gpu_end > op->gpu_start && op->gpu_start) {
		out_lit(o, ",\"gpu time (us)\":");
		out_us(o, (int64_t)(op->gpu_end - op->gpu_start));
		NUM("gpu channels", op->gpu_channels);
	}
	if (op->group) {
		out_lit(o, ",\"group\":");
		hex(o, op->group);
		NUM("group size", op->group_size);
	}
	if (p->has_kernel && p->kernel.name) {
		STR("kernel", p->kernel.name);
		NUM("kernel correlation", p->kernel.correlation);
	}
	if (op->step >= 0)
		NUM("step", op->step);
	out_lit(o, "}}");
}

void chrome_nccl(struct chrome *c, const struct m_event *ev)
{
	struct out *o = c->o;
	const struct nccl_op *op = ev->nccl.op;
	const struct nccl_plan *p = ev->nccl.plan;
	char buf[64];
	const char *name = m_nccl_name(ev, buf, sizeof buf);
	if (ev->cat == MC_NCCL_GROUP) {
		if (!slice(c, name, ev))
			return;
		out_lit(o, ",\"args\":{\"calls\":");
		out_u64(o, op->group_size);
		out_lit(o, "}}");
	} else if (op) {
		if (slice(c, name, ev))
			op_args(c, op, p);
	} else { /* a fused kernel's operations as a whole */
		if (!slice(c, name, ev))
			return;
		out_lit(o, ",\"args\":{\"ops\":");
		out_u64(o, p->n);
		if (p->has_kernel && p->kernel.name) {
			STR("kernel", p->kernel.name);
			NUM("kernel correlation", p->kernel.correlation);
		}
		out_lit(o, "}}");
	}
}
