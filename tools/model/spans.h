// SPDX-License-Identifier: MIT
/* Turns the event stream of one file into spans: push/pop pairs become
 * ranges, start/end pairs (possibly on two threads) async ranges, plus
 * marks, steps and capture switches. Chrome output and the statistics both
 * consume spans, so pairing rules live in one place. */
#ifndef CT_SPANS_H
#define CT_SPANS_H

#include "dec.h"

#include <stdint.h>

struct sref {
	uint64_t sid; /* CT_SREF_* or a string id */
	const char *s;
	uint32_t len;
};

enum span_kind { SP_RANGE, SP_ASYNC, SP_MARK, SP_STEP, SP_CAPTURE, SP_THREAD };

struct span {
	enum span_kind kind;
	int64_t tid, end_tid;
	uint64_t ts, end; /* tracer clock, ns */
	struct sref name, domain, category_name;
	uint64_t category, color, ptype, payload, id;
	int depth;
	int unfinished; /* closed by the end of the file or a capture stop */
	int at_end;     /* unfinished: still open when the file ended (nccl_hang) */
	int user;	/* SP_THREAD: the name came from nvtxNameOsThread */
};

typedef void (*span_fn)(void *ctx, const struct span *s);

struct spans; /* opaque */

struct spans *spans_new(span_fn fn, void *ctx);
void spans_free(struct spans *sp);
void spans_event(struct spans *sp, const struct ct_event *ev);
/* Steps are marked by NVTX range `name` (CUPTRACE_STEP_RANGE): a step
 * ends when the range that began it ends (else at the next step mark). */
void spans_step_range(struct spans *sp, const char *name, size_t len);
/* Thread tid's NVTX as far as the file told so far: calls fn (when not
 * NULL) for each push/pop range open on it that began at or before ts,
 * with its domain, depth and start; returns the thread's last timestamp,
 * 0 when the file holds nothing of that thread yet. */
uint64_t spans_open_at(const struct spans *sp, int64_t tid, uint64_t ts,
                       void (*fn)(void *ctx, uint64_t domain, int depth, uint64_t ts), void *ctx);
/* Closes what is still open (at each thread's last timestamp) and reports
 * thread names (SP_THREAD). */
void spans_finish(struct spans *sp);
/* Last timestamp seen in the file. */
uint64_t spans_last_ts(const struct spans *sp);

#endif
