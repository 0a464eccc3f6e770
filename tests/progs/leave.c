/* Ways of leaving without exit() (and with it): the file must still end with a footer
 * that says how the process ended.
 * usage: leave MODE N [MS]   N ranges named "before", then MODE:
 *   exec     sleeps MS ms, then execl("/bin/true")
 *   _exit    _exit(5)
 *   _Exit    _Exit(6)
 *   exit     exit(7): the status is in the footer too
 *   return   returns 3 from main
 *   child    a forked child records the N ranges and leaves by _exit(0)
 *            (as every Python multiprocessing child does); the parent
 *            records nothing and exits 0
 *   pipe     prints one line per range until stdout is closed (SIGPIPE) */
#include "truth.h"

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
	if (!strcmp(mode, "_Exit"))
		_Exit(6);
	if (!strcmp(mode, "exit"))
		exit(7);
	if (!strcmp(mode, "return"))
		return 3;
	_exit(5);
}
