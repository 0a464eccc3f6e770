/* Chrome trace JSON (Perfetto, chrome://tracing, HTA), DESIGN section 2:
 * object form, metadata before traceEvents, microseconds with three
 * decimals relative to baseTimeNanoseconds, a process per rank. */
#include "chrome.h"
#include "spans.h"

#include <stdio.h>
#include <string.h>

struct chrome {
	struct out *o;
	struct inputs *in;
	struct tfile *t;
	uint64_t nevents;
};

static void sep(struct chrome *c)
{
	if (c->nevents++)
		out_lit(c->o, ",\n");
	else
		out_lit(c->o, "\n");
}

static void str(struct chrome *c, const struct sref *r)
{
	uint32_t n;
	const char *e = tfile_esc(c->t, r->sid, r->s, r->len, &n);
	out_ch(c->o, '"');
	out_mem(c->o, e, n);
	out_ch(c->o, '"');
}

static void pid_tid(struct chrome *c, int64_t tid)
{
	out_lit(c->o, ",\"pid\":");
	out_u64(c->o, c->t->pid);
	out_lit(c->o, ",\"tid\":");
	out_i64(c->o, tid);
}

static void ts(struct chrome *c, const char *key, uint64_t t, size_t keylen)
{
	out_mem(c->o, key, keylen);
	out_us(c->o, (int64_t)t + c->t->off_ns);
}

static void payload(struct chrome *c, uint64_t type, uint64_t v)
{
	union {
		uint64_t u;
		double d;
	} d64 = {v};
	union {
		uint32_t u;
		float f;
	} f32 = {(uint32_t)v};
	switch (type) {
	case CT_PAYLOAD_U64: out_u64(c->o, v); break;
	case CT_PAYLOAD_I64: out_i64(c->o, (int64_t)v); break;
	case CT_PAYLOAD_DOUBLE: out_double(c->o, d64.d); break;
	case CT_PAYLOAD_U32: out_u64(c->o, (uint32_t)v); break;
	case CT_PAYLOAD_I32: out_i64(c->o, (int32_t)(uint32_t)v); break;
	case CT_PAYLOAD_FLOAT: out_double(c->o, (double)f32.f); break;
	default: out_lit(c->o, "null");
	}
}

/* The args of an NVTX span; nothing at all when there is nothing to say. */
static void args(struct chrome *c, const struct span *s)
{
	int any = 0;
#define KEY(k)                                              \
	do {                                                \
		if (any)                                    \
			out_ch(c->o, ',');                  \
		else                                        \
			out_lit(c->o, ",\"args\":{");        \
		any = 1;                                    \
		out_lit(c->o, "\"" k "\":");                \
	} while (0)
	if (s->domain.sid != CT_SREF_NONE) {
		KEY("domain");
		str(c, &s->domain);
	}
	if (s->category) {
		KEY("category");
		if (s->category_name.sid != CT_SREF_NONE)
			str(c, &s->category_name);
		else
			out_u64(c->o, s->category);
	}
	if (s->color & CT_COLOR_SET) {
		static const char hex[] = "0123456789abcdef";
		char buf[12] = "\"#";
		uint32_t argb = (uint32_t)s->color;
		for (int i = 0; i < 6; i++)
			buf[2 + i] = hex[(argb >> (20 - 4 * i)) & 15];
		buf[8] = '"';
		KEY("color");
		out_mem(c->o, buf, 9);
	}
	if (s->ptype) {
		KEY("payload");
		payload(c, s->ptype, s->payload);
	}
	if (s->unfinished) {
		KEY("unfinished");
		out_lit(c->o, "true");
	}
#undef KEY
	if (any)
		out_ch(c->o, '}');
}

