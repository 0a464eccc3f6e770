// SPDX-License-Identifier: MIT
/* cuptrace events: the resolved events of the traces (model/model.h), one
 * per line, tab-separated, for scripts: every slice, instant, counter,
 * flow and track exactly as every other output sees them. */
#include "cmd/cmd.h"
#include "read/live.h"
#include "job/clocks.h"
#include "model/piece.h"
#include "write/tsv/events_tsv.h"
#include "read/inputs.h"
#include "util/say.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
	fputs("usage: cuptrace events [--align none|collectives] [--strict] INPUT...\n\n"
	      "Prints the resolved events of the traces (matched calls, GPU work,\n"
	      "NVTX ranges, NCCL operations, flows, tracks), one per line:\n"
	      "  file type cat track track_kind track_name ts_ns end_ns name [to_track to_ts_ns]\n"
	      "Each file (numbered 0, 1, ... in rank order) begins with a process line\n"
	      "naming its rank: \"rank R (host:pid)\". Times are nanoseconds on the job's\n"
	      "timeline, ranks aligned as convert aligns them (--align: default\n"
	      "collectives when the files come from more than one host). docs/MODEL.md\n"
	      "says what each type and category is. --strict: an unusable input is an\n"
	      "error (default: skipped with a warning).\n"
	      "A piece of the job, as cuptrace convert (docs/cuptrace-events.md; one\n"
	      "line on stderr says what was left out):\n" PIECE_HELP,
	      f);
}

int cmd_events(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {"strict", no_argument, NULL, 'S'},
					   {"align", required_argument, NULL, 'A'},
					   PIECE_OPTIONS,
					   {0, 0, 0, 0}};
	int c, strict = 0, align = ALIGN_AUTO;
	struct piece pc = {0};
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'S') {
			strict = 1;
			continue;
		}
		if (c == 'A') {
			if (cmd_align(optarg, &align))
				return 2;
			continue;
		}
		if (piece_is_option(c)) {
			if (piece_option(&pc, c, optarg))
				return 2;
			continue;
		}
		return cmd_usage(c, help);
	}
	if (optind >= argc)
		return cmd_usage(0, help);
	struct inputs in;
	if (inputs_open(&in, argv + optind, argc - optind, strict))
		return 1;
	if (cmd_place(&in, align)) {
		inputs_close(&in);
		return 1;
	}
	int rc = cmd_piece(&in, &pc, 0);
	if (rc) {
		inputs_close(&in);
		return rc;
	}
	struct events_tsv e = {stdout, NULL};
	events_tsv_head(stdout);
	for (size_t k = 0; k < in.n; k++) {
		if (model_file(&in.v[k], &events_tsv_consumer, &e, NULL)) {
			say("%s", in.v[k].f.err);
			rc = 1;
		} else if (in.v[k].f.status == CT_TRUNCATED) {
			/* as convert and stats say it: its events end early */
			say_warning("%s", tfile_err(&in.v[k]));
		}
		tfile_release(&in.v[k]);
	}
	if (fflush(stdout) || ferror(stdout)) {
		say_cmd("stdout: %s", strerror(errno));
		rc = 1;
	}
	cmd_piece_said(&in);
	inputs_close(&in);
	return rc;
}
