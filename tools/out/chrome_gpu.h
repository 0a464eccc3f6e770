/* Internals of the Chrome writer's GPU part: per-file state, fast
 * number writing, track names and flows (chrome_gpu.c), events
 * (chrome_cupti.c). */
#ifndef CT_CHROME_GPU_H
#define CT_CHROME_GPU_H

#include "out/chrome_int.h"
#include "out/strcache.h"
#include "read/gpu.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXDEV      256
#define API_SLOTS   (1u << 16)
#define PEND_SLOTS  (1u << 14)
#define PEND_PROBE  8
#define SHAPE_SLOTS 4096

/* A call that GPU events may point back to: its track and time as
 * already written, so an arrow costs no number formatting on that side. */
struct api_slot {
	uint64_t corr;
	uint32_t uses;		/* GPU events already tied to it */
	uint8_t pt_len, ts_len; /* 0: not written yet, format from the numbers */
	int64_t tid;
	uint64_t pid, ts;
	char pt[56]; /* "pid":P,"tid":T */
	char ts_text[28];
};

struct pend_slot {
	uint64_t corr, ts, pid;
	int64_t tid;
};

/* A kernel's constant part, formatted once. */
struct shape {
	uint64_t key[14];
	char *head, *tail;
	uint32_t head_len, tail_len, pt_len;
	char pt[56]; /* "pid":P,"tid":T of its track */
};

/* A call's constant part, formatted once per (name, thread, cbid, api). */
#define HEAD_SLOTS 1024
struct api_head {
	uint64_t key[4];
	char *text, *mid;
	uint32_t len, mid_len, pt_len;
	char pt[56];
};

struct cstate {
	const struct gpu_fields *f;
	uint8_t dev_named[MAXDEV]; /* 1: process named, 2: named with the GPU's name */
	char *dev_name[MAXDEV];
	uint64_t dev_sms[MAXDEV], dev_warp[MAXDEV];
	int64_t mem[MAXDEV];
	struct {
		uint64_t ctx, dev;
	} ctxmap[64];
	unsigned nctx;
	uint64_t *tracks; /* (dev << 32 | stream) + 1, open addressing */
	size_t ntracks, tcap;
	struct api_slot *api;
	struct pend_slot *pend;
	size_t npend; /* slots of pend in use: calls need not look when 0 */
	struct shape *shapes;
	struct api_head *heads;
	struct strcache dm; /* demangled, escaped names by string id */
	uint64_t next_id, end_id; /* flow ids of this worker's block */
	uint64_t ts_hi;	    /* gpu_fmt_ts: microseconds / 10^4 as last written */
	uint8_t ts_hi_len;
	char ts_hi_text[24];
};

static inline uint64_t gpu_pid(struct chrome *c, uint64_t dev)
{
	return chrome_gpu_pid(c, (uint32_t)(dev < 999998 ? dev : 999998));
}

static inline size_t mix(uint64_t v)
{
	v ^= v >> 33;
	v *= 0xff51afd7ed558ccdull;
	v ^= v >> 33;
	return (size_t)v;
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

/* chrome_gpu.c: process and track names at first sight, and flows */
void gpu_name_process(struct chrome *c, struct cstate *s, uint64_t dev);
void gpu_name_track(struct chrome *c, struct cstate *s, uint64_t dev, int64_t tid);
/* "pid":P,"tid":T and a time as written in events */
uint32_t gpu_fmt_pt(char *b, uint64_t pid, int64_t tid);
uint32_t gpu_fmt_ts(struct chrome *c, char *b, uint64_t ts);
/* The arrow to a GPU event: its track and time as written (pt, ts; NULL
 * when not written), and as numbers. Arrows are written only when c->mine;
 * the matching state is kept either way. */
void gpu_flow(struct chrome *c, struct cstate *s, uint64_t corr, const char *pt, uint32_t ptl,
              const char *ts, uint32_t tsl, uint64_t pid, int64_t tid, uint64_t tsv);
void gpu_flow_num(struct chrome *c, struct cstate *s, uint64_t corr, uint64_t pid, int64_t tid,
                  uint64_t ts);
/* A call seen (its track and start as numbers, and as written when it was:
 * pt, tss, else NULL): GPU events waiting for it get their arrows. */
void gpu_api_seen(struct chrome *c, struct cstate *s, uint64_t corr, uint64_t pid, int64_t tid,
                  uint64_t ts, const char *pt, uint32_t ptl, const char *tss, uint32_t tsl);

#endif
