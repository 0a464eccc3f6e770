// SPDX-License-Identifier: MIT
/* A parent and a forked child both record. The child must write a file of
 * its own and never touch the parent's.
 * usage: forker [exec]   with "exec" the child execs `forker child`. */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>
#include <string.h>
#include <sys/wait.h>

static void ranges(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		nvtxRangePushA(name);
		nvtxRangePop();
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child")) {
		ranges("exec-child", 30);
		return 0;
	}
	int do_exec = argc > 1 && !strcmp(argv[1], "exec");
	nvtxRangePushA("parent-outer");
	ranges("parent-before", 20);
	pid_t pid = fork();
	if (pid == 0) {
		if (do_exec) {
			execl(argv[0], argv[0], "child", (char *)NULL);
			_exit(127);
		}
		ranges("child", 40);
		exit(0);
	}
	ranges("parent-after", 25);
	int st;
	waitpid(pid, &st, 0);
	nvtxRangePop();
	printf("child pid %d status %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}
