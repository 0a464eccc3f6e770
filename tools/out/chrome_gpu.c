/* The GPU part of the Chrome writer: GPU processes and stream tracks named
 * at first sight, and the ac2g flows from calls to their GPU work. */
#include "out/chrome_gpu.h"

/* ---- process and track names, at first sight */

void gpu_name_process(struct chrome *c, struct cstate *s, uint64_t dev)
{
	unsigned d = dev < MAXDEV ? (unsigned)dev : MAXDEV - 1;
	int want = s->dev_name[d] ? 2 : 1;
	if (s->dev_named[d] >= want)
		return;
	s->dev_named[d] = (uint8_t)want;
	struct out *o = c->o;
	uint64_t pid = gpu_pid(c, dev);
	char label[512];
	int n =
	    snprintf(label, sizeof label, "rank %lld GPU %llu%s%s%s",
	             (long long)(c->t->rank < 0 ? 0 : c->t->rank), (unsigned long long)dev,
	             want == 2 ? " (" : "", want == 2 ? s->dev_name[d] : "", want == 2 ? ")" : "");
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

void gpu_name_track(struct chrome *c, struct cstate *s, uint64_t dev, int64_t tid)
{
	uint64_t key = (dev << 32 | (uint64_t)tid) + 1;
	if (s->tcap) {
		for (size_t i = mix(key) & (s->tcap - 1); s->tracks[i]; i = (i + 1) & (s->tcap - 1))
			if (s->tracks[i] == key)
				return;
	}
	if ((s->ntracks + 1) * 2 > s->tcap) {
		size_t ncap = s->tcap ? s->tcap * 2 : 64;
		uint64_t *v = calloc(ncap, sizeof *v);
		if (!v)
			exit(1);
		for (size_t k = 0; k < s->tcap; k++) {
			if (!s->tracks[k])
				continue;
			size_t i = mix(s->tracks[k]) & (ncap - 1);
			while (v[i])
				i = (i + 1) & (ncap - 1);
			v[i] = s->tracks[k];
		}
		free(s->tracks);
		s->tracks = v, s->tcap = ncap;
	}
	size_t i = mix(key) & (s->tcap - 1);
	while (s->tracks[i])
		i = (i + 1) & (s->tcap - 1);
	s->tracks[i] = key;
	s->ntracks++;
	gpu_name_process(c, s, dev);
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"M\",\"name\":\"thread_name\"");
	chrome_pid_tid(c, gpu_pid(c, dev), tid);
	out_lit(o, ",\"args\":{\"name\":\"");
	if (tid == GPU_TID_NONE) {
		out_lit(o, "sync");
	} else if (tid > GPU_TID_SYNC && tid < GPU_TID_NONE - 1) {
		out_lit(o, "stream ");
		out_i64(o, tid - GPU_TID_SYNC);
		out_lit(o, " sync");
	} else {
		out_lit(o, "stream ");
		out_i64(o, tid == 0x7ffffffell ? 0 : tid);
	}
	out_lit(o, "\"}}");
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"M\",\"name\":\"thread_sort_index\"");
	chrome_pid_tid(c, gpu_pid(c, dev), tid);
	out_lit(o, ",\"args\":{\"sort_index\":");
	out_i64(o, tid);
	out_lit(o, "}}");
}

/* ---- flows: the launch call (s) to the GPU work (f) */

static _Atomic uint64_t flow_ids; /* unique in the document, whatever thread converts */
#define FLOW_ID_BLOCK 4096

uint32_t gpu_fmt_pt(char *b, uint64_t pid, int64_t tid)
{
	char *p = b;
	PUT_LIT(p, "\"pid\":");
	p = out_put_u64(p, pid);
	PUT_LIT(p, ",\"tid\":");
	p = put_i64(p, tid);
	return (uint32_t)(p - b);
}

/* Times of one file are close to each other: the digits above the last
 * four of the microseconds (10 ms) are formatted once and reused. */
uint32_t gpu_fmt_ts(struct chrome *c, char *b, uint64_t ts)
{
	int64_t ns = (int64_t)ts + c->t->off_ns;
	struct cstate *s = c->cupti;
	if (ns < 10000000 || !s)
		return (uint32_t)(put_us(b, ns) - b);
	uint64_t us = (uint64_t)ns / 1000, hi = us / 10000;
	unsigned lo = (unsigned)(us % 10000), f = (unsigned)((uint64_t)ns % 1000);
	if (hi != s->ts_hi || !s->ts_hi_len) {
		s->ts_hi = hi;
		s->ts_hi_len = (uint8_t)(out_put_u64(s->ts_hi_text, hi) - s->ts_hi_text);
	}
	memcpy(b, s->ts_hi_text, 16); /* hi has at most 12 digits */
	char *p = b + s->ts_hi_len;
	memcpy(p, out_digits2 + 2 * (lo / 100), 2);
	memcpy(p + 2, out_digits2 + 2 * (lo % 100), 2);
	p[4] = '.';
	p[5] = (char)('0' + f / 100);
	memcpy(p + 6, out_digits2 + 2 * (f % 100), 2);
	return (uint32_t)(p + 8 - b);
}

