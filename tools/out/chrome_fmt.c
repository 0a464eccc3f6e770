/* What every part of the Chrome writer writes alike: string references,
 * process and thread ids of tracks, times; and the per-file caches that
 * keep this fast. */
#include "out/chrome_int.h"

#include <stdlib.h>

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

uint64_t chrome_gpu_pid(const struct chrome *c, uint64_t device)
{
	uint64_t d = device < 999998 ? device : 999998;
	return c->kineto ? d : c->t->pid + 1 + d;
}

uint64_t chrome_track_pid(const struct chrome *c, const struct m_track *tr)
{
	return tr->on_gpu ? chrome_gpu_pid(c, tr->device) : c->t->pid;
}

struct cfile *chrome_cfile(struct chrome *c)
{
	if (!c->cf) {
		c->cf = calloc(1, sizeof *c->cf);
		if (!c->cf)
			exit(1);
	}
	return c->cf;
}

const char *chrome_pt(struct chrome *c, const struct m_track *tr, uint32_t *len)
{
	struct cfile *cf = chrome_cfile(c);
	size_t i = tr->id - 1;
	if (i >= cf->npt) {
		size_t n = cf->npt ? cf->npt * 2 : 64;
		while (n <= i)
			n *= 2;
		cf->pt = realloc(cf->pt, n * sizeof *cf->pt);
		cf->pt_len = realloc(cf->pt_len, n);
		if (!cf->pt || !cf->pt_len)
			exit(1);
		memset(cf->pt_len + cf->npt, 0, n - cf->npt);
		cf->npt = n;
	}
	if (!cf->pt_len[i]) {
		char *p = cf->pt[i];
		PUT_LIT(p, "\"pid\":");
		p = out_put_u64(p, chrome_track_pid(c, tr));
		PUT_LIT(p, ",\"tid\":");
		p = put_i64(p, tr->tid);
		cf->pt_len[i] = (uint8_t)(p - cf->pt[i]);
	}
	*len = cf->pt_len[i];
	return cf->pt[i];
}

/* Times of one file are close to each other: the digits above the last
 * four of the microseconds (10 ms) are formatted once and reused. */
static uint32_t fmt_ts(struct cfile *s, char *b, int64_t ns)
{
	if (ns < 10000000)
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

/* A flow ends where a slice was just written (the GPU work): that time is
 * copied from where it stands in the output, not formatted again (copying
 * from a scratch copy would stall on store-to-load forwarding). */
uint32_t chrome_fmt_ts(struct chrome *c, char *b, uint64_t ts)
{
	struct cfile *s = chrome_cfile(c);
	int64_t ns = (int64_t)ts + c->t->off_ns;
	const char *buf = c->o ? c->o->buf : NULL;
	/* (a buffer handed to the sink may come back at the same address:
	 * its length then starts again below where the text stood) */
	if (ns == s->last_ns && s->last_buf == buf && buf &&
	    s->last_at + s->last_len <= buf + c->o->len) {
		memcpy(b, s->last_at, s->last_len);
		return s->last_len;
	}
	uint32_t n = fmt_ts(s, b, ns);
	if (buf && b >= buf && b < buf + c->o->cap)
		s->last_ns = ns, s->last_at = b, s->last_buf = buf, s->last_len = (uint8_t)n;
	return n;
}
