// SPDX-License-Identifier: MIT
/* Internals shared by the Chrome JSON writer's parts: chrome.c (document,
 * files, dispatch of the model's events), chrome_nvtx.c (NVTX spans),
 * chrome_cupti.c (CUDA calls and GPU activity), chrome_nccl.c (NCCL),
 * chrome_torch.c (PyTorch's operators, scopes and memory), chrome_mpi.c (MPI),
 * chrome_tracks.c (processes, tracks, flows), on top of chrome_fmt.c
 * (numbers, times, track ids as Chrome writes them). The parts format;
 * every match was made by the model. */
#ifndef CT_CHROME_INT_H
#define CT_CHROME_INT_H

#include "model/model.h"
#include "write/chrome/chrome.h"
#include "util/strcache.h"

#include <string.h>

/* Separator before each event object. 0 when the event at hand is not
 * this worker's to write (see chrome.h, shares): the caller then writes
 * nothing. Always test it. */
__attribute__((warn_unused_result)) static inline int chrome_sep(struct chrome *c)
{
	if (!*c->mine)
		return 0;
	/* The document head always holds an event, so every later one
	 * starts with a comma; chunks handed to the sink end between events. */
	out_chunk(c->o, CHROME_CHUNK);
	out_lit(c->o, ",\n");
	c->nevents++;
	return 1;
}

/* ---- fast writing: an event's text is written straight into the output
 * buffer after one bounds check (out_need), numbers by two digits at a
 * time. This loop writes hundreds of MB of JSON per second. */
static inline char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return out_put_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return out_put_u64(p, (uint64_t)v);
}

/* ns as microseconds with three decimals */
static inline char *put_us(char *p, int64_t ns)
{
	if (ns < 0) {
		*p++ = '-';
		ns = -ns;
	}
	p = out_put_u64(p, (uint64_t)ns / 1000);
	unsigned f = (unsigned)((uint64_t)ns % 1000);
	p[0] = '.';
	p[1] = (char)('0' + f / 100);
	memcpy(p + 2, out_digits2 + 2 * (f % 100), 2);
	return p + 4;
}

#define PUT_LIT(p, s) (memcpy((p), (s), sizeof(s) - 1), (p) += sizeof(s) - 1)
#define BEGIN(o, max) (out_need((o), (max)), (o)->buf + (o)->len)
#define END(o, p)     ((o)->len = (size_t)((p) - (o)->buf))
#define NUM_MAX       24 /* bytes a number can take, with slack */

/* ---- chrome_fmt.c: per-file formatting caches */

#define PT_MAX 56 /* "pid":P,"tid":T */

#define TS_TEXT 24 /* a time as written, with room for fixed-size copies */

struct shape;
struct api_head;



struct cfile {
	char (*pt)[PT_MAX]; /* "pid":P,"tid":T of each track, by id - 1 */
	uint8_t *pt_len;    /* 0: not formatted yet */
	size_t npt;
	struct shape *shapes;  /* kernels' constant parts (chrome_cupti.c) */
	struct api_head *heads; /* calls' constant parts (chrome_cupti.c) */
	struct strcache dm;     /* escaped demangled kernel names by string id */
	uint64_t gpu_ts;        /* the last GPU slice's start, and as written: */
	uint8_t gpu_ts_len;     /* its flow ends there (0: none yet) */
	char gpu_ts_text[TS_TEXT];
	uint64_t ts_hi;         /* chrome_fmt_ts: microseconds / 10^4 as last written */
	uint8_t ts_hi_len;
	char ts_hi_text[24];
};

/* The current file's caches (made when the file begins: c->cf). */
struct cfile *chrome_cfile_new(void);

