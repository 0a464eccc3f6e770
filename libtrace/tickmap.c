// SPDX-License-Identifier: MIT
#include "tickmap.h"

#include <string.h>

#define SECOND 1000000000ull
#define BEND 1024 /* a steered segment's slope stays within rate +- rate/BEND */
#define STEER_NS (SECOND / 5) /* an error left at an anchor is steered out over this */
/* Two anchors whose clocks part by more than the rate's error explains
 * (jump()): JUMP_NS, plus READ_NS of reading error at each end of the
 * rate's baseline, plus 1/1024 for CLOCK_MONOTONIC's own changes of rate
 * (NTP slews by up to 500 ppm). A rate not measured (the first guess, or
 * the one from before a jump) may be off by up to GUESS times. */
#define JUMP_NS (SECOND / 1000)
#define READ_NS 32000
#define GUESS 4

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

/* The ticks (rounded down) that make ns_d nanoseconds at the slope. */
static uint64_t ticks_of(uint64_t ns_d, uint64_t slope)
{
	unsigned __int128 t = ((unsigned __int128)ns_d << 32) / slope;
	return t > UINT64_MAX ? UINT64_MAX : (uint64_t)t;
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
	m->prev_tick = tick, m->prev_ns = ns;
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
	if (ns >= m->ref_ns + SECOND / 1000 && tick > m->ref_tick) {
		m->rate = slope_of(ns - m->ref_ns, tick - m->ref_tick);
		m->base = ns - m->ref_ns;
	}
	if (ns >= m->cand_ns + SECOND) {
		m->ref_tick = m->cand_tick, m->ref_ns = m->cand_ns;
		m->cand_tick = tick, m->cand_ns = ns;
	}
}

/* How far the ticks since the last anchor, at the rate, and the
 * nanoseconds CLOCK_MONOTONIC counted meanwhile part, where that is more
 * than the rate's error and the anchors' explain: positive where the
 * ticks ran ahead (a suspend: CLOCK_MONOTONIC stops there, an invariant
 * TSC may not; a VM paused that way), negative where CLOCK_MONOTONIC did
 * (a TSC that stopped); else 0. */
static int64_t jump(const struct ct_tickmap *m, uint64_t tick, uint64_t ns)
{
	if (tick <= m->prev_tick)
		return 0;
	uint64_t d = ns > m->prev_ns ? ns - m->prev_ns : 0, p = mul(tick - m->prev_tick, m->rate);
	uint64_t lo = p < d ? p : d, hi = p < d ? d : p;
	/* A measured rate errs by the reading errors over its baseline, a
	 * guess by a factor. */
	unsigned __int128 tol = m->base ? (unsigned __int128)lo * 2 * READ_NS / m->base + lo / 1024
	                                : (unsigned __int128)lo * (GUESS - 1);
	if (hi - lo <= JUMP_NS + tol)
		return 0;
	uint64_t e = hi - lo > INT64_MAX ? INT64_MAX : hi - lo;
	return p > d ? (int64_t)e : -(int64_t)e;
}

int ct_tickmap_due(const struct ct_tickmap *m, uint64_t tick, uint64_t ns, uint64_t every)
{
	return ns >= m->prev_ns + every || jump(m, tick, ns);
}

/* The map from the last knot to the anchor (tick, ns) where the clocks
 * parted between them (jump()) at a moment nobody saw: the ticks before
 * it follow the line from the knot at the rate, the ticks after it the
 * line at the rate that reaches the anchor, and the map joins the two
 * halfway. Ticks ahead: flat at the nanosecond halfway between the
 * knot's and the anchor's, so a tick in between is off by at most half
 * the anchors' interval, not by the jump. CLOCK_MONOTONIC ahead: a step
 * up at the tick halfway, so one in between is off by the step or not at
 * all. Returns the map's value at the anchor's tick (the anchor's ns,
 * unless the map had already passed it). */
