// SPDX-License-Identifier: MIT
/* NVTX spans of the model (ranges, async ranges, marks, steps, capture
 * switches) as Chrome trace events. */
#include "write/chrome/chrome_int.h"

#include <stdio.h>
#include <string.h>

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
		chrome_sref(c, &s->domain);
	}
	if (s->category) {
		KEY("category");
		if (s->category_name.sid != CT_SREF_NONE)
			chrome_sref(c, &s->category_name);
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

void chrome_span(struct chrome *c, const struct m_event *ev)
{
	const struct span *s = ev->span;
	struct out *o = c->o;
	switch (s->kind) {
	case SP_RANGE:
		if (!chrome_sep(c))
			return;
		if (ev->cat == MC_GPU_ANNOTATION) /* Kineto's category for the projection */
			out_lit(o, "{\"ph\":\"X\",\"cat\":\"gpu_user_annotation\",\"name\":");
		else
			out_lit(o, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
		chrome_sref(c, &s->name);
		chrome_track_pt(c, ev->track);
		chrome_ts(c, s->ts);
		out_lit(o, ",\"dur\":");
		out_us(o, (int64_t)(s->end - s->ts));
		args(c, s);
		out_ch(o, '}');
		break;
	case SP_ASYNC:
		for (int half = 0; half < 2; half++) {
			if (!chrome_sep(c))
				return;
			out_lit(o, "{\"ph\":\"");
			out_ch(o, half ? 'e' : 'b');
			out_lit(o, "\",\"cat\":\"user_annotation\",\"name\":");
			chrome_sref(c, &s->name);
			out_lit(o, ",\"id2\":{\"local\":\"0x");
			char hex[20];
			int n = snprintf(hex, sizeof hex, "%llx", (unsigned long long)s->id);
			out_mem(o, hex, (size_t)n);
			out_lit(o, "\"}");
			chrome_track_pt(c, half ? ev->end_track : ev->track);
			chrome_ts(c, half ? s->end : s->ts);
			if (!half)
				args(c, s);
			out_ch(o, '}');
		}
		break;
	case SP_MARK:
		if (!chrome_sep(c))
			return;
		out_lit(o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"user_annotation\",\"name\":");
		chrome_sref(c, &s->name);
		chrome_track_pt(c, ev->track);
		chrome_ts(c, s->ts);
		args(c, s);
		out_ch(o, '}');
		break;
	case SP_STEP:
		if (!chrome_sep(c))
			return;
		out_lit(o, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#");
		out_u64(o, s->id);
		out_ch(o, '"');
		chrome_track_pt(c, ev->track);
		chrome_ts(c, s->ts);
		out_lit(o, ",\"dur\":");
		out_us(o, (int64_t)(s->end - s->ts));
		out_ch(o, '}');
		break;
	case SP_CAPTURE:
		if (!chrome_sep(c))
			return;
		out_lit(o, "{\"ph\":\"i\",\"s\":\"p\",\"cat\":\"cuptrace\",\"name\":\"");
		out_str(o, s->id ? "capture on" : "capture off");
		out_ch(o, '"');
		chrome_track_pt(c, ev->track);
		chrome_ts(c, s->ts);
		out_ch(o, '}');
		break;
	default:
		break;
	}
}

