// SPDX-License-Identifier: MIT
/* The control API from C, linked against libcuptrace.so.
 * usage: control_api STEPS   runs STEPS steps; each step is a range
 * "step N" holding "work", with cuptrace_start() at step 2 and
 * cuptrace_stop() at step 5, cuptrace_start() at 8 and stop at 9, and
 * cuptrace_step() at the end of each step. */
#include "truth.h"

#include <cuptrace/cuptrace.h>

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 12;
	truth_open();
	truth("{\"enabled\":%d}", cuptrace_enabled());
	for (int s = 0; s < steps; s++) {
		if (s == 2 || s == 8)
			cuptrace_start();
		if (s == 5 || s == 9)
			cuptrace_stop();
		char name[32];
		snprintf(name, sizeof name, "step %d", s);
		cuptrace_range_push(name);
		cuptrace_range_push("work");
		usleep(200);
		cuptrace_mark("checkpoint");
		cuptrace_range_pop();
		cuptrace_range_pop();
		cuptrace_step();
	}
	printf("control_api done\n");
	return 0;
}
