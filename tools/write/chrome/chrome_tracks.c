// SPDX-License-Identifier: MIT
/* Processes, tracks and flows of the model as Chrome metadata and arrows:
 * a process per GPU of a rank, a thread per track (streams, NCCL
 * communicators, named CPU threads), and "s"/"f" pairs for flows (cat ac2g
 * from calls to GPU work, as Kineto writes them; cat nccl for NCCL). */
#include "write/chrome/chrome_int.h"

#include <stdio.h>

void chrome_process(struct chrome *c, const struct m_event *ev)
{
	uint64_t dev = ev->process.device;
	const char *gpu = ev->process.name;
	struct out *o = c->o;
	uint64_t pid = chrome_gpu_pid(c, dev);
	char label[512];
	int n = snprintf(label, sizeof label, "rank %lld GPU %llu%s%s%s",
	                 (long long)c->t->shown_rank, (unsigned long long)dev,
	                 gpu ? " (" : "", gpu ? gpu : "", gpu ? ")" : "");
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	out_u64(o, pid);
	out_lit(o, ",\"args\":{\"name\":");
	out_json_str(o, label, (size_t)n < sizeof label ? (size_t)n : sizeof label - 1);
	out_lit(o, "}}");
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
	out_u64(o, pid);
	out_lit(o, ",\"args\":{\"sort_index\":");
	out_u64(o, (uint64_t)c->t->index * 16 + 1 + (dev < 14 ? dev : 14));
	out_lit(o, "}}");
}

void chrome_track(struct chrome *c, const struct m_track *tr)
{
	struct out *o = c->o;
	uint64_t pid = chrome_track_pid(c, tr);
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"M\",\"name\":\"thread_name\"");
	chrome_pid_tid(c, pid, tr->tid);
	out_lit(o, ",\"args\":{\"name\":");
	out_json_str(o, tr->name, tr->name_len); /* escaped: threads are named by the program */
	out_lit(o, "}}");
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"M\",\"name\":\"thread_sort_index\"");
	chrome_pid_tid(c, pid, tr->tid);
	out_lit(o, ",\"args\":{\"sort_index\":");
	out_i64(o, tr->sort);
	out_lit(o, "}}");
}

/* kind: the flow's category (MC_LAUNCH, MC_NCCL_FLOW, MC_FWDBWD, MC_MPI_FLOW) */
static inline __attribute__((always_inline)) void flow_half(struct chrome *c, char ph, int kind,
                                                             uint64_t id, const struct m_track *tr,
                                                             uint64_t ts)
{
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	uint32_t ptl;
	const char *pt = chrome_pt(c, tr, &ptl);
	char *p = BEGIN(o, 96 + ptl + 2 * NUM_MAX);
	PUT_LIT(p, "{\"ph\":\"");
	*p++ = ph;
	PUT_LIT(p, "\",\"id\":");
	p = out_put_u64(p, id);
	*p++ = ',';
	memcpy(p, pt, ptl);
	p += ptl;
	PUT_LIT(p, ",\"ts\":");
	struct cfile *cf = c->cf;
	if (ph == 'f' && cf->gpu_ts_len && ts == cf->gpu_ts) { /* the GPU slice just written */
		memcpy(p, cf->gpu_ts_text, TS_TEXT);
		p += cf->gpu_ts_len;
	} else {
		p += chrome_fmt_ts(c, p, ts);
	}
	if (kind == MC_NCCL_FLOW)
		PUT_LIT(p, ",\"cat\":\"nccl\",\"name\":\"nccl\"");
	else if (kind == MC_FWDBWD) /* torch.profiler's forward-backward link */
		PUT_LIT(p, ",\"cat\":\"fwdbwd\",\"name\":\"fwdbwd\"");
	else if (kind == MC_MPI_FLOW) /* a request's call to the call that completed it */
		PUT_LIT(p, ",\"cat\":\"mpi\",\"name\":\"mpi\"");
	else
		PUT_LIT(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"");
	if (ph == 'f')
		PUT_LIT(p, ",\"bp\":\"e\"}");
	else
		*p++ = '}';
	END(o, p);
}

void chrome_flow(struct chrome *c, const struct m_event *ev)
{
	/* Unique in the document and below 2^53 (JSON readers use doubles):
	 * the file's index above the model's id, unique in the file. */
	uint64_t id = (uint64_t)c->t->index << 36 | (ev->flow.id & ((1ull << 36) - 1));
	flow_half(c, 's', ev->cat, id, ev->track, ev->ts);
	flow_half(c, 'f', ev->cat, id, ev->flow.to, ev->flow.to_ts);
}
