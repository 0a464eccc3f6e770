/* cuptrace: run a program traced, and turn its .ctr files into traces,
 * statistics and reports. */
#include "cmd.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define VERSION "0.1.0"

static void usage(FILE *f)
{
	fputs("usage: cuptrace COMMAND [options] ...\n"
	      "\n"
	      "  run [options] -- CMD [ARGS...]   run CMD with tracing (see cuptrace run --help)\n"
	      "  convert [-o OUT] INPUT...        merge traces into Chrome/Perfetto JSON (.json, .json.gz)\n"
	      "  stats [--report LIST] INPUT...   summary tables (NVTX ranges, ...)\n"
	      "  info INPUT...                    header, event counts, drops, clean or truncated\n"
	      "\n"
	      "INPUT is a .ctr file or a directory holding them.\n"
	      "cuptrace --version; cuptrace COMMAND --help.\n",
	      f);
}

void progress(const char *what, unsigned long long done, int final)
{
	static struct timespec t0;
	static int shown;
	struct timespec now;
	if (!isatty(STDERR_FILENO))
		return;
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

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *c = argv[1];
	if (!strcmp(c, "--version") || !strcmp(c, "version")) {
		printf("cuptrace %s\n", VERSION);
		return 0;
	}
	if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(c, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(c, "convert"))
		return cmd_convert(argc - 1, argv + 1);
	if (!strcmp(c, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(c, "stats"))
		return cmd_stats(argc - 1, argv + 1);
	fprintf(stderr, "cuptrace: unknown command '%s'\n", c);
	usage(stderr);
	return 2;
}
