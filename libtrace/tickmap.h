// SPDX-License-Identifier: MIT
/* Raw TSC ticks to CLOCK_MONOTONIC nanoseconds, for the writer.
 *
 * With CUPTRACE_CLOCK=tsc (or auto on a CPU with an invariant TSC) the hot
 * path stores raw ticks (clock.h, ct_stamp) and the writer turns them into
 * nanoseconds before anything else sees them, so that every file stays on
 * one clock. The map is a piecewise-linear function through knots
 * (tick, ns), each with the slope (ns per tick, 32.32 fixed point) of the
 * segment that starts there; past the last knot it extrapolates.
 *
 * Its promises (tests/unit/test_tickmap.c checks each):
 *  - monotone: a later tick never maps to an earlier nanosecond, so the
 *    order of a thread's records is kept;
 *  - fixed once used: a tick converts to the same value whenever it is
 *    converted, because a new anchor never moves the map where it has been
 *    used: knots are only added at or after the largest tick converted;
 *  - close to the true clock: an anchor (tick, mono) read by the writer at
 *    the start of a pass becomes a knot at its true value when the segment
 *    that reaches it may still bend; ticks between two anchors are then
 *    interpolated, off by about the anchors' own reading error. Ticks past
 *    the last anchor are extrapolated with the rate measured over the last
 *    1-2 s; the next anchor steers the error back, bending the segment
 *    after the last tick used towards it and the extrapolation after it
 *    by at most 1/1024 of the rate each, so that such a correction
 *    stretches durations by at most 0.1 % (an error of e ns bends them
 *    by 5e ns per second);
 *  - a jump is a step: where the clocks part between two anchors by more
 *    than the rate's error explains (a suspend stops CLOCK_MONOTONIC, not
 *    an invariant TSC), the map steps between them (flat where the ticks
 *    ran ahead, up where they stood) and is exact again from the anchor
 *    on; a tick in between is off by at most half the anchors' interval
 *    (ticks ahead) or the step (ticks behind). The rate is then measured
 *    again from the anchor.
 * Not thread-safe: the writer thread owns its map. */
#ifndef CT_TICKMAP_H
#define CT_TICKMAP_H

#include <stdint.h>

#define CT_TICKMAP_KNOTS 4096 /* anchors >= 20 ms apart: > 40 s of history */

struct ct_knot {
	uint64_t tick, ns;
	uint64_t slope; /* ns per tick << 32, from this knot on */
	uint64_t exact; /* ns is a CLOCK_MONOTONIC reading, not a point of the map */
};

struct ct_tickmap {
	struct ct_knot k[CT_TICKMAP_KNOTS];
	unsigned first, n; /* a ring of knots: k[first] is the oldest */
	/* The segment the last tick fell in, [lo, hi) from knot `seg`: most
	 * records of a pass fall in the one before or after the last knot. */
	uint64_t lo, hi, seg;
	uint64_t rate;	   /* measured ns per tick << 32 */
	uint64_t max_tick; /* the largest tick converted */
	/* True anchors the rate is measured between: ref 1-2 s old, cand
	 * the next ref. */
	uint64_t ref_tick, ref_ns, cand_tick, cand_ns;
	uint64_t base;		     /* ns the rate was measured over; 0: a guess */
	uint64_t prev_tick, prev_ns; /* the last anchor taken */
	uint64_t jumps;		     /* anchors where the map stepped */
	uint64_t stepped;	     /* the last anchor did */
};

/* Starts the map at the anchor (tick, ns) with a first guess of the rate
 * (ns per tick << 32, e.g. from the CPU's nominal frequency). */
void ct_tickmap_init(struct ct_tickmap *m, uint64_t tick, uint64_t ns, uint64_t rate);

/* A (tick, CLOCK_MONOTONIC ns) pair read together. Ignored when it does
 * not move the map forward (a tick not after what was converted).
 * Returns 0, or where the map stepped, by how many ns the ticks since the
 * last anchor ran ahead of CLOCK_MONOTONIC (behind: negative). */
int64_t ct_tickmap_anchor(struct ct_tickmap *m, uint64_t tick, uint64_t ns);

/* Whether the writer should anchor with the pair (tick, ns) it read
 * before a pass: once `every` ns of CLOCK_MONOTONIC went by since the
 * last anchor, and at once where the clocks parted since (after a
 * suspend CLOCK_MONOTONIC may not have counted `every`, but the pass's
 * ticks must not be converted at the rate across it). */
int ct_tickmap_due(const struct ct_tickmap *m, uint64_t tick, uint64_t ns, uint64_t every);

/* The writer's per-record call: inline, for the segment of the last call. */
uint64_t ct_tickmap_ns_slow(struct ct_tickmap *m, uint64_t tick);
static inline uint64_t ct_tickmap_ns(struct ct_tickmap *m, uint64_t tick)
{
	if (tick > m->max_tick)
		m->max_tick = tick;
	if (__builtin_expect(tick >= m->lo && tick < m->hi, 1)) {
		const struct ct_knot *k = &m->k[m->seg];
		return k->ns + (uint64_t)(((unsigned __int128)(tick - k->tick) * k->slope) >> 32);
	}
	return ct_tickmap_ns_slow(m, tick);
}

#endif
