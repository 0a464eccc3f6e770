// SPDX-License-Identifier: MIT
/* cuptrace convert: every input on one timeline, in the format that the
 * output name asks for. */
#include "cmd/cmd.h"
#include "job/clocks.h"
#include "model/piece.h"
#include "write/convert.h"
#include "read/inputs.h"
#include "read/live.h"
#include "util/mpirt.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
	fputs("usage: cuptrace convert [-o OUT] [-j N] [--align none|collectives] INPUT...\n"
	      "       cuptrace convert --split-ranks DIR [-z] [-j N] INPUT...\n\n"
	      "Merges the .ctr files (or directories of them) onto one timeline.\n"
	      "OUT's extension picks the format: .json or .json.gz (Chrome trace for\n"
	      "Perfetto, chrome://tracing and HTA), .pftrace (Perfetto's protobuf\n"
	      "TrackEvent format, partly zstd-compressed: about 1/7 of the JSON's size;\n"
	      "Perfetto v58 or later reads it; --pftrace-plain for older ones),\n"
	      ".sqlite (as cuptrace export).\n"
	      "Default OUT: the input's name with\n"
	      ".json, or cuptrace.json for several inputs. \"-\" writes to stdout.\n\n"
	      "  --split-ranks DIR  one Kineto-style DIR/rank<R>.json per rank instead\n"
	      "                     (the layout Holistic Trace Analysis reads)\n"
	      "  -z, --gzip         with --split-ranks: write .json.gz\n"
	      "  -j, --jobs N       worker threads (default: all CPUs; at most 4 per CPU);\n"
	      "                     with fewer files than workers - 1, workers share each\n"
	      "                     file (the output is the same for any N)\n"
	      "  --any-order        merged output: write each worker's events as they\n"
	      "                     come, not in file order (faster with many files on\n"
	      "                     many cores; the order then changes from run to run)\n"
	      "  --align MODE       clocks of several hosts: 'collectives' (the default\n"
	      "                     with more than one host) moves each host by its\n"
	      "                     offset estimated from collective ends; 'none' keeps\n"
	      "                     the hosts' CLOCK_REALTIME anchors\n"
	      "  --pftrace-plain    with .pftrace: packets not compressed (about twice\n"
	      "                     as large, 1/3.5 of the JSON; any Perfetto reads it)\n"
	      "  --strict           an unusable input is an error (default: skipped with\n"
	      "                     a warning; exit 1 only when no input is usable)\n"
	      "Under mpiexec (N ranks of a launcher), the ranks share the files out and\n"
	      "write the same output, once: --split-ranks, each its rank files; -o OUT\n"
	      "(not .sqlite or -), each a piece beside OUT that rank 0 joins (OUT's\n"
	      "folder seen by every host; docs/parallel-tools.md).\n"
	      "A piece of the job (docs/cuptrace-convert.md; one line on stderr says\n"
	      "what was left out, and the output's metadata too):\n" PIECE_HELP,
	      f);
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* Rank files of an earlier conversion left in the --split-ranks directory
 * (a job with more ranks, or -z then not): HTA reads every file there as a
 * rank. Known by name: those this conversion did not write. */
static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void warn_stale(const struct inputs *in, const char *dir, int gz)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	char **ours = xcalloc(in->n + 1, sizeof *ours); /* sorted: thousands of ranks */
	for (size_t i = 0; i < in->n; i++) {
		char p[4096];
		inputs_split_path(in, i, dir, gz ? ".json.gz" : ".json", p, sizeof p);
		ours[i] = xstrdup(p);
	}
	qsort(ours, in->n, sizeof *ours, cmp_name);
	size_t n = 0;
	char first[256] = "";
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "rank", 4) ||
		    !(ends_with(e->d_name, ".json") || ends_with(e->d_name, ".json.gz")))
			continue;
		char path[4096], *key = path;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		if (bsearch(&key, ours, in->n, sizeof *ours, cmp_name))
			continue;
		if (!n++ || strcmp(e->d_name, first) < 0)
			snprintf(first, sizeof first, "%.200s", e->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < in->n; i++)
		free(ours[i]);
	free(ours);
	if (n)
		say_warning("%s also holds %zu rank file%s of another "
		            "conversion (%s%s); HTA reads every file there",
		            dir, n, n > 1 ? "s" : "", first, n > 1 ? ", ..." : "");
}

