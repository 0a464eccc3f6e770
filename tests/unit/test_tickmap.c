// SPDX-License-Identifier: MIT
/* The writer's tick -> CLOCK_MONOTONIC map (libtrace/tickmap.c) against a
 * simulated clock: a TSC at RATE_GHZ whose CLOCK_MONOTONIC runs linearly,
 * then slewed (NTP) by 500 ppm, with anchors read with up to JITTER ns of
 * error, as the writer reads them before each pass. A producer stamps
 * records every few microseconds; each pass converts what was committed
 * by then, a few stamped just after the anchor. Checked: every value is
 * within a bound of the true clock (interpolated ticks within the anchors'
 * error, extrapolated ones within the rate's error over a pass), values
 * never go back along the stamps, a tick converts to the same value
 * whenever it is converted, the map is continuous at its knots, records
 * that waited many passes, and a map that outlives its knots. Then the
 * clocks parting while the process stands (a suspend: the TSC runs on,
 * CLOCK_MONOTONIC stops; or a TSC that stops): the map steps there and
 * is exact again from the next anchor, and jitter never steps it. */
#include "check.h"
#include "tickmap.h"

#include <stdint.h>

#define GHZ 2.6
#define JITTER 60 /* ns: the anchor's reading error, the writer's bracket */

static struct ct_tickmap map;

/* The simulated clock: ns of CLOCK_MONOTONIC at a tick. The rate changes
 * by 500 ppm at SLEW_AT (NTP starting to slew), continuously. */
#define SLEW_AT 3000000000.0
static double true_ns(uint64_t tick)
{
	double t = (double)tick / GHZ;
	if (t > SLEW_AT)
		t = SLEW_AT + (t - SLEW_AT) * (1 + 500e-6);
	return 1e12 + t;
}

static uint64_t tick_at(double t_ns) /* inverse, before the slew only */
{
	return (uint64_t)(t_ns * GHZ);
}

static unsigned rnd(unsigned n)
{
	return (unsigned)(check_rand() % n);
}

static void anchor_at(uint64_t tick)
{
	int64_t j = (int64_t)rnd(2 * JITTER + 1) - JITTER;
	ct_tickmap_anchor(&map, tick, (uint64_t)((int64_t)true_ns(tick) + j));
}

#define NREC 400000
static uint64_t ticks[NREC], vals[NREC];

/* A run of `secs` seconds: a record every 20-120 us, a pass every 20-70 ms
 * (a late one now and then), each pass converting what was stamped before
 * it plus the records stamped up to `after` ns past its anchor (a writer
 * that keeps up converts nearly everything that way, by extrapolation).
 * Returns the largest error in ns seen after `settle` seconds. */
static double kink;
static double run(double secs, double settle, double guess_err, double after)
{
	kink = 0;
	uint64_t t0 = tick_at(1e6);
	ct_tickmap_init(&map, t0, (uint64_t)true_ns(t0),
			(uint64_t)(1.0 / GHZ * (1 + guess_err) * 4294967296.0));
	size_t n = 0, done = 0;
	double t = 1e6, next_pass = t + 20e6, worst = 0;
	while (t < secs * 1e9 && n < NREC) {
		t += 20000 + rnd(100000);
		ticks[n++] = tick_at(t);
		if (t < next_pass)
			continue;
		anchor_at(tick_at(t));
		double gap = 20e6 + rnd(50) * 1e6 + (rnd(20) == 0 ? 400e6 : 0);
		/* after < 0: up to 5 us before the next anchor */
		double end = after < 0 ? t + gap - 5000 : t + rnd(1000) * after / 1000;
		for (; t < end && n < NREC; n++) {
			t += 20000 + rnd(100000);
			ticks[n] = tick_at(t);
		}
		for (; done < n; done++) {
			vals[done] = ct_tickmap_ns(&map, ticks[done]);
			if (done)
				CHECK(vals[done] >= vals[done - 1]);
			double err = (double)vals[done] - true_ns(ticks[done]);
			err = err < 0 ? -err : err;
			/* Next to the kink, linear pieces between anchors L ns
			 * apart miss the true clock by up to 500 ppm * L / 4. */
			double at = (double)ticks[done] / GHZ;
			double *w = at > SLEW_AT - 0.5e9 && at < SLEW_AT + 0.5e9 ? &kink : &worst;
			if (t > settle * 1e9 && err > *w)
				*w = err;
		}
		next_pass = after < 0 ? t + 5000 : t + gap;
	}
	/* Fixed once used: every tick again, in a shuffled order. */
	for (size_t k = 0; k < done; k += 1 + rnd(50))
		CHECK_EQ(ct_tickmap_ns(&map, ticks[k]), vals[k]);
	return worst;
}

