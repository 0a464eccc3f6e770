/* Helpers shared by the benchmark programs: clock, barrier, key=value
 * output that the bench drivers parse. Header-only so each program stays one file. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Cost of one clock_gettime(CLOCK_MONOTONIC) in ns: the best of a few
 * batches, so a preemption does not inflate it. */
static inline double clock_gettime_ns(void)
{
	double best = 1e9;
	for (int b = 0; b < 5; b++) {
		struct timespec ts;
		const int n = 2000000;
		uint64_t t0 = now_ns(), sink = 0;
		for (int i = 0; i < n; i++) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			sink += (uint64_t)ts.tv_nsec;
		}
		double ns = (double)(now_ns() - t0) / n;
		__asm__ volatile("" : : "r"(sink));
		if (ns < best)
			best = ns;
	}
	return best;
}

/* xorshift64: cheap deterministic jitter. */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Busy work of about n loop iterations that the compiler cannot drop. */
static inline void spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		__asm__ volatile("" ::: "memory");
}

static inline long arg_long(int argc, char **argv, int i, long def)
{
	return argc > i ? strtol(argv[i], NULL, 0) : def;
}

#endif
