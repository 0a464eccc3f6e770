// SPDX-License-Identifier: MIT
/* Test programs write down what they did ("truth"), one JSON object per
 * line, into $CT_TEST_TRUTH; the Python tests compare it with the trace.
 * Times are CLOCK_MONOTONIC ns read around each NVTX call. */
#ifndef CT_TRUTH_H
#define CT_TRUTH_H

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static FILE *truth_f;
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;

static inline uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline int gettid_(void)
{
	return (int)syscall(SYS_gettid);
}

static inline void truth_open(void)
{
	const char *p = getenv("CT_TEST_TRUTH");
	if (p)
		truth_f = fopen(p, "w");
}

__attribute__((format(printf, 1, 2))) static inline void truth(const char *fmt, ...)
{
	if (!truth_f)
		return;
	va_list ap;
	va_start(ap, fmt);
	pthread_mutex_lock(&truth_lock);
	vfprintf(truth_f, fmt, ap);
	fputc('\n', truth_f);
	fflush(truth_f);
	pthread_mutex_unlock(&truth_lock);
	va_end(ap);
}

#endif