static void test_tracks_the_clock(void)
{
	/* A first guess 0.1 % off (cpuinfo's MHz), anchors with 60 ns of
	 * error: after the first second within 1 us of the true clock (60-ish ns seen), the
	 * slew included (500 ppm over a 70 ms pass is 35 us if the rate did
	 * not follow; it does within 10-20 s, and the steering catches up). */
	double w = run(12.0, 1.0, 1e-3, 200e3);
	fprintf(stderr, "  tickmap: worst error %.0f ns, %.0f ns at the kink\n", w, kink);
	CHECK(w < 1000);
	CHECK_EQ(map.jumps, 0); /* nor does any run below step */
	/* From the start, a bad first guess (10 %) costs only the first pass. */
	w = run(2.0, 0.2, 0.1, 200e3);
	fprintf(stderr, "  tickmap: worst error %.0f ns (10 %% guess)\n", w);
	CHECK(w < 1000);
	CHECK_EQ(map.jumps, 0);
	/* Nearly all extrapolated (up to 20 ms past each anchor), across the
	 * slew: the rate lags the clock's by up to 500 ppm for 10-20 s, 10 us
	 * per pass that the steering must take back (without it the error
	 * grows by that much each pass). */
	w = run(16.0, 1.0, 1e-3, 20e6);
	fprintf(stderr, "  tickmap: worst error %.0f ns, %.0f ns at the kink (extrapolated)\n", w, kink);
	CHECK(w < 15000 && kink < 70000);
	CHECK_EQ(map.jumps, 0);
	/* Every record converted before the next anchor is read: the
	 * segment up to it is 5 us long and cannot bend much, so only the
	 * steering of the extrapolation takes errors back. Its equilibrium
	 * under a rate error r is r * 200 ms: 100 us while the rate lags the
	 * slew by 500 ppm, under 1 us elsewhere. */
	w = run(16.0, 1.0, 1e-3, -1);
	fprintf(stderr, "  tickmap: worst error %.0f ns, %.0f ns at the kink (all before the anchor)\n",
		w, kink);
	CHECK(w < 150000 && kink < 150000);
	CHECK_EQ(map.jumps, 0);
}

/* The process stands at running time pause_at (the process's own ns);
 * meanwhile the TSC runs on pause_tsc ns of ticks and CLOCK_MONOTONIC
 * pause_mono ns: a suspend (600 s and 0), a TSC that stops (0 and 5 s). */
static double pause_at, pause_tsc, pause_mono;
static uint64_t p_tick(double r)
{
	return (uint64_t)((r + (r >= pause_at ? pause_tsc : 0)) * GHZ);
}
static double p_mono(double r)
{
	return 1e12 + r + (r >= pause_at ? pause_mono : 0);
}

static double rs[NREC];
struct paused {
	double worst;	/* the largest error of a record not stamped in between */
	double between; /* of one stamped between the anchors around the pause */
	double bound;	/* half the interval between those anchors, on the true clock */
};

/* As the writer does when `writer` is set: a pass every 2-12 ms, each
 * reading the pair and anchoring only when ct_tickmap_due says so (every
 * ANCHOR_NS of CLOCK_MONOTONIC). Else every pass anchors, 20-70 ms apart. */
#define ANCHOR_NS 20000000
static int writer;

/* As run(), on the paused clock, anchors read with up to `jitter` ns of
 * error, a pass now and then `late` ns late. */
static struct paused pause_run(double secs, double at, double tsc, double mono, double jitter,
			       double guess_err, double late)
{
	pause_at = at, pause_tsc = tsc, pause_mono = mono;
	double r = 1e6;
	uint64_t t0 = p_tick(r);
	ct_tickmap_init(&map, t0, (uint64_t)p_mono(r),
			(uint64_t)(1.0 / GHZ * (1 + guess_err) * 4294967296.0));
	struct paused o = {0, 0, 0};
	size_t n = 0, done = 0;
	double next = r + 20e6, a0 = p_mono(r), a0_r = r, a1 = 0, a1_r = 1e300;
	unsigned jit = (unsigned)jitter;
	while (r < secs * 1e9 && n < NREC) {
		r += 20000 + rnd(100000);
		rs[n] = r, ticks[n++] = p_tick(r);
		if (r < next)
			continue;
		int64_t j = (int64_t)rnd(2 * jit + 1) - jit;
		uint64_t tick = p_tick(r), ns = (uint64_t)((int64_t)p_mono(r) + j);
		if (!writer || ct_tickmap_due(&map, tick, ns, ANCHOR_NS))
			ct_tickmap_anchor(&map, tick, ns);
		else
			goto convert;
		if (r < pause_at)
			a0 = p_mono(r), a0_r = r;
		else if (a1 == 0)
			a1 = p_mono(r), a1_r = r, o.bound = (a1 - a0) / 2;
	convert:
		for (double end = r + rnd(1000) * 200.0; r < end && n < NREC; n++) {
			r += 20000 + rnd(100000);
			rs[n] = r, ticks[n] = p_tick(r);
		}
		for (; done < n; done++) {
			vals[done] = ct_tickmap_ns(&map, ticks[done]);
			if (done)
				CHECK(vals[done] >= vals[done - 1]);
			double err = (double)vals[done] - p_mono(rs[done]);
			err = err < 0 ? -err : err;
			double *w = rs[done] > a0_r && rs[done] < a1_r ? &o.between : &o.worst;
			if (err > *w)
				*w = err;
		}
		next = r + (writer ? 2e6 + rnd(10) * 1e6 : 20e6 + rnd(50) * 1e6) +
		       (rnd(20) == 0 ? late : 0);
	}
	for (size_t k = 0; k < done; k += 1 + rnd(50))
		CHECK_EQ(ct_tickmap_ns(&map, ticks[k]), vals[k]);
	return o;
}

