/* The union of one GPU's work, streamed (breakdown, gpu_gaps). GPU work
 * comes to the reports grouped by stream (CUPTI's buffers), so intervals
 * are in start order within a stream but not across streams. Each
 * interval waits in a heap by start until no stream can bring one that
 * starts earlier: the watermark is the smallest "last start" over the
 * streams seen lately (a stream's next interval starts no earlier than its
 * last). Released in start order, the intervals feed a sweep that keeps
 * only the work still running (a heap of ends): it cuts time into
 * segments, each with the set of categories running through it, and hands
 * them out in time order. Memory holds the work not yet released (one
 * CUPTI buffer's worth, capped at BUSY_MAX_WAIT: beyond, the oldest is
 * released and a later interval that starts before the sweep's time is cut
 * to start there) plus what is running: flat in the number of events. */
#ifndef CT_BUSY_H
#define CT_BUSY_H

#include <stddef.h>
#include <stdint.h>

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

struct busy *busy_new(busy_fn fn, void *ctx);
/* Work [ts, end] of category cat on the stream `src` (any pointer that
 * tells streams apart). */
void busy_add(struct busy *b, const void *src, uint64_t ts, uint64_t end, unsigned cat, int64_t tid);
/* Releases everything and ends the sweep at the last end. */
void busy_finish(struct busy *b);
void busy_free(struct busy *b);

#endif
