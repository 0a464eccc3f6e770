// SPDX-License-Identifier: MIT
/* The tracer clock: CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).
 * Every timestamp in a file is on this clock; the header anchors it to
 * CLOCK_REALTIME so that the tools can line up processes and hosts.
 *
 * Records in the rings are stamped with ct_stamp(): on a CPU whose TSC is
 * invariant (CUPTRACE_CLOCK, clock.c) that is the raw TSC, a third of the
 * cost of clock_gettime here, and the record says so with CT_REC_TICKS in
 * its `reserved` field; the writer turns those ticks into CLOCK_MONOTONIC
 * nanoseconds (tickmap.h) before anything reads them. Everything else
 * (definitions, the writer's own times, the CUPTI timestamp callback)
 * reads CLOCK_MONOTONIC with ct_now(). */
#ifndef CT_CLOCK_H
#define CT_CLOCK_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#define CT_REC_TICKS 1u /* ct_rec.reserved: f[0] holds raw TSC ticks */

/* CT_REC_TICKS when records are stamped with the TSC, else 0. Set once by
 * ct_clock_setup (before the first record) and kept across fork. */
extern uint16_t ct_tick_flag;

static inline uint64_t ct_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ms from now on CLOCK_MONOTONIC, for sem_clockwait and
 * pthread_clockjoin_np: a step of the wall clock neither stalls nor cuts
 * the writer's waits (CLOCK_REALTIME's sem_timedwait did). */
static inline struct timespec ct_deadline(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_sec++, ts.tv_nsec -= 1000000000L;
	return ts;
}

/* A record's timestamp: raw ticks when ct_tick_flag says so. Plain rdtsc,
 * not the ordered lfence+rdtsc that clock_gettime uses: it may run a few
 * cycles ahead of the instructions before it, far below the map's error,
 * and costs half as much. */
static inline uint64_t ct_stamp(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(ct_tick_flag != 0, 1))
		return __rdtsc();
#endif
	return ct_now();
}

static inline uint64_t ct_realtime(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A (realtime, monotonic) pair read as close together as we can: the
 * tightest of a few brackets. */
void ct_clock_anchor(uint64_t *rt, uint64_t *mono);

/* Chooses the record clock from CUPTRACE_CLOCK (enum ct_clock_mode) and
 * the CPU, and reads the first (tick, ns) anchor. Returns the mode used. */
int ct_clock_setup(int mode);
/* A (TSC, CLOCK_MONOTONIC) pair read as close together as we can. */
void ct_clock_pair(uint64_t *tick, uint64_t *ns);
/* The anchor read by ct_clock_setup (or after fork) and the nominal rate
 * (ns per tick << 32): the start of the writer's map. */
void ct_clock_start(uint64_t *tick, uint64_t *ns, uint64_t *rate);
/* In the child of a fork: a new start anchor, the rate kept. */
void ct_clock_fork_child(uint64_t rate);

/* What CPUID says of the TSC's rate: the highest basic leaf, leaf 0x15's
 * eax, ebx, ecx and leaf 0x16's eax (zeros past the highest leaf). */
struct ct_cpuid_tsc {
	unsigned max_leaf, l15[3], l16;
};
/* The TSC's nominal rate in kHz from CPUID (leaf 0x15 where it names the
 * crystal, else 0x16's base frequency), 0 where it does not say. */
uint64_t ct_tsc_nominal_khz(const struct ct_cpuid_tsc *c);
/* The first guess of the TSC's rate in kHz, from the nominal rate (CPUID,
 * else the model name's "@ 2.60GHz" of /proc/cpuinfo's text `info`),
 * the rate `measured` over the setup (0: none) and cpuinfo's "cpu MHz":
 * the nominal rate where the measurement agrees within 2 % or there is
 * none, else the measurement, else "cpu MHz"; 0 when nothing says.
 * *src names the one taken. */
uint64_t ct_tsc_guess_khz(const char *info, const struct ct_cpuid_tsc *c, uint64_t measured,
			  const char **src);

#endif