int cmd_convert(int argc, char **argv)
{
	static const struct option lo[] = {{"output", required_argument, NULL, 'o'},
					   {"split-ranks", required_argument, NULL, 's'},
					   {"gzip", no_argument, NULL, 'z'},
					   {"jobs", required_argument, NULL, 'j'},
					   {"strict", no_argument, NULL, 'S'},
					   {"align", required_argument, NULL, 'A'},
					   {"pftrace-plain", no_argument, NULL, 'P'},
					   {"any-order", no_argument, NULL, 'O'},
					   {"help", no_argument, NULL, 'h'},
					   PIECE_OPTIONS,
					   {0, 0, 0, 0}};
	const char *outpath = NULL, *split = NULL;
	int c, gz = 0, jobs = 0, strict = 0, align = ALIGN_AUTO, plain = 0, any_order = 0;
	struct piece pc = {0};
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:zj:h", lo, NULL)) != -1) {
		if (c == 'o')
			outpath = optarg;
		else if (c == 's')
			split = optarg;
		else if (c == 'z')
			gz = 1;
		else if (c == 'S')
			strict = 1;
		else if (c == 'P')
			plain = 1;
		else if (c == 'O')
			any_order = 1;
		else if (piece_is_option(c)) {
			if (piece_option(&pc, c, optarg))
				return 2;
		} else if (c == 'A') {
			if (cmd_align(optarg, &align))
				return 2;
		} else if (c == 'j') {
			if (cmd_jobs(optarg, &jobs))
				return 2;
		} else {
			return cmd_usage(c, help);
		}
	}
	if (optind >= argc)
		return cmd_usage(0, help);
	if (split && outpath) {
		say_cmd("-o and --split-ranks exclude each other");
		return 2;
	}
	/* options that apply to one kind of output only: refused with any
	 * other, never silently ignored */
	if (gz && !split) {
		say_cmd("-z goes with --split-ranks (use -o OUT.json.gz)");
		return 2;
	}
	if (plain && (!outpath || !ends_with(outpath, ".pftrace"))) {
		say_cmd("--pftrace-plain goes with -o OUT.pftrace");
		return 2;
	}
	char defpath[4096];
	if (!outpath && !split) {
		cmd_default_out(defpath, sizeof defpath, argv + optind, argc - optind, ".json");
		outpath = defpath;
	}
	int sqlite = outpath && ends_with(outpath, ".sqlite");
	int pftrace = outpath && ends_with(outpath, ".pftrace");
	if (outpath && !sqlite && !pftrace && !ends_with(outpath, ".json") &&
	    !ends_with(outpath, ".json.gz") &&
	    strcmp(outpath, "-")) {
		say_cmd("%s: unsupported output format (use .json, .json.gz, .pftrace or .sqlite)",
		        outpath);
		return 2;
	}
	if (outpath && (sqlite || !strcmp(outpath, "-")) && mpirt_solo())
		/* an MPI job's: rank 0 writes these alone */
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
	int bad = cmd_piece(&in, &pc, jobs);
	if (bad) {
		inputs_close(&in);
		return bad;
	}
	if (sqlite) { /* cuptrace export */
		int rc = cmd_export_to(&in, outpath, NULL);
		inputs_close(&in);
		return rc;
	}
	size_t written = 0;
	int rc = split     ? convert_split(&in, split, gz, jobs, &written)
		 : pftrace ? convert_pftrace(&in, outpath, jobs, any_order, plain, &written)
		           : convert_merged(&in, outpath, jobs, any_order, &written);
	if (mpirt_rank() > 0) { /* an MPI job's: rank 0 says what was written */
		inputs_close(&in);
		return rc;
	}
	for (size_t i = 0; i < in.n; i++)
		if (in.v[i].f.status == CT_TRUNCATED) /* a damaged one was said with rc 1 */
			say_warning("%s", tfile_err(&in.v[i]));
	if (written)
		cmd_piece_said(&in);
	/* "wrote" only for what is complete under its name. */
	if (outpath && strcmp(outpath, "-") && written)
		say("wrote %s", outpath);
	else if (split && written == in.n)
		say("wrote one file per rank into %s", split);
	else if (split && written)
		say("%zu of %zu rank files could not be written into %s", in.n - written, in.n,
		    split);
	if (split)
		warn_stale(&in, split, gz);
	inputs_close(&in);
	return rc;
}
