// SPDX-License-Identifier: MIT
#include "tickmap.h"

#include <string.h>

#define SECOND 1000000000ull
#define BEND 1024 /* a steered segment's slope stays within rate +- rate/BEND */
#define STEER_NS (SECOND / 5) /* an error left at an anchor is steered out over this */

static uint64_t mul(uint64_t d, uint64_t slope)
{
	return (uint64_t)(((unsigned __int128)d * slope) >> 32);
}

/* The slope (<< 32) that goes ns_d nanoseconds in d ticks. */
static uint64_t slope_of(uint64_t ns_d, uint64_t d)
{
	unsigned __int128 s = ((unsigned __int128)ns_d << 32) / d;
	return s > UINT64_MAX ? UINT64_MAX : (uint64_t)s;
}

static struct ct_knot *knot(struct ct_tickmap *m, unsigned i)
{
	return &m->k[(m->first + i) % CT_TICKMAP_KNOTS];
}

static uint64_t line(const struct ct_knot *k, uint64_t tick)
{
	if (tick >= k->tick)
		return k->ns + mul(tick - k->tick, k->slope);
	uint64_t back = mul(k->tick - tick, k->slope);
	return back < k->ns ? k->ns - back : 0;
}

static void push(struct ct_tickmap *m, uint64_t tick, uint64_t ns, uint64_t slope, int exact)
{
	if (m->n == CT_TICKMAP_KNOTS) {
		/* The oldest goes: ticks before the new oldest knot (records
		 * that waited that long in a ring) extrapolate backwards. */
		m->first = (m->first + 1) % CT_TICKMAP_KNOTS;
		m->n--;
	}
	*knot(m, m->n++) = (struct ct_knot){tick, ns, slope, (uint64_t)exact};
	m->lo = m->hi = 0; /* the cached segment may have changed */
}

void ct_tickmap_init(struct ct_tickmap *m, uint64_t tick, uint64_t ns, uint64_t rate)
{
	memset(m, 0, sizeof *m);
	m->rate = rate ? rate : 1ull << 32;
	m->ref_tick = m->cand_tick = tick;
	m->ref_ns = m->cand_ns = ns;
	m->max_tick = tick;
	push(m, tick, ns, m->rate, 1);
}

/* The rate from the reference anchor, once 1 ms or more apart (a shorter
 * baseline would carry the anchors' reading error into it); a new
 * reference every second, so that it follows NTP's changes of
 * CLOCK_MONOTONIC's rate within 1-2 s, and errs by about the anchors'
 * reading error over a second (1e-7 for 100 ns). */
static void measure(struct ct_tickmap *m, uint64_t tick, uint64_t ns)
{
	if (ns >= m->ref_ns + SECOND / 1000 && tick > m->ref_tick)
		m->rate = slope_of(ns - m->ref_ns, tick - m->ref_tick);
	if (ns >= m->cand_ns + SECOND) {
		m->ref_tick = m->cand_tick, m->ref_ns = m->cand_ns;
		m->cand_tick = tick, m->cand_ns = ns;
	}
}

void ct_tickmap_anchor(struct ct_tickmap *m, uint64_t tick, uint64_t ns)
{
	struct ct_knot *last = knot(m, m->n - 1);
	if (tick <= last->tick || tick <= m->max_tick)
		return;
	/* Ticks up to max_tick were converted on the last knot's line: a knot
	 * there keeps them where they are. */
	if (m->max_tick > last->tick) {
		push(m, m->max_tick, line(last, m->max_tick), last->slope, 0);
		last = knot(m, m->n - 1);
	}
	measure(m, tick, ns);
	/* The segment from the last knot may bend now: aim it at the anchor. */
	uint64_t s = ns > last->ns ? slope_of(ns - last->ns, tick - last->tick) : 0;
	/* From an exact knot that is interpolation of the true clock (only a
	 * sanity bound); from a point of the map it is a steered correction,
	 * kept gentle. What it cannot reach now the next anchor goes on with. */
	uint64_t lo = last->exact ? m->rate / 2 : m->rate - m->rate / BEND;
	uint64_t hi = last->exact ? m->rate * 2 : m->rate + m->rate / BEND;
	int reached = s >= lo && s <= hi;
	s = s < lo ? lo : s > hi ? hi : s;
	last->slope = s;
	/* Reached: the knot is the anchor, but for the slope's rounding (under
	 * a nanosecond over less than 2^32 ticks). Else the extrapolation
	 * after it steers the error out over STEER_NS (200 ms): the segment up to the
	 * anchor is often short (records stamped just before it were already
	 * converted), so without this the error would only grow. */
	uint64_t at = line(last, tick), slope = m->rate;
	if (!reached) {
		unsigned __int128 fix =
		    (unsigned __int128)(at > ns ? at - ns : ns - at) * m->rate / STEER_NS;
		uint64_t cap = m->rate / BEND, f = fix > cap ? cap : (uint64_t)fix;
		slope = at > ns ? m->rate - f : m->rate + f;
	}
	push(m, tick, at, slope, reached);
}

/* Caches segment i (0..n-1 from the oldest) as the current one. */
static void use(struct ct_tickmap *m, unsigned i)
{
	m->seg = (m->first + i) % CT_TICKMAP_KNOTS;
	m->lo = m->k[m->seg].tick;
	m->hi = i + 1 < m->n ? knot(m, i + 1)->tick : UINT64_MAX;
}

uint64_t ct_tickmap_ns_slow(struct ct_tickmap *m, uint64_t tick)
{
	if (tick < knot(m, 0)->tick)
		return line(knot(m, 0), tick); /* back from the oldest; not cached */
	/* Records that waited in a ring past an anchor or more. */
	unsigned lo = 0, hi = m->n; /* k(lo) <= tick < k(hi), k(n) = infinity */
	while (hi - lo > 1) {
		unsigned mid = lo + (hi - lo) / 2;
		if (knot(m, mid)->tick <= tick)
			lo = mid;
		else
			hi = mid;
	}
	use(m, lo);
	return line(knot(m, lo), tick);
}
