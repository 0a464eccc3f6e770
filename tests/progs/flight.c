// SPDX-License-Identifier: MIT
/* The flight recorder's test program (tests/integration/library/
 * test_flight.py): NVTX ranges "work N" (N cycling over 5 names), one every
 * PACE_US for MS milliseconds, then an ending by MODE:
 *   clean   return 0            fail   return 3
 *   abort   abort() (SIGABRT)   dump   cuptrace_dump(), then 300 ms more ranges
 *   dump2   as dump, then 2.2 s more ranges and a second cuptrace_dump()
 *   flood   ranges as fast as it can (no pause) for MS, then return 0
 *   early   cuptrace_dump() before any event, then 300 ms, the ranges, return 0
 *   slow    after the ranges, 30 steps of 10 ms (cuptrace_step() at each
 *           end), step 20 of 400 ms; then 300 ms more ranges, return 0
 * It prints "ranges N" (how many it made) and, for dump, "dump RC". */
#include <cuptrace/cuptrace.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long ranges(double ms, int pace_us)
{
	char name[32];
	long n = 0;
	for (double end = now_ms() + ms; now_ms() < end; n++) {
		snprintf(name, sizeof name, "work %ld", n % 5);
		cuptrace_range_push(name);
		if (pace_us)
			usleep((useconds_t)pace_us);
		cuptrace_range_pop();
	}
	return n;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: flight MODE MS\n");
		return 2;
	}
	const char *mode = argv[1];
	double ms = atof(argv[2]);
	if (!strcmp(mode, "early")) { /* a dump asked before any event */
		printf("dump %d\n", cuptrace_dump());
		fflush(stdout);
		usleep(300000);
	}
	long n = ranges(ms, strcmp(mode, "flood") ? 1000 : 0);
	printf("ranges %ld\n", n);
	fflush(stdout);
	if (!strncmp(mode, "dump", 4)) {
		printf("dump %d\n", cuptrace_dump());
		fflush(stdout);
		ranges(300, 1000);
	}
	if (!strcmp(mode, "dump2")) { /* past the 2 s between two dumps */
		printf("ranges %ld\n", ranges(1900, 1000));
		printf("dump %d\n", cuptrace_dump());
		fflush(stdout);
		ranges(300, 1000);
	}
	if (!strcmp(mode, "slow")) {
		cuptrace_step(); /* the first step begins here */
		for (int i = 0; i < 30; i++) {
			cuptrace_range_push("step");
			usleep(i == 20 ? 400000 : 10000);
			cuptrace_range_pop();
			cuptrace_step();
		}
		ranges(300, 1000);
	}
	if (!strcmp(mode, "fail"))
		return 3;
	if (!strcmp(mode, "abort"))
		abort(); /* SIGABRT: a fatal signal that sanitizer builds leave alone */
	return 0;
}
