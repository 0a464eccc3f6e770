/* Chrome trace JSON (Perfetto, chrome://tracing, HTA), DESIGN section 2:
 * object form, metadata before traceEvents, microseconds with three
 * decimals relative to baseTimeNanoseconds, a process per rank. */
#include "chrome_int.h"

#include <stdio.h>
#include <string.h>

void chrome_sep(struct chrome *c)
{
	if (c->nevents++)
		out_lit(c->o, ",\n");
	else
		out_lit(c->o, "\n");
}

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

static void process_meta(struct chrome *c)
{
	struct out *o = c->o;
	chrome_sep(c);
	out_lit(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	out_u64(o, c->t->pid);
	out_lit(o, ",\"args\":{\"name\":");
	out_json_str(o, c->t->label, strlen(c->t->label));
	out_lit(o, "}}");
	chrome_sep(c);
	out_lit(o, "{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":");
	out_u64(o, c->t->pid);
	out_lit(o, ",\"args\":{\"sort_index\":");
	out_u64(o, (uint64_t)c->t->index * 16);
	out_lit(o, "}}");
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
	chrome_sep(c);
	out_lit(o, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"cuptrace\",\"name\":\"events dropped: ");
	out_u64(o, total);
	out_ch(o, '"');
	chrome_pid_tid(c, c->t->pid, (int64_t)f->h.pid);
	chrome_ts(c, last_ts);
	out_lit(o, ",\"args\":{");
	int first = 1;
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		const struct ct_schema *s = ct_schema_of(k);
		if (!f->drops[k] || !s)
			continue;
		if (!first)
			out_ch(o, ',');
		first = 0;
		out_ch(o, '"');
		out_str(o, s->name);
		out_lit(o, "\":");
		out_u64(o, f->drops[k]);
	}
	out_lit(o, "}}");
}

int chrome_file(struct chrome *c, struct tfile *t)
{
	c->t = t;
	process_meta(c);
	struct spans *sp = spans_new(chrome_span, c);
	if (!sp)
		return -1;
	struct ct_event ev;
	while (ct_file_next(&t->f, &ev) == 1) {
		if (ev.kind >= CT_EV_CUPTI_FIRST && ev.kind < CT_EV_CUPTI_END)
			chrome_cupti_event(c, &ev);
		else if (ev.kind >= CT_EV_NCCL_FIRST && ev.kind < CT_EV_NCCL_END)
			chrome_nccl_event(c, &ev);
		else
			spans_event(sp, &ev);
	}
	spans_finish(sp);
	chrome_cupti_file_end(c);
	chrome_nccl_file_end(c);
	drops_event(c, spans_last_ts(sp));
	spans_free(sp);
	if (t->f.status == CT_CORRUPT) {
		fprintf(stderr, "cuptrace: %s\n", t->f.err);
		return -1;
	}
	return 0;
}

struct chrome *chrome_begin(struct out *o, struct inputs *in, int64_t rank)
{
	static struct chrome c;
	memset(&c, 0, sizeof c);
	c.o = o;
	c.in = in;
	out_lit(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": ");
	chrome_cupti_devices(o, in, NULL);
	out_lit(o, ",\n");
	out_lit(o, "  \"distributedInfo\": {\"rank\": ");
	out_i64(o, rank < 0 ? 0 : rank);
	out_lit(o, ", \"world_size\": ");
	out_i64(o, in->world_size);
	out_lit(o, ", \"backend\": \"nccl\"},\n  \"baseTimeNanoseconds\": ");
	out_u64(o, in->base_ns);
	out_lit(o, ",\n  \"traceEvents\": [");
	return &c;
}

void chrome_end(struct chrome *c)
{
	struct out *o = c->o;
	out_lit(o, "\n  ],\n  \"displayTimeUnit\": \"ms\",\n  \"cuptrace\": {\"files\": [");
	for (size_t i = 0; i < c->in->n; i++) {
		struct tfile *t = &c->in->v[i];
		if (i)
			out_ch(o, ',');
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
		out_lit(o, "\", \"dropped\": {");
		int first = 1;
		for (unsigned k = 0; k < CT_NKINDS; k++) {
			const struct ct_schema *s = ct_schema_of(k);
			if (!t->f.drops[k] || !s)
				continue;
			if (!first)
				out_lit(o, ", ");
			first = 0;
			out_ch(o, '"');
			out_str(o, s->name);
			out_lit(o, "\": ");
			out_u64(o, t->f.drops[k]);
		}
		out_lit(o, "}}");
	}
	out_lit(o, "\n  ]}\n}\n");
}