static void flow_half(struct chrome *c, char ph, uint64_t id, const char *pt, uint32_t ptl,
                      const char *ts, uint32_t tsl)
{
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	char *p = BEGIN(o, 96 + ptl + tsl + NUM_MAX);
	PUT_LIT(p, "{\"ph\":\"");
	*p++ = ph;
	PUT_LIT(p, "\",\"id\":");
	p = out_put_u64(p, id);
	*p++ = ',';
	memcpy(p, pt, ptl);
	p += ptl;
	PUT_LIT(p, ",\"ts\":");
	memcpy(p, ts, tsl);
	p += tsl;
	if (ph == 'f')
		PUT_LIT(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"bp\":\"e\"}");
	else
		PUT_LIT(p, ",\"cat\":\"ac2g\",\"name\":\"ac2g\"}");
	END(o, p);
}

/* The arrow from call a to a GPU event. Its track and time come formatted
 * (pt, ts) when the caller wrote them already, else as numbers. Written
 * only by the conversion share that owns the event at hand (c->mine). */
static void flow(struct chrome *c, struct api_slot *a, const char *pt, uint32_t ptl, const char *ts,
                 uint32_t tsl, uint64_t pid, int64_t tid, uint64_t tsv)
{
	a->uses++;
	if (!c->mine)
		return;
	struct cstate *s = c->cupti;
	if (s->next_id == s->end_id) { /* ids are taken from the shared counter in blocks */
		s->next_id = atomic_fetch_add_explicit(&flow_ids, FLOW_ID_BLOCK, memory_order_relaxed) + 1;
		s->end_id = s->next_id + FLOW_ID_BLOCK;
	}
	uint64_t id = s->next_id++;
	char gpt[56], gts[28];
	if (!a->pt_len)
		a->pt_len = (uint8_t)gpu_fmt_pt(a->pt, a->pid, a->tid);
	if (!a->ts_len)
		a->ts_len = (uint8_t)gpu_fmt_ts(c, a->ts_text, a->ts);
	flow_half(c, 's', id, a->pt, a->pt_len, a->ts_text, a->ts_len);
	if (!pt)
		pt = gpt, ptl = gpu_fmt_pt(gpt, pid, tid);
	if (!ts)
		ts = gts, tsl = gpu_fmt_ts(c, gts, tsv);
	flow_half(c, 'f', id, pt, ptl, ts, tsl);
}

void gpu_flow(struct chrome *c, struct cstate *s, uint64_t corr, const char *pt, uint32_t ptl,
              const char *ts, uint32_t tsl, uint64_t pid, int64_t tid, uint64_t tsv)
{
	if (!corr)
		return;
	struct api_slot *a = &s->api[corr & (API_SLOTS - 1)];
	if (a->corr == corr) {
		flow(c, a, pt, ptl, ts, tsl, pid, tid, tsv);
		return;
	}
	/* The call comes later in the file: wait for it. */
	size_t h = mix(corr);
	for (unsigned p = 0; p < PEND_PROBE; p++) {
		struct pend_slot *e = &s->pend[(h + p) & (PEND_SLOTS - 1)];
		if (!e->corr) {
			*e = (struct pend_slot){corr, tsv, pid, tid};
			s->npend++;
			return;
		}
	}
	/* full around here: the oldest guess is overwritten, its arrow lost */
	s->pend[h & (PEND_SLOTS - 1)] = (struct pend_slot){corr, tsv, pid, tid};
}

void gpu_flow_num(struct chrome *c, struct cstate *s, uint64_t corr, uint64_t pid, int64_t tid,
                  uint64_t ts)
{
	gpu_flow(c, s, corr, NULL, 0, NULL, 0, pid, tid, ts);
}

void gpu_api_seen(struct chrome *c, struct cstate *s, uint64_t corr, uint64_t pid, int64_t tid,
                  uint64_t ts, const char *pt, uint32_t ptl, const char *tss, uint32_t tsl)
{
	if (!corr)
		return;
	struct api_slot *a = &s->api[corr & (API_SLOTS - 1)];
	a->corr = corr, a->uses = 0, a->tid = tid, a->pid = pid, a->ts = ts;
	a->pt_len = a->ts_len = 0;
	if (pt && ptl <= sizeof a->pt && tsl <= sizeof a->ts_text) {
		memcpy(a->pt, pt, ptl);
		memcpy(a->ts_text, tss, tsl);
		a->pt_len = (uint8_t)ptl, a->ts_len = (uint8_t)tsl;
	}
	if (!s->npend)
		return; /* the usual case: calls come before their GPU work */
	size_t h = mix(corr);
	for (unsigned p = 0; p < PEND_PROBE; p++) {
		struct pend_slot *e = &s->pend[(h + p) & (PEND_SLOTS - 1)];
		if (e->corr == corr) {
			flow(c, a, NULL, 0, NULL, 0, e->pid, e->tid, e->ts);
			e->corr = 0;
			s->npend--;
		}
	}
}