static void test_suspend_steps_the_map(void)
{
	/* 600 s suspended 3 s into the run: without the step the first
	 * anchor after it measured a rate 300 times too small, and the map
	 * stayed ~1 s behind for over 1000 s. Now only the records stamped
	 * between the anchors around the suspend are off, by at most half
	 * their interval (the map cannot know when in it the suspend came),
	 * and everything else as without a suspend. */
	struct paused o = pause_run(8.0, 3e9, 600e9, 0, JITTER, 1e-3, 0);
	fprintf(stderr, "  tickmap: suspend: worst error %.0f ns, %.0f ns in between (bound %.0f)\n",
		o.worst, o.between, o.bound);
	CHECK(o.worst < 1000);
	CHECK(o.between <= o.bound + 1000);
	CHECK_EQ(map.jumps, 1);
	/* A short one (a VM paused 50 ms), and one in the first interval,
	 * where the rate is still the first guess (10 % off). */
	o = pause_run(3.0, 1e9, 50e6, 0, JITTER, 1e-3, 0);
	CHECK(o.worst < 1000 && o.between <= o.bound + 1000);
	CHECK_EQ(map.jumps, 1);
	o = pause_run(3.0, 10e6, 600e9, 0, JITTER, 0.1, 0);
	/* (the guess extrapolates the first 200 us after the anchor: 20 us) */
	CHECK(o.worst < 25000 && o.between <= o.bound + 1000);
	CHECK_EQ(map.jumps, 1);
	/* The TSC stopped for 5 s while CLOCK_MONOTONIC ran on: a step up, at
	 * the tick halfway (no tick says when), so a record in between may
	 * land on the wrong side of it: off by the step, never more. */
	o = pause_run(8.0, 3e9, 0, 5e9, JITTER, 1e-3, 0);
	fprintf(stderr, "  tickmap: TSC stopped: worst error %.0f ns, %.0f ns in between\n",
		o.worst, o.between);
	CHECK(o.worst < 1000 && o.between <= 5e9 + 1000);
	CHECK_EQ(map.jumps, 1);
}

static void test_writer_anchors_after_a_suspend(void)
{
	/* The writer reads a pair before every pass and anchors every 20 ms
	 * of CLOCK_MONOTONIC, which stood while suspended: the first pass
	 * after a resume may come sooner than that by its count. Converted
	 * without an anchor, its records would be extrapolated 600 s ahead,
	 * where the map (monotone, fixed once used) could never come back
	 * from. It anchors at once instead. */
	writer = 1;
	uint64_t t0 = tick_at(1e6), rate = (uint64_t)(1.0 / GHZ * 4294967296.0);
	ct_tickmap_init(&map, t0, (uint64_t)true_ns(t0), rate);
	ct_tickmap_anchor(&map, tick_at(21e6), (uint64_t)true_ns(tick_at(21e6)));
	CHECK(!ct_tickmap_due(&map, tick_at(31e6), (uint64_t)true_ns(tick_at(31e6)), ANCHOR_NS));
	CHECK(ct_tickmap_due(&map, tick_at(41e6), (uint64_t)true_ns(tick_at(41e6)), ANCHOR_NS));
	uint64_t later = tick_at(31e6) + tick_at(600e9);
	CHECK(ct_tickmap_due(&map, later, (uint64_t)true_ns(tick_at(31e6)), ANCHOR_NS));
	struct paused o = pause_run(8.0, 3e9, 600e9, 0, JITTER, 1e-3, 0);
	fprintf(stderr, "  tickmap: suspend, writer's passes: worst error %.0f ns, %.0f ns in between\n",
		o.worst, o.between);
	CHECK(o.worst < 1000 && o.between <= o.bound + 1000);
	CHECK_EQ(map.jumps, 1);
	/* and jitter makes no pass anchor sooner */
	o = pause_run(10.0, 1e300, 0, 0, 30000, 1e-3, 0);
	CHECK_EQ(map.jumps, 0);
	CHECK(map.n < 10.0e9 / ANCHOR_NS * 2 + 2); /* an anchor and at most a freeze knot per 20 ms */
	writer = 0;
}

