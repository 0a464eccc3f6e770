// SPDX-License-Identifier: MIT
/* cuptrace: run a program traced, and turn its .ctr files into traces,
 * statistics and reports. */
#include "cmd/cmd.h"
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
	      "\n"
	      "INPUT is a .ctr file or a directory holding them.\n"
	      "cuptrace --version; cuptrace COMMAND --help.\n",
	      f);
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
		return cmd_convert(argc - 1, argv + 1);
	if (!strcmp(c, "info"))
		return cmd_info(argc - 1, argv + 1);
	if (!strcmp(c, "stats"))
		return cmd_stats(argc - 1, argv + 1);
	if (!strcmp(c, "export"))
		return cmd_export(argc - 1, argv + 1);
	if (!strcmp(c, "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(c, "diff"))
		return cmd_diff(argc - 1, argv + 1);
	if (!strcmp(c, "events"))
		return cmd_events(argc - 1, argv + 1);
	say("unknown command '%s'", c);
	usage(stderr);
	return 2;
}
