/* The tracer clock: CLOCK_MONOTONIC in nanoseconds (vDSO, no system call).
 * Every timestamp in a file is on this clock; the header anchors it to
 * CLOCK_REALTIME so that the tools can line up processes and hosts. */
#ifndef CT_CLOCK_H
#define CT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t ct_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

#endif