static void test_jitter_does_not_step(void)
{
	/* Anchors read with 30 us of error (a loaded machine), a first guess
	 * 10 % off, passes now and then 2 s late: no pause, no step. */
	struct paused o = pause_run(30.0, 1e300, 0, 0, 30000, 0.1, 2e9);
	fprintf(stderr, "  tickmap: 30 us jitter: worst error %.0f ns\n", o.worst);
	CHECK_EQ(map.jumps, 0);
	CHECK(o.worst < 100000);
}

static void test_continuous_at_knots(void)
{
	run(3.0, 0, 1e-3, 20e6);
	for (unsigned i = 1; i < map.n; i++) {
		const struct ct_knot *k = &map.k[(map.first + i) % CT_TICKMAP_KNOTS];
		uint64_t before = ct_tickmap_ns(&map, k->tick - 1), at = ct_tickmap_ns(&map, k->tick);
		/* One tick is under a nanosecond: the knot adds no jump. */
		CHECK(at >= before && at - before <= 1);
		CHECK(k->slope > 0);
	}
}

static void test_anchor_before_used_ticks_is_ignored(void)
{
	uint64_t t0 = tick_at(1e6);
	ct_tickmap_init(&map, t0, (uint64_t)true_ns(t0), (uint64_t)(1.0 / GHZ * 4294967296.0));
	uint64_t far = tick_at(50e6), v = ct_tickmap_ns(&map, far);
	unsigned n = map.n;
	ct_tickmap_anchor(&map, tick_at(40e6), (uint64_t)true_ns(tick_at(40e6)) + 5000);
	CHECK_EQ(map.n, n); /* would move the value given out for `far` */
	CHECK_EQ(ct_tickmap_ns(&map, far), v);
	ct_tickmap_anchor(&map, tick_at(60e6), (uint64_t)true_ns(tick_at(60e6)));
	CHECK_EQ(ct_tickmap_ns(&map, far), v);
	CHECK(ct_tickmap_ns(&map, tick_at(60e6)) > v);
}

static void test_late_records_interpolate(void)
{
	/* Records that waited 20 passes in a ring: converted after the
	 * anchors around them, they are interpolated. */
	uint64_t t0 = tick_at(1e6);
	ct_tickmap_init(&map, t0, (uint64_t)true_ns(t0), (uint64_t)(1.0 / GHZ * 4294967296.0));
	for (int i = 1; i <= 20; i++)
		anchor_at(tick_at(1e6 + i * 25e6));
	for (int i = 0; i < 1000; i++) {
		uint64_t k = tick_at(1e6 + rnd(500000) * 1000.0);
		double err = (double)ct_tickmap_ns(&map, k) - true_ns(k);
		CHECK(err < JITTER + 2 && err > -JITTER - 2);
	}
}

static void test_outlives_its_knots(void)
{
	uint64_t t0 = tick_at(1e6);
	ct_tickmap_init(&map, t0, (uint64_t)true_ns(t0), (uint64_t)(1.0 / GHZ * 4294967296.0));
	uint64_t prev = 0;
	for (int i = 1; i <= 3 * CT_TICKMAP_KNOTS; i++) {
		uint64_t a = tick_at(1e6 + i * 2e6);
		anchor_at(a);
		uint64_t v = ct_tickmap_ns(&map, a + 100); /* past the anchor: a freeze knot next */
		CHECK(v > prev);
		prev = v;
	}
	CHECK_EQ(map.n, CT_TICKMAP_KNOTS);
	/* Before the oldest knot: extrapolated back at its rate, so off by no
	 * more than the slew (500 ppm) over the distance, and still before it. */
	uint64_t old = tick_at(2e6), first = map.k[map.first].tick;
	double err = (double)ct_tickmap_ns(&map, old) - true_ns(old);
	double dist = true_ns(first) - true_ns(old);
	CHECK(err < 600e-6 * dist && err > -600e-6 * dist);
	CHECK(ct_tickmap_ns(&map, old) < ct_tickmap_ns(&map, first));
}

int main(void)
{
	test_tracks_the_clock();
	test_continuous_at_knots();
	test_anchor_before_used_ticks_is_ignored();
	test_late_records_interpolate();
	test_outlives_its_knots();
	test_suspend_steps_the_map();
	test_writer_anchors_after_a_suspend();
	test_jitter_does_not_step();
	return 0;
}
