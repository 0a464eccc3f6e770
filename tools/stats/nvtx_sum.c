// SPDX-License-Identifier: MIT
/* nvtx_sum: time spent in each NVTX range (push/pop and start/end), like
 * `nsys stats --report nvtx_sum`. One row per range name and style. */
#include "stats/durations.h"
#include "stats/stats.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static const char STYLE_PUSHPOP[] = "PushPop", STYLE_STARTEND[] = "StartEnd";

struct nvtx_sum {
	struct durations d;
	uint64_t unfinished; /* ranges left out: no end of their own */
};

static void *begin(const struct stats_opts *opts)
{
	(void)opts;
	return xcalloc(1, sizeof(struct nvtx_sum));
}

/* A range's name as nsys's NVTX reports write it: "domain:name", the
 * default domain empty (":step"), so that scripts written against
 * `nsys stats` find the same names. */
void nvtx_range_label(const struct span *s, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s:%.*s", (int)s->domain.len, s->domain.s ? s->domain.s : "",
	         (int)s->name.len, s->name.s ? s->name.s : "");
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	(void)t;
	struct nvtx_sum *st = p;
	char key[512];
	const char *style;
	const struct span *s = ev->span;
	/* NVTX ranges only, as nsys's: steps are the `steps` report's (rows
	 * of Style "Step" without a Time (%) would be rows nsys has not) */
	if (ev->cat != MC_NVTX)
		return;
	style = ev->type == ME_ASYNC ? STYLE_STARTEND : STYLE_PUSHPOP;
	/* A range still open at a capture stop, a kill or the end of the file
	 * (or whose pop was lost) has no length of its own: the timeline shows
	 * it to the thread's last event, marked unfinished; nsys's reports
	 * leave such ranges (no end) out, and so does this one. */
	if (s->unfinished) {
		st->unfinished++;
		return;
	}
	nvtx_range_label(s, key, sizeof key);
	dur_add(&st->d, key, style, s->end - s->ts);
}

static void merge(void *p, void *part)
{
	struct nvtx_sum *st = p, *o = part;
	dur_merge(&st->d, &o->d);
	st->unfinished += o->unfinished;
	free(part);
}

static void drop(void *part)
{
	dur_free(&((struct nvtx_sum *)part)->d);
	free(part);
}

static const char *const styles[] = {STYLE_PUSHPOP, STYLE_STARTEND, NULL};

static void pack(void *part, struct pack *b)
{
	struct nvtx_sum *st = part;
	dur_pack(&st->d, b, styles);
	pk_u64(b, st->unfinished);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	(void)p;
	struct nvtx_sum *st = xcalloc(1, sizeof *st);
	dur_unpack(&st->d, b, styles);
	st->unfinished = up_u64(b);
	return st;
}

static int end(void *p, struct table **out)
{
	struct nvtx_sum *st = p;
	out[0] = dur_table(&st->d, "nvtx_sum: NVTX range summary", "Instances", "Range", 1, NULL);
	if (st->unfinished) {
		char note[160];
		snprintf(note, sizeof note,
			 "%llu unfinished range%s left out (open at a capture stop or at the end of "
			 "a file: no end of their own)",
			 (unsigned long long)st->unfinished, st->unfinished == 1 ? "" : "s");
		table_note(out[0], note);
	}
	free(p);
	return 1;
}

const struct report report_nvtx_sum = {
	"nvtx_sum", "time in each NVTX range (Time %, total, instances, avg, median, min, max, stddev)",
	begin, event, end,
	.merge = merge, .pack = pack, .unpack = unpack, .drop = drop,
};
