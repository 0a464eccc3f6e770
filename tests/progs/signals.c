// SPDX-License-Identifier: MIT
/* Ranges in a loop until a signal arrives.
 * usage: signals MODE   where MODE is
 *   plain    no handler of its own (default action)
 *   handler  its own SIGTERM/SIGINT handler, installed before the first
 *            event, that prints "handled" and exits 3
 *   late     the same handler installed after the first events
 *   segv     crashes with SIGSEGV after some ranges
 *   abort    calls abort() after some ranges
 * Prints "ready" once ranges are being recorded; logs each finished
 * iteration's end time to the truth log. */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <string.h>

static volatile int *volatile null_ptr;

static void on_sig(int sig)
{
	static const char msg[] = "handled\n";
	(void)sig;
	ssize_t w = write(1, msg, sizeof msg - 1);
	(void)w;
	exit(3);
}

static void install(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sig;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	truth_open();
	if (!strcmp(mode, "handler"))
		install();
	for (long i = 0;; i++) {
		nvtxRangePushA("iteration");
		nvtxRangePushA("inner");
		usleep(1000);
		nvtxRangePop();
		nvtxRangePop();
		truth("{\"i\":%ld,\"end\":%llu}", i, (unsigned long long)mono_ns());
		if (i == 0) {
			if (!strcmp(mode, "late"))
				install();
			printf("ready\n");
			fflush(stdout);
		}
		if (i == 50 && !strcmp(mode, "segv"))
			*null_ptr = 1;
		if (i == 50 && !strcmp(mode, "abort"))
			abort();
	}
}
