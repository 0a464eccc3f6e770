// SPDX-License-Identifier: MIT
/* What every part of the Chrome writer writes alike: string references,
 * process and thread ids of tracks, times; and the per-file caches that
 * keep this fast. */
#include "write/chrome/chrome_int.h"
#include "util/xalloc.h"

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

struct cfile *chrome_cfile_new(void)
{
	return xcalloc(1, sizeof(struct cfile));
}

const char *chrome_pt_slow(struct chrome *c, const struct m_track *tr, uint32_t *len)
{
	struct cfile *cf = c->cf;
	size_t i = tr->id - 1;
	if (i >= cf->npt) {
		size_t n = cf->npt ? cf->npt * 2 : 64;
		while (n <= i)
			n *= 2;
		cf->pt = xrealloc(cf->pt, n * sizeof *cf->pt);
		cf->pt_len = xrealloc(cf->pt_len, n);
		memset(cf->pt_len + cf->npt, 0, n - cf->npt);
		cf->npt = n;
	}
	char *p = cf->pt[i];
	PUT_LIT(p, "\"pid\":");
	p = out_put_u64(p, chrome_track_pid(c, tr));
	PUT_LIT(p, ",\"tid\":");
	p = put_i64(p, tr->tid);
	cf->pt_len[i] = (uint8_t)(p - cf->pt[i]);
	*len = cf->pt_len[i];
	return cf->pt[i];
}

uint32_t chrome_fmt_ts_slow(struct chrome *c, char *b, int64_t ns)
{
	if (ns < 10000000)
		return (uint32_t)(put_us(b, ns) - b);
	struct cfile *s = c->cf;
	s->ts_hi = (uint64_t)ns / 1000 / 10000;
	s->ts_hi_len = (uint8_t)(out_put_u64(s->ts_hi_text, s->ts_hi) - s->ts_hi_text);
	return chrome_fmt_ts(c, b, (uint64_t)(ns - c->t->off_ns));
}
