// SPDX-License-Identifier: MIT
/* Signals the program handles itself.
 * usage: sig_handled storm N   N SIGHUPs to itself, each counted by its own
 *                              handler, between NVTX ranges; exits 0
 *        sig_handled exit      a thread registers NVTX strings and names
 *                              categories without pause (the library's
 *                              definition lock held most of the time); 300 ms
 *                              later SIGTERM reaches that thread alone, whose
 *                              handler calls exit(0) */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t counted;

static void count(int sig)
{
	(void)sig;
	counted++;
}

static void leave(int sig)
{
	(void)sig;
	exit(0);
}

static void *register_forever(void *arg)
{
	(void)arg;
	nvtxDomainHandle_t d = nvtxDomainCreateA("sig_handled");
	char name[64];
	for (unsigned long i = 0;; i++) {
		snprintf(name, sizeof name, "string %lu", i);
		nvtxDomainRegisterStringA(d, name);
		nvtxNameCategoryA((uint32_t)i, name);
	}
	return NULL;
}

static void *kill_later(void *arg)
{
	(void)arg;
	usleep(300000);
	kill(getpid(), SIGTERM);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "storm")) {
		int n = atoi(argv[2]);
		signal(SIGHUP, count);
		for (int i = 0; i < n; i++) {
			nvtxRangePushA("between");
			nvtxRangePop();
			kill(getpid(), SIGHUP);
		}
		return counted == n ? 0 : 1;
	}
	if (argc > 1 && !strcmp(argv[1], "exit")) {
		signal(SIGTERM, leave);
		pthread_t reg, killer;
		pthread_create(&reg, NULL, register_forever, NULL);
		sigset_t term;
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &term, NULL); /* the killer inherits it */
		pthread_create(&killer, NULL, kill_later, NULL);
		for (;;)
			pause();
	}
	fprintf(stderr, "usage: sig_handled storm N | exit\n");
	return 2;
}
