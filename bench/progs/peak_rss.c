// SPDX-License-Identifier: MIT
/* peak_rss FILE CMD [ARGS...]: runs CMD, then writes to FILE one line
 * "maxrss_kib user_s sys_s" from CMD's rusage. Linux keeps the larger of
 * the pre-exec and post-exec high-water marks in ru_maxrss, so a child
 * forked straight from Python would report Python's size; a child forked
 * from this small program reports its own. Exit status: CMD's. */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: peak_rss FILE CMD [ARGS...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0)
		return 127;
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0)
		return 127;
	FILE *f = fopen(argv[1], "w");
	if (f) {
		fprintf(f, "%ld %ld.%06ld %ld.%06ld\n", ru.ru_maxrss, (long)ru.ru_utime.tv_sec,
			(long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec);
		fclose(f);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
