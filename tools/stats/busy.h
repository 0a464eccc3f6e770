// SPDX-License-Identifier: MIT
/* The union of one GPU's work, streamed (breakdown, gpu_gaps). GPU work
 * comes to the reports grouped by stream: the tracer writes the GPU
 * records of each CUPTI buffer stream by stream, at most 2048 at a time,
 * so within a stream intervals come in start order, but a stream's work
 * can come a whole group later than other streams' work of the same time,
 * and a stream the report has not seen yet may first appear there (the
 * last stream of a buffer: all of its records after all the others').
 * Each interval therefore waits until (1) BUSY_ORDER intervals have come
 * after it, so that every stream of its group has been seen (a ring of
 * the last BUSY_ORDER, with the smallest start among them), and (2) no
 * stream seen can bring one that starts earlier: the watermark is the
 * smallest "last start" over the streams seen lately (a stream's next
 * interval starts no earlier than its last); the older ones wait in a
 * heap by start. Released in
 * start order, the intervals feed a sweep that keeps only the work still
 * running (a heap of ends): it cuts time into segments, each with the set
 * of categories running through it, and hands them out in time order.
 * Memory holds the work not yet released (BUSY_ORDER intervals, plus what
 * a stream that lags behind the others holds back, capped at
 * BUSY_MAX_WAIT: beyond, the oldest is released) plus what is running:
 * flat in the number of events. Work that comes after the sweep passed
 * its start anyway (out of order by more than that) is cut to start there
 * and counted (busy_late): the reports say so in a note. */
#ifndef CT_BUSY_H
#define CT_BUSY_H

#include <stddef.h>
#include <stdint.h>

#define BUSY_ORDER    (1u << 13) /* 4 of the tracer's groups (2048 GPU records); a power of 2 */
#define BUSY_MAX_WAIT (1u << 20)

enum { BUSY_COMPUTE = 1, BUSY_COMM = 2, BUSY_MEMORY = 4 };

struct busy_iv {
	uint64_t ts, end;
	int64_t tid; /* the launching thread, 0 when not known */
	unsigned cat;
};

/* A segment [a, b) in which the categories of mask ran (0: idle); for an
 * idle segment, next is the work that ended it. */
typedef void (*busy_fn)(void *ctx, uint64_t a, uint64_t b, unsigned mask,
                        const struct busy_iv *next);

struct busy;

/* Work the sweep had passed when it came: how many intervals and how many
 * ns of them before the sweep's time, which were not counted. */
struct busy_late {
	uint64_t n, ns;
};

struct busy *busy_new(busy_fn fn, void *ctx);
/* Work [ts, end] of category cat on the stream `src` (any pointer that
 * tells streams apart). */
void busy_add(struct busy *b, const void *src, uint64_t ts, uint64_t end, unsigned cat, int64_t tid);
/* Releases everything and ends the sweep at the last end. */
void busy_finish(struct busy *b);
/* What came too late, so far (after busy_finish: in all). */
struct busy_late busy_late(const struct busy *b);
void busy_free(struct busy *b);

/* The note of a report whose union missed work that came late (l.n > 0). */
#define BUSY_LATE_NOTE 240
void busy_late_note(char *buf, size_t size, struct busy_late l);

#endif
