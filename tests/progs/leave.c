// SPDX-License-Identifier: MIT
/* Ways of leaving without exit() (and with it): the file must still end with a footer
 * that says how the process ended.
 * usage: leave MODE N [MS]   N ranges named "before", then MODE:
 *   exec     sleeps MS ms, then execl("/bin/true")
 *   reexec   execs itself as `leave return N`: the same process records
 *            again in its next image
 *   _exit    _exit(5)
 *   _Exit    _Exit(6)
 *   exit     exit(7): the status is in the footer too
 *   return   returns 3 from main
 *   child    a forked child records the N ranges and leaves by _exit(0)
 *            (as every Python multiprocessing child does); the parent
 *            records nothing and exits 0
 *   pipe     prints one line per range until stdout is closed (SIGPIPE)
 *   quick_exit  quick_exit(4) (glibc leaves by an _exit nothing interposes)
 *   pthread_exit  main ends by pthread_exit(); a thread it started records N
 *            ranges "after" MS ms later and returns: the process ends (exit
 *            status 0) once the program's last thread is gone
 *   rawfork  a child made by the fork system call (no fork handlers) leaves
 *            by exit(8), which the parent returns */
#include "truth.h"

#include <pthread.h>
#include <sys/syscall.h>

#include <nvtx3/nvToolsExt.h>
#include <string.h>
#include <sys/wait.h>

static void ranges(int n)
{
	for (int i = 0; i < n; i++) {
		nvtxRangePushA("before");
		nvtxRangePop();
	}
}

static void *later(void *arg)
{
	const int *a = arg;
	usleep((useconds_t)a[1] * 1000);
	for (int i = 0; i < a[0]; i++) {
		nvtxRangePushA("after");
		nvtxRangePop();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "_exit";
	int n = argc > 2 ? atoi(argv[2]) : 1000;
	int ms = argc > 3 ? atoi(argv[3]) : 0;
	if (!strcmp(mode, "child")) {
		pid_t pid = fork();
		if (pid == 0) {
			ranges(n);
			_exit(0);
		}
		int st;
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(mode, "rawfork")) {
		ranges(n);
		pid_t pid = (pid_t)syscall(SYS_fork);
		if (pid == 0)
			exit(8);
		int st;
		waitpid(pid, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(mode, "pthread_exit")) {
		ranges(n);
		static int args[2];
		args[0] = n, args[1] = ms;
		pthread_t th;
		pthread_create(&th, NULL, later, args);
		pthread_exit(NULL);
	}
	if (!strcmp(mode, "pipe")) {
		for (long i = 0;; i++) {
			ranges(1);
			printf("line %ld\n", i);
			fflush(stdout);
			usleep(1000);
		}
	}
	ranges(n);
	if (!strcmp(mode, "exec")) {
		usleep((useconds_t)ms * 1000);
		execl("/bin/true", "true", (char *)NULL);
		return 127;
	}
	if (!strcmp(mode, "reexec")) {
		execl("/proc/self/exe", argv[0], "return", argv[2], (char *)NULL);
		return 127;
	}
	if (!strcmp(mode, "quick_exit"))
		quick_exit(4);
	if (!strcmp(mode, "_Exit"))
		_Exit(6);
	if (!strcmp(mode, "exit"))
		exit(7);
	if (!strcmp(mode, "return"))
		return 3;
	_exit(5);
}