static uint64_t step(struct ct_tickmap *m, uint64_t tick, uint64_t ns)
{
	struct ct_knot *last = knot(m, m->n - 1);
	uint64_t r = m->rate;
	last->slope = r;
	if (line(last, tick) < ns) {
		uint64_t x = last->tick + (tick - last->tick) / 2;
		uint64_t back = mul(tick - x, r), v = back < ns ? ns - back : 0;
		if (x > last->tick && v > line(last, x))
			push(m, x, v, r, 0);
		return line(knot(m, m->n - 1), tick);
	}
	if (ns <= last->ns) { /* converted ticks already map past the anchor */
		last->slope = 0;
		return last->ns;
	}
	uint64_t c = last->ns + (ns - last->ns) / 2;
	uint64_t a = last->tick + ticks_of(c - last->ns, r);
	if (a > last->tick) {
		push(m, a, line(last, a), 0, 0);
		last = knot(m, m->n - 1);
	} else {
		last->slope = 0;
	}
	uint64_t b = tick - ticks_of(ns - last->ns, r);
	if (b > last->tick && b < tick) {
		push(m, b, last->ns, slope_of(ns - last->ns, tick - b), 0);
		last = knot(m, m->n - 1);
	} else { /* too close for the whole line at the rate: straight there */
		last->slope = slope_of(ns - last->ns, tick - last->tick);
	}
	return line(last, tick);
}

int64_t ct_tickmap_anchor(struct ct_tickmap *m, uint64_t tick, uint64_t ns)
{
	struct ct_knot *last = knot(m, m->n - 1);
	if (tick <= last->tick || tick <= m->max_tick)
		return 0;
	/* Ticks up to max_tick were converted on the last knot's line: a knot
	 * there keeps them where they are. */
	if (m->max_tick > last->tick) {
		push(m, m->max_tick, line(last, m->max_tick), last->slope, 0);
		last = knot(m, m->n - 1);
	}
	int64_t j = jump(m, tick, ns);
	/* Two steps in a row with no rate measured since the first: the rate
	 * is off (a bad guess) rather than the clocks parting twice. The
	 * first step measures it again from its anchor: this one takes it. */
	if (j && m->stepped && !m->base)
		j = 0;
	m->stepped = j != 0;
	m->prev_tick = tick, m->prev_ns = ns;
	uint64_t at;
	int reached;
	if (j) {
		/* The rate is measured again from here, without the jump; until
		 * then it is only a guess (it may have been measured across a
		 * jump too small to see). */
		m->ref_tick = m->cand_tick = tick;
		m->ref_ns = m->cand_ns = ns;
		m->base = 0;
		m->jumps++;
		at = step(m, tick, ns);
		reached = at <= ns && ns - at <= 1;
	} else {
		measure(m, tick, ns);
		/* The segment from the last knot may bend now: aim it at the anchor. */
		uint64_t s = ns > last->ns ? slope_of(ns - last->ns, tick - last->tick) : 0;
		/* From an exact knot that is interpolation of the true clock (only a
		 * sanity bound); from a point of the map it is a steered correction,
		 * kept gentle. What it cannot reach now the next anchor goes on with. */
		uint64_t lo = last->exact ? m->rate / 2 : m->rate - m->rate / BEND;
		uint64_t hi = last->exact ? m->rate * 2 : m->rate + m->rate / BEND;
		reached = s >= lo && s <= hi;
		s = s < lo ? lo : s > hi ? hi : s;
		last->slope = s;
		at = line(last, tick);
	}
	/* Reached: the knot is the anchor, but for the slope's rounding (under
	 * a nanosecond over less than 2^32 ticks). Else the extrapolation
	 * after it steers the error out over STEER_NS (200 ms): the segment up to the
	 * anchor is often short (records stamped just before it were already
	 * converted), so without this the error would only grow. */
	uint64_t slope = m->rate;
	if (!reached) {
		unsigned __int128 fix =
		    (unsigned __int128)(at > ns ? at - ns : ns - at) * m->rate / STEER_NS;
		uint64_t cap = m->rate / BEND, f = fix > cap ? cap : (uint64_t)fix;
		slope = at > ns ? m->rate - f : m->rate + f;
	}
	push(m, tick, at, slope, reached);
	return j;
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
