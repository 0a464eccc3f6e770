// SPDX-License-Identifier: MIT
/* Pacing for the test harnesses (tests/progs/nccl_harness.c), so that the
 * tests can predict timing (all ranks on one host): HARNESS_PACE_US=P puts
 * every collective call (or group) and every step mark in a slot P us
 * apart from HARNESS_T0 (CLOCK_REALTIME ns, default now) and waits for it;
 * HARNESS_LATE=R:D:E makes rank R come D us late at every E-th collective
 * slot; HARNESS_STEP_LATE=R:D makes rank R mark odd iterations' steps D us
 * late. */
#ifndef CT_PACE_H
#define CT_PACE_H

#include "truth.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct {
	uint64_t t0, ns, late_ns, step_late_ns;
	uint64_t arrival; /* when the late rank came to the last collective slot */
	long k, coll_k, late_every;
	int rank, late_rank, step_late_rank;
} pacing = {.late_rank = -1, .step_late_rank = -1};

static void pace_init(int world_rank)
{
	pacing.rank = world_rank;
	const char *v = getenv("HARNESS_PACE_US");
	if (!v)
		return;
	pacing.ns = strtoull(v, NULL, 10) * 1000;
	v = getenv("HARNESS_T0");
	if (v) {
		pacing.t0 = strtoull(v, NULL, 10);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		pacing.t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	unsigned long long d;
	long e;
	int r;
	if ((v = getenv("HARNESS_LATE")) && sscanf(v, "%d:%llu:%ld", &r, &d, &e) == 3 && e > 0)
		pacing.late_rank = r, pacing.late_ns = d * 1000, pacing.late_every = e;
	if ((v = getenv("HARNESS_STEP_LATE")) && sscanf(v, "%d:%llu", &r, &d) == 2)
		pacing.step_late_rank = r, pacing.step_late_ns = d * 1000;
}

/* Waits for the next slot: a collective's (coll) or a step mark's of
 * iteration it. */
static void pace(int coll, int it)
{
	if (!pacing.ns)
		return;
	uint64_t t = pacing.t0 + (uint64_t)pacing.k++ * pacing.ns;
	int late = coll && pacing.late_rank >= 0 && pacing.coll_k % pacing.late_every == 0;
	if (coll)
		pacing.arrival = t + (late ? pacing.late_ns : 0);
	if (late && pacing.rank == pacing.late_rank)
		t += pacing.late_ns;
	if (!coll && pacing.rank == pacing.step_late_rank && it % 2)
		t += pacing.step_late_ns;
	pacing.coll_k += coll;
	struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL))
		;
}

/* Half a slot before the first: the first step's range then starts when
 * the job does, not when this rank did (the demo's step 0 was the wait for
 * the other ranks). */
static void pace_start(void)
{
	if (!pacing.ns)
		return;
	uint64_t t = pacing.t0 - pacing.ns / 2;
	struct timespec ts = {(time_t)(t / 1000000000u), (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, NULL))
		;
}

static void mark_step(void (*step)(void), int it)
{
	pace(0, it);
	uint64_t t0 = mono_ns();
	step();
	if (pacing.ns) /* the mark lies between t0 and t1 */
		truth("{\"kind\": \"step\", \"rank\": %d, \"step\": %d, \"t0\": %llu, \"t1\": %llu}",
		      pacing.rank, it + 1, (unsigned long long)t0, (unsigned long long)mono_ns());
}

#endif
