// SPDX-License-Identifier: MIT
/* The progress line of long conversions: on stderr when it is a terminal,
 * once a conversion has run for a second. */
#include "util/progress.h"
#include "util/mpirt.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

void progress(const char *what, unsigned long long done, int final)
{
	static struct timespec t0;
	static int shown;
	struct timespec now;
	if (mpirt_rank() > 0 || !isatty(STDERR_FILENO))
		return; /* (an MPI job's ranks above 0: rank 0 shows its own) */
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (!t0.tv_sec && !t0.tv_nsec)
		t0 = now;
	double el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
	if (final) {
		if (shown)
			fprintf(stderr, "\r%s: %llu events in %.1f s\n", what, done, el);
		return;
	}
	if (el >= 1.0) {
		fprintf(stderr, "\r%s: %llu events...", what, done);
		shown = 1;
	}
}