static void on_span(void *ctx, const struct span *s)
{
	struct chrome *c = ctx;
	struct out *o = c->o;
	switch (s->kind) {
	case SP_RANGE:
		sep(c);
		out_lit(o, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
		str(c, &s->name);
		pid_tid(c, s->tid);
		ts(c, ",\"ts\":", s->ts, 6);
		out_lit(o, ",\"dur\":");
		out_us(o, (int64_t)(s->end - s->ts));
		args(c, s);
		out_ch(o, '}');
		break;
	case SP_ASYNC:
		for (int half = 0; half < 2; half++) {
			sep(c);
			out_lit(o, "{\"ph\":\"");
			out_ch(o, half ? 'e' : 'b');
			out_lit(o, "\",\"cat\":\"user_annotation\",\"name\":");
			str(c, &s->name);
			out_lit(o, ",\"id2\":{\"local\":\"0x");
			char hex[20];
			int n = snprintf(hex, sizeof hex, "%llx", (unsigned long long)s->id);
			out_mem(o, hex, (size_t)n);
			out_lit(o, "\"}");
			pid_tid(c, half ? s->end_tid : s->tid);
			ts(c, ",\"ts\":", half ? s->end : s->ts, 6);
			if (!half)
				args(c, s);
			out_ch(o, '}');
		}
		break;
	case SP_MARK:
		sep(c);
		out_lit(o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
		str(c, &s->name);
		pid_tid(c, s->tid);
		ts(c, ",\"ts\":", s->ts, 6);
		args(c, s);
		out_ch(o, '}');
		break;
	case SP_STEP:
		sep(c);
		out_lit(o, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#");
		out_u64(o, s->id);
		out_ch(o, '"');
		pid_tid(c, s->tid);
		ts(c, ",\"ts\":", s->ts, 6);
		out_lit(o, ",\"dur\":");
		out_us(o, (int64_t)(s->end - s->ts));
		out_ch(o, '}');
		break;
	case SP_CAPTURE:
		sep(c);
		out_lit(o, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"cuptrace\",\"name\":\"");
		out_str(o, s->id ? "capture on" : "capture off");
		out_ch(o, '"');
		pid_tid(c, s->tid);
		ts(c, ",\"ts\":", s->ts, 6);
		out_ch(o, '}');
		break;
	case SP_THREAD:
		if (s->tid <= 0 || (!s->id && !s->name.len))
			break;
		sep(c);
		out_lit(o, "{\"ph\":\"M\",\"name\":\"thread_name\"");
		pid_tid(c, s->tid);
		out_lit(o, ",\"args\":{\"name\":");
		if (s->name.len)
			str(c, &s->name);
		else
			out_lit(o, "\"thread\"");
		out_lit(o, "}}");
		sep(c);
		out_lit(o, "{\"ph\":\"M\",\"name\":\"thread_sort_index\"");
		pid_tid(c, s->tid);
		out_lit(o, ",\"args\":{\"sort_index\":");
		/* the main thread (tid == OS pid) first */
		out_i64(o, (uint64_t)s->tid == c->t->f.h.pid ? 0 : 1);
		out_lit(o, "}}");
		break;
	}
}

static void process_meta(struct chrome *c)
{
	struct out *o = c->o;
	sep(c);
	out_lit(o, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":");
	out_u64(o, c->t->pid);
	out_lit(o, ",\"args\":{\"name\":");
	out_json_str(o, c->t->label, strlen(c->t->label));
	out_lit(o, "}}");
	sep(c);
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
	sep(c);
	out_lit(o, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"cuptrace\",\"name\":\"events dropped: ");
	out_u64(o, total);
	out_ch(o, '"');
	pid_tid(c, (int64_t)f->h.pid);
	ts(c, ",\"ts\":", last_ts, 6);
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
	struct spans *sp = spans_new(on_span, c);
	if (!sp)
		return -1;
	struct ct_event ev;
	while (ct_file_next(&t->f, &ev) == 1)
		spans_event(sp, &ev);
	spans_finish(sp);
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
	out_lit(o, "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n");
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
