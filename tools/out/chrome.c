/* Chrome trace JSON (Perfetto, chrome://tracing, HTA), DESIGN section 2:
 * object form, metadata before traceEvents, microseconds with three
 * decimals relative to baseTimeNanoseconds, a process per rank. */
#include "out/chrome_int.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

void chrome_sref(struct chrome *c, const struct sref *r)
{
	uint32_t n;
	const char *e = tfile_esc(c->t, r->sid, r->s, r->len, &n);
	out_ch(c->o, '"');
	out_mem(c->o, e, n);
	out_ch(c->o, '"');
}

void chrome_pid_tid(struct chrome *c, uint64_t pid, int64_t tid)
{
	out_lit(c->o, ",\"pid\":");
	out_u64(c->o, pid);
	out_lit(c->o, ",\"tid\":");
	out_i64(c->o, tid);
}

void chrome_ts(struct chrome *c, uint64_t t)
{
	out_lit(c->o, ",\"ts\":");
	out_us(c->o, (int64_t)t + c->t->off_ns);
}

uint64_t chrome_gpu_pid(const struct chrome *c, uint32_t device)
{
	return c->kineto ? device : c->t->pid + 1 + device;
}

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
static void drops_event(struct chrome *c, uint64_t last_ts)
{
	const struct ct_file *f = &c->t->f;
	uint64_t total = 0;
	for (unsigned k = 0; k < CT_NKINDS; k++)
		total += f->drops[k];
	if (!total)
		return;
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"cuptrace\",\"name\":\"events dropped: ");
	out_u64(o, total);
	out_ch(o, '"');
	chrome_pid_tid(c, c->t->pid, (int64_t)f->h.pid);
	chrome_ts(c, last_ts);
	out_lit(o, ",\"args\":");
	drops_object(o, f);
	out_ch(o, '}');
}

int chrome_file(struct chrome *c, struct tfile *t)
{
	c->t = t;
	struct spans *sp = spans_new(chrome_span, c);
	if (!sp)
		return -1;
	struct ct_event ev;
	uint64_t n = 0;
	unsigned k = c->nshares > 1 ? c->nshares : 1;
	uint64_t block = 0;
	c->mine = 1;
	while (ct_file_next(&t->f, &ev) == 1) {
		if (k > 1 && t->f.nblocks != block) {
			block = t->f.nblocks;
			c->mine = (block - 1) % k == c->share;
		}
		if (c->progress && !(++n & 0xffff) && c->share == 0)
			atomic_fetch_add_explicit(c->progress, 0x10000, memory_order_relaxed);
		if (ev.kind >= CT_EV_CUPTI_FIRST && ev.kind < CT_EV_CUPTI_END) {
			chrome_cupti_event(c, &ev);
			chrome_nccl_event(c, &ev); /* NCCL kernels join their operations */
		} else if (ev.kind >= CT_EV_NCCL_FIRST && ev.kind < CT_EV_NCCL_END) {
			chrome_nccl_event(c, &ev);
		} else {
			spans_event(sp, &ev);
			if (ev.kind == CT_EV_STEP)
				chrome_nccl_event(c, &ev);
		}
	}
	c->mine = c->share == 0; /* what the file's end writes */
	spans_finish(sp);
	chrome_cupti_file_end(c);
	chrome_nccl_file_end(c);
	drops_event(c, spans_last_ts(sp));
	spans_free(sp);
	if (t->f.status == CT_CORRUPT) {
		if (c->share == 0)
			fprintf(stderr, "cuptrace: %s\n", t->f.err);
		return -1;
	}
	return 0;
}

void chrome_head(struct out *o, struct inputs *in, const struct tfile *only, int kineto)
{
	(void)kineto;
	out_lit(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ");
	chrome_cupti_devices(o, in, only);
	out_lit(o, ",\n");
	out_lit(o, "  \"distributedInfo\": {\"rank\": ");
	int64_t rank = only ? only->rank : in->n ? in->v[0].rank : 0;
	out_i64(o, rank < 0 ? 0 : rank);
	out_lit(o, ", \"world_size\": ");
	out_i64(o, in->world_size);
	out_lit(o, ", \"backend\": \"nccl\"},\n  \"baseTimeNanoseconds\": ");
	out_u64(o, in->base_ns);
	out_lit(o, ",\n  \"traceEvents\": [");
	for (size_t i = 0; i < in->n; i++)
		if (!only || only == &in->v[i])
			process_meta(o, &in->v[i], only || i == 0);
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

void chrome_tail(struct out *o, struct inputs *in, const struct tfile *only)
{
	out_lit(o, "\n  ],\n  \"displayTimeUnit\": \"ms\",\n  \"cuptrace\": {\"files\": [");
	int first = 1;
	for (size_t i = 0; i < in->n; i++) {
		if (only && only != &in->v[i])
			continue;
		if (!first)
			out_ch(o, ',');
		first = 0;
		file_summary(o, &in->v[i]);
	}
	out_lit(o, "\n  ]}\n}\n");
}
