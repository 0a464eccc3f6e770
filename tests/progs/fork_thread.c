// SPDX-License-Identifier: MIT
/* A thread other than main forks. In the child, a new thread records
 * first (and so takes the slot the forking thread had in the parent), then
 * the forking thread exits: that must not hand the new thread's slot back.
 * The child's file must hold all 110 of "U-before" and "U-after". */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>
#include <semaphore.h>
#include <sys/wait.h>

static sem_t u_ready;

static void ranges(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		nvtxRangePushA(name);
		nvtxRangePop();
	}
}

static void *u_thread(void *arg)
{
	(void)arg;
	ranges("U-before", 10);
	sem_post(&u_ready);
	usleep(300 * 1000); /* the forking thread has exited; the writer has looked */
	ranges("U-after", 100);
	exit(0);
}

static void *t_thread(void *arg)
{
	(void)arg;
	ranges("T-parent", 5);
	pid_t pid = fork();
	if (pid == 0) {
		sem_init(&u_ready, 0, 0);
		pthread_t u;
		pthread_create(&u, NULL, u_thread, NULL);
		sem_wait(&u_ready);
		pthread_exit(NULL);
	}
	int st;
	waitpid(pid, &st, 0);
	return (void *)(intptr_t)(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

int main(void)
{
	ranges("main", 3);
	pthread_t t;
	void *rc;
	pthread_create(&t, NULL, t_thread, NULL);
	pthread_join(t, &rc);
	printf("child status %d\n", (int)(intptr_t)rc);
	return 0;
}
