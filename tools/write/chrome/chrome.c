// SPDX-License-Identifier: MIT
/* Chrome trace JSON (Perfetto, chrome://tracing, HTA), in the conventions
 * those readers expect (docs/CHOICES.md): object form, metadata before
 * traceEvents, microseconds with three decimals relative to
 * baseTimeNanoseconds, a process per rank. */
#include "write/chrome/chrome_int.h"
#include "model/piece.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Process name and order of a file's CPU process. */
static void process_meta(struct out *o, const struct tfile *t, int first)
{
	if (first)
		out_lit(o, "\n");
	else
		out_lit(o, ",\n");
	out_lit(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	out_u64(o, t->pid);
	out_lit(o, ",\"args\":{\"name\":");
	out_json_str(o, t->label, strlen(t->label));
	out_lit(o, "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
	out_u64(o, t->pid);
	out_lit(o, ",\"args\":{\"sort_index\":");
	out_u64(o, (uint64_t)t->index * 16);
	out_lit(o, "}}");
}

/* {"kind": count, ...} of a file's dropped events. */
static void drops_object(struct out *o, const struct ct_file *f)
{
	int first = 1;
	out_ch(o, '{');
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		const struct ct_schema *s = ct_schema_of(k);
		if (!f->drops[k] || !s)
			continue;
		if (!first)
			out_lit(o, ", ");
		first = 0;
		out_ch(o, '"');
		out_str(o, s->name);
		out_lit(o, "\": ");
		out_u64(o, f->drops[k]);
	}
	out_ch(o, '}');
}

/* Drops are shown in the trace itself, as one instant at the file's end. */
static void drops_event(struct chrome *c, const struct m_event *ev)
{
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"cuptrace\",\"name\":\"events dropped: ");
	out_u64(o, ev->dropped);
	out_ch(o, '"');
	chrome_pid_tid(c, c->t->pid, ev->track->tid);
	chrome_ts(c, ev->ts);
	out_lit(o, ",\"args\":");
	drops_object(o, &c->t->f);
	out_ch(o, '}');
}

/* The watchdog's hang_suspected, an instant on the communicator's track. */
static void hang_event(struct chrome *c, const struct m_event *ev)
{
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"nccl\",\"name\":\"hang_suspected\"");
	chrome_pid_tid(c, c->t->pid, ev->track->tid);
	chrome_ts(c, ev->ts);
	out_lit(o, ",\"args\":{\"operation\":");
	out_json_str(o, ev->hang.func.s ? ev->hang.func.s : "", ev->hang.func.s ? ev->hang.func.len : 0);
	if (ev->hang.has_seq) {
		out_lit(o, ",\"seq\":");
		out_u64(o, ev->hang.seq);
	}
	out_lit(o, ",\"in flight (ns)\":");
	out_u64(o, ev->hang.in_flight);
	if (ev->hang.comm) {
		char h[24]; /* as the communicator's operations give it */
		snprintf(h, sizeof h, "0x%llx", (unsigned long long)ev->hang.comm->hash);
		out_lit(o, ",\"comm\":\"");
		out_str(o, h);
		out_lit(o, "\",\"comm_name\":");
		out_json_str(o, ev->hang.comm->name, strnlen(ev->hang.comm->name, sizeof ev->hang.comm->name));
	}
	out_lit(o, "}}");
}

/* One switch on the category: processes and tracks have none, flows,
 * counters and drops have their own. */
static void on_event(void *ctx, const struct m_event *ev)
{
	struct chrome *c = ctx;
	if (!*c->mine)
		return; /* another worker writes it (chrome.h, shares) */
	switch (ev->cat) {
	case MC_KERNEL:
		chrome_kernel(c, ev);
		break;
	case MC_RUNTIME:
	case MC_DRIVER:
		chrome_api(c, ev);
		break;
	case MC_LAUNCH:
	case MC_NCCL_FLOW:
	case MC_FWDBWD:
	case MC_MPI_FLOW:
		chrome_flow(c, ev);
		break;
	case MC_MPI:
	case MC_MPI_HANG:
		chrome_mpi(c, ev);
		break;
	case MC_MPI_COMM: /* said in the calls' args */
		break;
	case MC_MEMCPY:
	case MC_MEMSET:
	case MC_SYNC:
		chrome_gpu_slice(c, ev);
		break;
	case MC_NCCL:
	case MC_NCCL_GROUP:
	case MC_NCCL_GPU:
		chrome_nccl(c, ev);
		break;
	case MC_GPU_MEMORY:
		chrome_memory(c, ev);
		break;
	case MC_DROPS:
		drops_event(c, ev);
		break;
	case MC_HANG:
		hang_event(c, ev);
		break;
	case MC_TORCH_OP:
	case MC_TORCH_SCOPE:
	case MC_TORCH_MEM:
		chrome_torch(c, ev);
		break;
	case MC_NONE:
		if (ev->type == ME_PROCESS)
			chrome_process(c, ev);
		else
			chrome_track(c, ev->track);
		break;
	default:
		chrome_span(c, ev);
		break;
	}
}

