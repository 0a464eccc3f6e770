// SPDX-License-Identifier: MIT
/* A training loop with a part whose length is given, for cuptrace diff's
 * tests: two runs, one with a longer slow_part, are a planted regression.
 * Each step (an NVTX range "step", made a step by CUPTRACE_STEP_RANGE)
 * holds three ranges: "forward" and "backward" of a fixed length and
 * "slow_part" of SLOW_US microseconds, each a sleep (its length does not
 * depend on how busy the machine's cores are). Writes what it did to
 * $CT_TEST_TRUTH. usage: diff_train STEPS SLOW_US [open]: with "open",
 * one more step is begun and never ended (its range still open when the
 * program exits, as a job stopped by its time limit leaves it). */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>
#include <string.h>

#define FIXED_US 10000

static void part(const char *name, long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
	uint64_t a = mono_ns();
	nvtxRangePushA(name);
	clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
	nvtxRangePop();
	truth("{\"kind\":\"range\",\"name\":\"%s\",\"ns\":%llu}", name,
	      (unsigned long long)(mono_ns() - a));
}

int main(int argc, char **argv)
{
	if (argc != 3 && (argc != 4 || strcmp(argv[3], "open"))) {
		fprintf(stderr, "usage: diff_train STEPS SLOW_US [open]\n");
		return 2;
	}
	int steps = atoi(argv[1]);
	long slow = atol(argv[2]);
	truth_open();
	for (int i = 0; i < steps; i++) {
		nvtxRangePushA("step");
		part("forward", FIXED_US);
		part("slow_part", slow);
		part("backward", FIXED_US);
		nvtxRangePop();
	}
	if (argc == 4) {
		nvtxRangePushA("step");
		part("forward", FIXED_US);
	}
	printf("diff_train done\n");
	return 0;
}
