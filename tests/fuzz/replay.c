// SPDX-License-Identifier: MIT
/* Runs a fuzz target's entry point once on each file named on the command
 * line: the corpus replay of `make test` (any C compiler, no libFuzzer).
 * Each input runs in a child process of its own, so that what one input
 * costs is measured alone: an input that crashes, runs past -timeout=S
 * seconds or whose process peaks above -rss_limit_mb=MB of resident memory
 * fails the replay (libFuzzer's own replay checks the RSS limit only once a
 * second, which a short input slips past). Other -flags are ignored. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_one(const char *path, unsigned timeout)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	size_t cap = 1 << 16, len = 0, got;
	uint8_t *buf = malloc(cap);
	while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
		len += got;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "%s: out of memory\n", path);
		return 1;
	}
	alarm(timeout);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long rss_limit_mb = 0;
	unsigned timeout = 0;
	long peak_kb = 0;
	int n = 0;
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-') {
			sscanf(argv[i], "-rss_limit_mb=%lu", &rss_limit_mb);
			sscanf(argv[i], "-timeout=%u", &timeout);
			continue;
		}
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0)
			exit(run_one(argv[i], timeout)); /* exit: LeakSanitizer checks */
		int st;
		struct rusage ru;
		if (wait4(pid, &st, 0, &ru) != pid) {
			perror("wait4");
			return 1;
		}
		if (WIFSIGNALED(st)) {
			fprintf(stderr, "%s: %s (signal %d)\n", argv[i],
				WTERMSIG(st) == SIGALRM ? "timed out" : "crashed", WTERMSIG(st));
			return 1;
		}
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "%s: failed (exit %d)\n", argv[i], WEXITSTATUS(st));
			return 1;
		}
		/* ru_maxrss: the child's peak, in KB (it starts at the
		 * parent's size, which stays small). */
		if (ru.ru_maxrss > peak_kb)
			peak_kb = ru.ru_maxrss;
		if (rss_limit_mb && (unsigned long)ru.ru_maxrss > rss_limit_mb * 1024) {
			fprintf(stderr, "%s: out of memory: peak RSS %ld MB, over the limit of %lu MB\n",
				argv[i], ru.ru_maxrss / 1024, rss_limit_mb);
			return 1;
		}
		n++;
	}
	printf("replayed %d inputs (peak RSS %ld MB", n, peak_kb / 1024);
	if (rss_limit_mb)
		printf(", limit %lu MB", rss_limit_mb);
	printf(")\n");
	return 0;
}