static void cfile_free(struct cfile *cf)
{
	if (!cf)
		return;
	chrome_cupti_free(cf);
	strcache_free(&cf->dm);
	free(cf->pt);
	free(cf->pt_len);
	free(cf);
}

static void end_file(void *ctx, struct tfile *t)
{
	struct chrome *c = ctx;
	(void)t;
	cfile_free(c->cf);
	c->cf = NULL;
}

static void begin_file(void *ctx, struct tfile *t)
{
	struct chrome *c = ctx;
	c->t = t;
	c->cf = chrome_cfile_new();
}

const struct m_consumer chrome_consumer = {begin_file, on_event, end_file};

void chrome_head(struct out *o, struct inputs *in, const struct tfile *only, int kineto)
{
	(void)kineto;
	out_lit(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ");
	chrome_cupti_devices(o, in, only);
	out_lit(o, ",\n");
	out_lit(o, "  \"distributedInfo\": {\"rank\": ");
	out_i64(o, only ? only->shown_rank : in->n ? in->v[0].shown_rank : 0);
	out_lit(o, ", \"world_size\": ");
	out_i64(o, in->world_size);
	out_lit(o, ", \"backend\": \"nccl\"},\n  \"baseTimeNanoseconds\": ");
	out_u64(o, in->base_ns);
	out_lit(o, ",\n  \"traceEvents\": [");
	int first = 1;
	for (size_t i = 0; i < in->n; i++)
		if (tfile_in_output(&in->v[i], only)) {
			process_meta(o, &in->v[i], first);
			first = 0;
		}
}

static void file_summary(struct out *o, const struct tfile *t)
{
	out_lit(o, "\n    {\"path\": ");
	out_json_str(o, t->f.path, strlen(t->f.path));
	out_lit(o, ", \"rank\": ");
	out_i64(o, t->rank);
	out_lit(o, ", \"host\": ");
	out_json_str(o, t->f.h.host, strlen(t->f.h.host));
	out_lit(o, ", \"os_pid\": ");
	out_u64(o, t->f.h.pid);
	out_lit(o, ", \"pid\": ");
	out_u64(o, t->pid);
	out_lit(o, ", \"clock\": {\"realtime_ns\": ");
	out_u64(o, t->f.h.rt_anchor);
	out_lit(o, ", \"monotonic_ns\": ");
	out_u64(o, t->f.h.mono_anchor);
	out_lit(o, "}, \"status\": \"");
	out_str(o, ct_status_name(t->f.status));
	out_lit(o, "\", \"dropped\": ");
	drops_object(o, &t->f);
	out_ch(o, '}');
}

/* What a piece of the job kept and left out (model/piece.h): "piece" in
 * the "cuptrace" object. Times: seconds of the job's timeline (ts / 1e6);
 * null where open. Events left out: those of this output's files. */
static void piece_meta(struct out *o, const struct inputs *in, const struct tfile *only)
{
	const struct piece *p = in->piece;
	char text[512];
	piece_describe(in, only, text, sizeof text);
	out_lit(o, "\"piece\": {\"summary\": ");
	out_json_str(o, text, strlen(text));
	piece_ranks_str(in, text, sizeof text);
	out_lit(o, ", \"ranks\": ");
	out_json_str(o, text, strlen(text));
	out_lit(o, ", \"of_ranks\": ");
	out_u64(o, p->nranks);
	out_lit(o, ", \"steps\": ");
	if (p->steps_arg)
		out_json_str(o, p->steps_arg, strlen(p->steps_arg));
	else
		out_lit(o, "null");
	char num[64];
	snprintf(num, sizeof num, ", \"from_s\": %.9f", (double)p->t_lo / 1e9);
	out_str(o, p->t_lo == INT64_MIN ? ", \"from_s\": null" : num);
	snprintf(num, sizeof num, ", \"to_s\": %.9f", (double)p->t_hi / 1e9);
	out_str(o, p->t_hi == INT64_MAX ? ", \"to_s\": null" : num);
	out_lit(o, ", \"left_out_ranks\": ");
	out_u64(o, p->nranks - p->nkept);
	out_lit(o, ", \"left_out_records\": ");
	out_u64(o, p->records_out);
	out_lit(o, ", \"left_out_events\": ");
	out_u64(o, piece_outside(in, only));
	out_lit(o, "}, ");
}

void chrome_tail(struct out *o, struct inputs *in, const struct tfile *only)
{
	out_lit(o, "\n  ],\n  \"displayTimeUnit\": \"ms\",\n  \"cuptrace\": {");
	if (in->piece)
		piece_meta(o, in, only);
	out_lit(o, "\"files\": [");
	int first = 1;
	for (size_t i = 0; i < in->n; i++) {
		if (!tfile_in_output(&in->v[i], only))
			continue;
		if (!first)
			out_ch(o, ',');
		first = 0;
		file_summary(o, &in->v[i]);
	}
	out_lit(o, "\n  ]}\n}\n");
}
