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
 * that waited many passes, and a map that outlives its knots. */
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
	/* From the start, a bad first guess (10 %) costs only the first pass. */
	w = run(2.0, 0.2, 0.1, 200e3);
	fprintf(stderr, "  tickmap: worst error %.0f ns (10 %% guess)\n", w);
	CHECK(w < 1000);
	/* Nearly all extrapolated (up to 20 ms past each anchor), across the
	 * slew: the rate lags the clock's by up to 500 ppm for 10-20 s, 10 us
	 * per pass that the steering must take back (without it the error
	 * grows by that much each pass). */
	w = run(16.0, 1.0, 1e-3, 20e6);
	fprintf(stderr, "  tickmap: worst error %.0f ns, %.0f ns at the kink (extrapolated)\n", w, kink);
	CHECK(w < 15000 && kink < 70000);
	/* Every record converted before the next anchor is read: the
	 * segment up to it is 5 us long and cannot bend much, so only the
	 * steering of the extrapolation takes errors back. Its equilibrium
	 * under a rate error r is r * 200 ms: 100 us while the rate lags the
	 * slew by 500 ppm, under 1 us elsewhere. */
	w = run(16.0, 1.0, 1e-3, -1);
	fprintf(stderr, "  tickmap: worst error %.0f ns, %.0f ns at the kink (all before the anchor)\n",
		w, kink);
	CHECK(w < 150000 && kink < 150000);
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
	return 0;
}
