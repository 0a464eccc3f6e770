// SPDX-License-Identifier: MIT
/* Signals that arrive while a thread forks. The program has its own
 * SIGTERM handler (the library's runs first and flushes); a second thread
 * sends SIGTERM to the forking thread all the time. A handler that ran
 * between the library's fork handlers would wait for a writer that waits
 * on the locks the forking thread holds.
 * Prints the longest fork() in ms and how many signals the handler saw. */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/wait.h>

static atomic_int seen;
static atomic_int done;
static pthread_t main_thread;

static void on_term(int sig)
{
	(void)sig;
	atomic_fetch_add(&seen, 1);
}

static void *sender(void *arg)
{
	(void)arg;
	while (!atomic_load(&done)) {
		pthread_kill(main_thread, SIGTERM);
		usleep(100);
	}
	return NULL;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &sa, NULL);
	nvtxRangePushA("forks");
	main_thread = pthread_self();
	pthread_t s;
	pthread_create(&s, NULL, sender, NULL);
	uint64_t start = mono_ns(), worst = 0;
	for (int i = 0; i < 300 && mono_ns() - start < 1500000000ull; i++) {
		uint64_t t0 = mono_ns();
		pid_t pid = fork();
		if (pid == 0)
			_exit(0);
		uint64_t d = mono_ns() - t0;
		if (d > worst)
			worst = d;
		while (waitpid(pid, NULL, 0) < 0)
			;
	}
	atomic_store(&done, 1);
	pthread_join(s, NULL);
	nvtxRangePop();
	printf("%.1f %d\n", (double)worst / 1e6, atomic_load(&seen));
	return 0;
}
