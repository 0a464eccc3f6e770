// SPDX-License-Identifier: MIT
/* cuptrace export: the traces as an SQLite database with Nsight Systems'
 * export tables (docs/SQLITE.md), for the SQL people run on nsys exports. */
#include "cmd/cmd.h"
#include "job/clocks.h"
#include "model/piece.h"
#include "write/sqlite/sqlite.h"
#include "read/inputs.h"
#include "read/live.h"
#include "util/mpirt.h"
#include "util/say.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
	fputs("usage: cuptrace export [-o OUT.sqlite] [-j N] [--align none|collectives] [--strict] INPUT...\n"
	      "       cuptrace export --split-ranks DIR [-j N] [--strict] INPUT...\n\n"
	      "Writes the .ctr files (or directories of them) into one SQLite database\n"
	      "with Nsight Systems' export tables (StringIds, CUPTI_ACTIVITY_KIND_KERNEL,\n"
	      "..._MEMCPY, ..._MEMSET, ..._RUNTIME, ..._SYNCHRONIZATION, NVTX_EVENTS, ...)\n"
	      "and cuptrace's own (CUPTRACE_RANKS, CUPTRACE_STEPS,\n"
	      "CUPTRACE_NCCL_OPERATIONS); docs/SQLITE.md lists them. Every rank goes into\n"
	      "the one database (globalPid tells them apart; a warning says so, as nsys\n"
	      "writes one per rank: --split-ranks). Times are ns on the job's\n"
	      "timeline. Default OUT: the input's name with .sqlite, or cuptrace.sqlite\n"
	      "for several inputs. The file is complete or absent.\n\n"
	      "  --split-ranks DIR  one DIR/rank<R>.sqlite per rank instead\n"
	      "  -j, --jobs N       accepted as cuptrace convert -o OUT.sqlite accepts it\n"
	      "                     (the same command); a database is written by one\n"
	      "                     thread, so N changes neither the work nor the file\n"
	      "  --align MODE       clocks of several hosts, as cuptrace convert\n"
	      "  --strict           an unusable input is an error (default: skipped with\n"
	      "                     a warning; exit 1 only when no input is usable)\n"
	      "Under mpiexec (N ranks of a launcher), with --split-ranks each rank writes\n"
	      "its share of the databases; one database is rank 0's alone\n"
	      "(docs/parallel-tools.md).\n"
	      "A piece of the job, as cuptrace convert (docs/cuptrace-export.md; the\n"
	      "row CUPTRACE_PIECE of META_DATA_EXPORT says what was left out):\n" PIECE_HELP,
	      f);
}

int cmd_export_to(struct inputs *in, const char *outpath, const char *split)
{
	size_t written = 0;
	int rc = split ? export_sqlite_split(in, split, &written)
		       : export_sqlite(in, outpath, &written);
	if (mpirt_rank() > 0) /* an MPI job's: rank 0 says what was written */
		return rc;
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].f.status == CT_TRUNCATED)
			say_warning("%s", tfile_err(&in->v[i]));
	/* nsys writes one database per rank, and scripts written for its
	 * exports take a database for one rank: ANALYSIS_DETAILS's window,
	 * kernel sums and overlaps over it would mix the ranks */
	if (!split && written && in->nranks > 1)
		say_warning("%s holds %zu ranks: scripts written for nsys's one database per rank "
			    "would mix them (--split-ranks DIR writes one per rank)",
			    outpath, in->nranks);
	if (written)
		cmd_piece_said(in);
	if (!split && written)
		say("wrote %s", outpath);
	else if (split && written == in->n)
		say("wrote one database per rank into %s", split);
	else if (split && written)
		say("%zu of %zu rank databases could not be written into %s", in->n - written,
		    in->n, split);
	return rc;
}

int cmd_export(int argc, char **argv)
{
	static const struct option lo[] = {{"output", required_argument, NULL, 'o'},
					   {"split-ranks", required_argument, NULL, 's'},
					   {"strict", no_argument, NULL, 'S'},
					   {"align", required_argument, NULL, 'A'},
					   {"jobs", required_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   PIECE_OPTIONS,
					   {0, 0, 0, 0}};
	const char *outpath = NULL, *split = NULL;
	int c, strict = 0, align = ALIGN_AUTO, jobs = 0;
	struct piece pc = {0};
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:j:h", lo, NULL)) != -1) {
		if (c == 'o')
			outpath = optarg;
		else if (c == 'j') { /* checked as convert checks it; see help() */
			if (cmd_jobs(optarg, &jobs))
				return 2;
		}
		else if (c == 's')
			split = optarg;
		else if (c == 'S')
			strict = 1;
		else if (piece_is_option(c)) {
			if (piece_option(&pc, c, optarg))
				return 2;
		} else if (c == 'A') {
			if (cmd_align(optarg, &align))
				return 2;
		} else
			return cmd_usage(c, help);
	}
	if (optind >= argc)
		return cmd_usage(0, help);
	if (split && outpath) {
		say_cmd("-o and --split-ranks exclude each other");
		return 2;
	}
	char defpath[4096];
	if (!outpath && !split) {
		cmd_default_out(defpath, sizeof defpath, argv + optind, argc - optind, ".sqlite");
		outpath = defpath;
	}
	if (outpath && !strcmp(outpath, "-")) {
		say_cmd("a database cannot go to stdout");
		return 2;
	}
	/* `export -o x.json` wrote a database named x.json */
	static const char *const others[] = {".json", ".json.gz", ".pftrace", ".html", ".ctr"};
	for (size_t i = 0; outpath && i < sizeof others / sizeof *others; i++) {
		size_t n = strlen(outpath), m = strlen(others[i]);
		if (n >= m && !strcmp(outpath + n - m, others[i])) {
			say_cmd("%s: export writes an SQLite database: name it "
			        "OUT.sqlite (convert writes .json and .pftrace, report .html)",
			        outpath);
			return 2;
		}
	}
	if (!split && mpirt_solo()) /* an MPI job's: rank 0 writes one database alone */
		return 0;
	struct inputs in;
	if (inputs_open(&in, argv + optind, argc - optind, strict))
		return 1;
	if (inputs_hold(&in, outpath)) {
		inputs_close(&in);
		return 2;
	}
	if (cmd_place(&in, align)) {
		inputs_close(&in);
		return 1;
	}
	int rc = cmd_piece(&in, &pc, jobs);
	if (!rc)
		rc = cmd_export_to(&in, outpath, split);
	inputs_close(&in);
	return rc;
}
