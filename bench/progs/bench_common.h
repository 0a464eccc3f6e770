// SPDX-License-Identifier: MIT
/* Helpers shared by the benchmark programs: clock, barrier, key=value
 * output that the bench drivers parse. Header-only so each program stays one file. */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread: unlike wall time it does not count the
 * time the thread waits for a core, which on a shared machine is noise. */
static inline uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Cost of one read of a clock in ns of thread CPU time: the median of a
 * few batches of 1M. */
#define CLOCK_COST(out, read_one)                                                                     \
	do {                                                                                       \
		double v[5];                                                                       \
		for (int b = 0; b < 5; b++) {                                                      \
			const int n = 1000000;                                                     \
			uint64_t t0 = cpu_ns(), sink = 0;                                          \
			for (int i = 0; i < n; i++)                                                \
				sink += (read_one);                                                \
			v[b] = (double)(cpu_ns() - t0) / n;                                        \
			__asm__ volatile("" : : "r"(sink));                                        \
		}                                                                                  \
		for (int i = 1; i < 5; i++) /* insertion sort */                                   \
			for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {                           \
				double x = v[j];                                                   \
				v[j] = v[j - 1], v[j - 1] = x;                                     \
			}                                                                          \
		out = v[2];                                                                        \
	} while (0)

static inline uint64_t mono_read(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_nsec;
}

/* clock_gettime(CLOCK_MONOTONIC) */
static inline double clock_gettime_ns(void)
{
	double c;
	CLOCK_COST(c, mono_read());
	return c;
}

#if defined(__x86_64__)
#include <x86intrin.h>
/* one rdtsc, as the library's TSC hot path reads it */
static inline double rdtsc_ns(void)
{
	double c;
	CLOCK_COST(c, __rdtsc());
	return c;
}
#endif

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

/* Thread id of the tracer's writer thread (cuptrace-write), or -1. */
static inline int writer_tid(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int tid = -1;
	while (d && tid < 0 && (e = readdir(d))) {
		char path[300], comm[64] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(comm, sizeof comm, f) && !strncmp(comm, "cuptrace-write", 14))
			tid = atoi(e->d_name);
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return tid;
}

/* ns of CPU a thread of this process has used (0 if unknown). */
static inline uint64_t thread_cpu_ns(int tid)
{
	char path[64];
	unsigned long long ns = 0;
	snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", tid);
	FILE *f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	if (f)
		fclose(f);
	return ns;
}

#endif
