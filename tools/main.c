// SPDX-License-Identifier: MIT
/* cuptrace: run a program traced, and turn its .ctr files into traces,
 * statistics and reports. */
#include "cmd/cmd.h"
#include "util/mpirt.h"
#include "util/say.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *f)
{
	fputs("usage: cuptrace COMMAND [options] ...\n"
	      "\n"
	      "  run [options] -- CMD [ARGS...]   run CMD with tracing (see cuptrace run --help)\n"
	      "  convert [-o OUT] INPUT...        merge traces into one timeline: Chrome/Perfetto JSON\n"
	      "                                   (.json, .json.gz), Perfetto protobuf (.pftrace), SQLite\n"
	      "  export [-o OUT.sqlite] INPUT...  SQLite database with Nsight Systems' export tables\n"
	      "  stats [--report LIST] INPUT...   summary tables (NVTX ranges, ...)\n"
	      "  report -o OUT.html INPUT...      one self-contained HTML page: the job's picture\n"
	      "  diff BASE NEW                    what got slower between two runs, and is it real\n"
	      "  info INPUT...                    header, event counts, drops, clean or truncated\n"
	      "  events INPUT...                  the resolved events, one per line (tab-separated)\n"
	      "  dump PID... | DIR...             flight mode: make a job's ranks write their window\n"
	      "\n"
	      "INPUT is a .ctr file or a directory holding them.\n"
	      "cuptrace --version; cuptrace COMMAND --help.\n",
	      f);
}

/* A command that may run as the ranks of an MPI job (util/mpirt.h):
 * `shared` says whether it shares its work among them; where it does not
 * (yet), rank 0 runs it alone and the others exit 0. */
static int ranked(int (*fn)(int, char **), int shared, int argc, char **argv)
{
	int m = mpirt_start();
	if (m == MPIRT_IDLE || (m == MPIRT_RANKS && !shared && mpirt_rank() > 0))
		return mpirt_end(0);
	if (!shared)
		mpirt_alone();
	int rc = fn(argc, argv);
	/* the job's status is rank 0's (mpiexec ends the job at a rank's
	 * failure and says so: what the others found, rank 0 says) */
	return mpirt_end(mpirt_rank() > 0 ? 0 : rc);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *c = argv[1];
	if (!strcmp(c, "--version") || !strcmp(c, "version")) {
		printf("cuptrace %s\n", CT_VERSION);
		return 0;
	}
	if (!strcmp(c, "help") && argc > 2) { /* cuptrace help convert: its own help */
		char *h[] = {argv[0], argv[2], "--help", NULL};
		return main(3, h);
	}
	if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
		usage(stdout);
		return 0;
	}
	/* getopt's messages begin with argv[0]: "cuptrace convert: ...", as ours */
	static char name[64];
	snprintf(name, sizeof name, "cuptrace %.50s", c);
	argv[1] = name;
	say_command(c);
	if (!strcmp(c, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(c, "convert"))
		return ranked(cmd_convert, 1, argc - 1, argv + 1);
	if (!strcmp(c, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(c, "stats"))
		return ranked(cmd_stats, 1, argc - 1, argv + 1);
	if (!strcmp(c, "export"))
		return ranked(cmd_export, 1, argc - 1, argv + 1);
	if (!strcmp(c, "report"))
		return ranked(cmd_report, 1, argc - 1, argv + 1);
	if (!strcmp(c, "diff"))
		return ranked(cmd_diff, 1, argc - 1, argv + 1);
	if (!strcmp(c, "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(c, "events"))
		return cmd_events(argc - 1, argv + 1);
	say("unknown command '%s'", c);
	usage(stderr);
	return 2;
}
