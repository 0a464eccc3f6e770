/* NCCL operations as Chrome trace events. Under the rank's process, each
 * communicator gets two tracks:
 *   "NCCL <name> ..."      the calls: one slice per operation from its API
 *                          call to the end of its kernel launch (members
 *                          of an explicit group: the call itself, inside a
 *                          "ncclGroup" slice for the whole group);
 *   "NCCL <name> ... GPU"  where the GPU ran it (kernel-channel timers, or
 *                          the NCCL kernel CUPTI saw), one slice per
 *                          operation, or one per fused kernel when its
 *                          operations overlap;
 * with a flow arrow (cat "nccl") from each call to its GPU slice, and to
 * the CUPTI kernel when chrome_cupti.c tells where that is drawn.
 * Track ids: NCCL_TID + 2 x (communicator's order in the file), + 1 for
 * the GPU track; far above any Linux tid (at most 2^22), never 0. */
#include "out/chrome_int.h"
#include "model/nccl_ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCCL_TID 1000000000
#define NO_COMM  4095 /* track of operations whose communicator is unknown */

struct cn {
	struct chrome *c;
	struct nccl_ops *ops;
	unsigned char named[NO_COMM + 1];
};

/* chrome_cupti.c defines the real one once GPU streams are drawn; until
 * then there is no kernel slice to point at. */
__attribute__((weak)) int chrome_cupti_stream_track(struct chrome *c, uint64_t device,
                                                    uint64_t context, uint64_t stream,
                                                    uint64_t *pid, int64_t *tid)
{
	(void)c, (void)device, (void)context, (void)stream, (void)pid, (void)tid;
	return 0;
}

static int track_index(const struct nccl_comm *cm)
{
	return cm && cm->index < NO_COMM ? cm->index : NO_COMM;
}

static int64_t cpu_tid(const struct nccl_comm *cm)
{
	return NCCL_TID + 2 * (int64_t)track_index(cm);
}

static void hex(struct out *o, uint64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof b, "\"0x%llx\"", (unsigned long long)v);
	out_mem(o, b, (size_t)n);
}

static void comm_label(char *buf, size_t len, const struct nccl_comm *cm)
{
	if (!cm)
		snprintf(buf, len, "NCCL (unknown communicator)");
	else
		snprintf(buf, len, "NCCL %s%s%016llx rank %lld/%lld", cm->name,
		         cm->name[0] ? " " : "", (unsigned long long)cm->hash, (long long)cm->rank,
		         (long long)cm->nranks);
}

static void name_tracks(struct cn *n, const struct nccl_comm *cm)
{
	int i = track_index(cm);
	if (n->named[i])
		return;
	n->named[i] = 1;
	struct chrome *c = n->c;
	struct out *o = c->o;
	char label[160];
	comm_label(label, sizeof label, cm);
	for (int gpu = 0; gpu < 2; gpu++) {
		if (!chrome_sep(c))
			return;
		out_lit(o, "{\"ph\":\"M\",\"name\":\"thread_name\"");
		chrome_pid_tid(c, c->t->pid, cpu_tid(cm) + gpu);
		out_lit(o, ",\"args\":{\"name\":");
		char full[200];
		snprintf(full, sizeof full, "%s%s", label, gpu ? " GPU" : "");
		out_json_str(o, full, strlen(full));
		out_lit(o, "}}");
		if (!chrome_sep(c))
			return;
		out_lit(o, "{\"ph\":\"M\",\"name\":\"thread_sort_index\"");
		chrome_pid_tid(c, c->t->pid, cpu_tid(cm) + gpu);
		out_lit(o, ",\"args\":{\"sort_index\":");
		out_i64(o, 100 + 2 * i + gpu);
		out_lit(o, "}}");
	}
}

static void slice(struct chrome *c, const char *name, int64_t tid, uint64_t ts, uint64_t end)
{
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"X\",\"cat\":\"nccl\",\"name\":");
	out_json_str(o, name, strlen(name));
	chrome_pid_tid(c, c->t->pid, tid);
	chrome_ts(c, ts);
	out_lit(o, ",\"dur\":");
	out_us(o, end > ts ? (int64_t)(end - ts) : 0);
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
		NUM("correlation", p->kernel.correlation);
	}
	if (op->step >= 0)
		NUM("step", op->step);
	out_lit(o, "}}");
}

static uint64_t flow_id(struct chrome *c, uint64_t op)
{
	/* Unique across files and below 2^53 (JSON readers use doubles). */
	return (uint64_t)c->t->index << 32 | ((op >> 4) & 0xffffffffu);
}