/* A string reference of the current file, quoted and escaped. */
void chrome_sref(struct chrome *c, const struct sref *r);
/* ,"pid":P,"tid":T */
void chrome_pid_tid(struct chrome *c, uint64_t pid, int64_t tid);
/* ,"ts":<us> for a tracer-clock timestamp of the current file */
void chrome_ts(struct chrome *c, uint64_t t);
/* The process of a GPU of the current file. */
uint64_t chrome_gpu_pid(const struct chrome *c, uint64_t device);
/* The process a track lives in. */
uint64_t chrome_track_pid(const struct chrome *c, const struct m_track *tr);
/* "pid":P,"tid":T of a track (formatted once per track); its length. */
const char *chrome_pt_slow(struct chrome *c, const struct m_track *tr, uint32_t *len);
static inline const char *chrome_pt(struct chrome *c, const struct m_track *tr, uint32_t *len)
{
	struct cfile *cf = c->cf;
	size_t i = tr->id - 1;
	if (i < cf->npt && cf->pt_len[i]) {
		*len = cf->pt_len[i];
		return cf->pt[i];
	}
	return chrome_pt_slow(c, tr, len);
}

/* ,"pid":P,"tid":T of a track, from the cache. */
static inline void chrome_track_pt(struct chrome *c, const struct m_track *tr)
{
	uint32_t n;
	const char *pt = chrome_pt(c, tr, &n);
	struct out *o = c->o;
	out_need(o, n + 1);
	o->buf[o->len++] = ',';
	memcpy(o->buf + o->len, pt, n);
	o->len += n;
}

/* A time as events write it at b (TS_TEXT bytes of room); its length.
 * Times of one file are close to each other: the digits above the last
 * four of the microseconds (10 ms) are formatted once and reused. */
uint32_t chrome_fmt_ts_slow(struct chrome *c, char *b, int64_t ns);
static inline uint32_t chrome_fmt_ts(struct chrome *c, char *b, uint64_t ts)
{
	struct cfile *s = c->cf;
	int64_t ns = (int64_t)ts + c->t->off_ns;
	uint64_t us = (uint64_t)ns / 1000;
	if (ns < 10000000 || us / 10000 != s->ts_hi || !s->ts_hi_len)
		return chrome_fmt_ts_slow(c, b, ns);
	unsigned lo = (unsigned)(us % 10000), f = (unsigned)((uint64_t)ns % 1000);
	memcpy(b, s->ts_hi_text, 16); /* hi has at most 12 digits */
	char *p = b + s->ts_hi_len;
	memcpy(p, out_digits2 + 2 * (lo / 100), 2);
	memcpy(p + 2, out_digits2 + 2 * (lo % 100), 2);
	p[4] = '.';
	p[5] = (char)('0' + f / 100);
	memcpy(p + 6, out_digits2 + 2 * (f % 100), 2);
	return (uint32_t)(p + 8 - b);
}


/* ---- the parts */
void chrome_span(struct chrome *c, const struct m_event *ev);
void chrome_kernel(struct chrome *c, const struct m_event *ev);
void chrome_gpu_slice(struct chrome *c, const struct m_event *ev); /* copies, memsets, syncs */
void chrome_api(struct chrome *c, const struct m_event *ev);
void chrome_memory(struct chrome *c, const struct m_event *ev);
void chrome_cupti_free(struct cfile *cf);
void chrome_nccl(struct chrome *c, const struct m_event *ev);
void chrome_torch(struct chrome *c, const struct m_event *ev); /* chrome_torch.c */
/* MC_MPI, MC_MPI_HANG (MC_MPI_COMM is not drawn) */
void chrome_mpi(struct chrome *c, const struct m_event *ev);
void chrome_process(struct chrome *c, const struct m_event *ev);
void chrome_track(struct chrome *c, const struct m_track *tr);
void chrome_flow(struct chrome *c, const struct m_event *ev);
/* The deviceProperties array of all files, or of the output `only` leads
 * (reads the beginning of the files that traced CUDA, then rewinds them). */
void chrome_cupti_devices(struct out *o, struct inputs *in, const struct tfile *only);

#endif