static void flow(struct chrome *c, const char *ph, uint64_t id, uint64_t pid, int64_t tid,
                 uint64_t ts)
{
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"");
	out_str(o, ph);
	out_lit(o, "\",\"cat\":\"nccl\",\"name\":\"nccl\",\"id\":");
	out_u64(o, id);
	chrome_pid_tid(c, pid, tid);
	chrome_ts(c, ts);
	if (ph[0] == 'f')
		out_lit(o, ",\"bp\":\"e\"");
	out_ch(o, '}');
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

static void plan_name(char *buf, size_t len, const struct nccl_plan *p)
{
	if (p->n == 1) {
		snprintf(buf, len, "%s", p->ops[0].func);
		return;
	}
	snprintf(buf, len, "ncclGroup (%zu ops)", p->n);
}

static void on_plan(void *ctx, const struct nccl_plan *p)
{
	struct cn *n = ctx;
	struct chrome *c = n->c;
	struct out *o = c->o;
	name_tracks(n, p->comm);
	for (size_t i = 0; i < p->n; i++)
		name_tracks(n, p->ops[i].comm);
	if (!c->mine)
		return; /* another worker writes this plan (chrome.h, shares) */

	/* GPU side: per operation, or the fused kernel as a whole. */
	int each = disjoint(p);
	uint64_t gs = p->gpu_start, ge = p->gpu_end;
	if (!gs && p->has_kernel) /* no channel timers: the CUPTI kernel */
		gs = p->kernel.ts, ge = p->kernel.end;
	int64_t gtid = cpu_tid(p->comm) + 1;
	char name[64];
	if (gs && (!each || p->n > 1)) {
		plan_name(name, sizeof name, p);
		slice(c, name, gtid, gs, ge);
		out_lit(o, ",\"args\":{\"ops\":");
		out_u64(o, p->n);
		if (p->has_kernel && p->kernel.name) {
			STR("kernel", p->kernel.name);
			NUM("correlation", p->kernel.correlation);
		}
		out_lit(o, "}}");
	}
	uint64_t kpid = 0;
	int64_t ktid = 0;
	int to_kernel =
	    p->has_kernel && chrome_cupti_stream_track(c, p->kernel.device, p->kernel.context,
	                                               p->kernel.stream, &kpid, &ktid);
	for (size_t i = 0; i < p->n; i++) {
		const struct nccl_op *op = &p->ops[i];
		int64_t tid = cpu_tid(op->comm);
		/* The group around members of an explicit group. */
		int member = op->group && (op->group_size > 1 || op->group_depth > 1);
		if (member && op->group_first && op->group_end > op->group_start) {
			slice(c, "ncclGroup", tid, op->group_start, op->group_end);
			out_lit(o, ",\"args\":{\"calls\":");
			out_u64(o, op->group_size);
			out_lit(o, "}}");
		}
		uint64_t s = op->api_start ? op->api_start : op->enqueue_start;
		uint64_t e = member                            ? (op->api_end ? op->api_end : s)
		             : op->group_end > op->enqueue_end ? op->group_end
		                                               : op->enqueue_end;
		if (e < s)
			e = s;
		slice(c, op->func, tid, s, e);
		op_args(c, op, p);
		if (each && op->gpu_start) {
			slice(c, op->func, gtid, op->gpu_start, op->gpu_end);
			op_args(c, op, p);
		}
		/* The arrow leaves the call at its launch when the call holds it. */
		uint64_t from = p->launch_start >= s && p->launch_start <= e ? p->launch_start
		                                                             : s + (e - s) / 2;
		uint64_t to = each && op->gpu_start ? op->gpu_start : gs;
		if (to) {
			uint64_t id = flow_id(c, op->id);
			flow(c, "s", id, c->t->pid, tid, from);
			flow(c, "f", id, c->t->pid, gtid, to);
		}
		if (to_kernel && i == 0) {
			uint64_t id = flow_id(c, op->id) | 1ull << 52;
			flow(c, "s", id, c->t->pid, tid, from);
			flow(c, "f", id, kpid, ktid, p->kernel.ts);
		}
	}
}

void chrome_nccl_event(struct chrome *c, const struct ct_event *ev)
{
	struct cn *n = c->nccl;
	if (!n) {
		n = calloc(1, sizeof *n);
		if (!n)
			exit(1);
		n->c = c;
		n->ops = nccl_ops_new(on_plan, n);
		nccl_ops_step_range(n->ops, nccl_step_range_of(&c->t->f.h));
		c->nccl = n;
	}
	nccl_ops_event(n->ops, ev);
}

void chrome_nccl_file_end(struct chrome *c)
{
	struct cn *n = c->nccl;
	if (!n)
		return;
	nccl_ops_finish(n->ops);
	nccl_ops_free(n->ops);
	free(n);
	c->nccl = NULL;
}
