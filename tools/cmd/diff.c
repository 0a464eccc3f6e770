// SPDX-License-Identifier: MIT
/* cuptrace diff BASE NEW: what got slower between two runs, and whether
 * it is beyond the noise (stats/diff.h; docs/cuptrace-diff.md). */
#include "cmd/cmd.h"
#include "stats/collect.h"
#include "stats/diff.h"
#include "util/json_escape.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
	fputs("usage: cuptrace diff [-r|--report LIST] [-f|--format table|csv|tsv|json]\n"
	      "                     [--fail-above PCT] [-s|--steps A-B] [-j N] [--strict]\n"
	      "                     BASE NEW\n\n"
	      "Compares two runs (BASE and NEW: each a .ctr file or a directory of them,\n"
	      "any number of ranks): the rows of the reports steps, nvtx_sum,\n"
	      "cuda_gpu_kern_sum, cuda_api_sum, nccl_sum, mpi_sum, torch_op_sum and\n"
	      "breakdown (LIST: some of them), matched by name, exact names first, then\n"
	      "by a key without template arguments (void foo<float, 128>(float*) is\n"
	      "void foo<>(float*)) and without NCCL's algorithm and protocol in kernel\n"
	      "names (ncclDevKernel_AllReduce_Sum_f32_RING_LL is\n"
	      "ncclDevKernel_AllReduce_Sum_f32). For each pair of rows: instances,\n"
	      "total per rank (a run's total over its ranks / its rank count), median,\n"
	      "their changes and the ratio of the totals, and the Mann-Whitney U test\n"
	      "of the instances' durations (two-sided, normal approximation with tie\n"
	      "correction; n/a with fewer than 5 instances on a side, or where a report\n"
	      "keeps no durations: nccl_sum, mpi_sum, torch_op_sum); Significant: yes\n"
	      "when p < 0.01 and the medians differ by 5 % or more. Rows by the change\n"
	      "in total, largest first.\n"
	      "The first line, the verdict: the change of the mean step time (every\n"
	      "rank's steps; without steps in both runs, the traced span per rank) and\n"
	      "the rows whose change per step explains most of it, e.g.\n"
	      "  step +12.3 % (...): :slow_part +12.00 ms (+200 %) explains 98 %\n"
	      "(none when the test of the step times finds no change: p >= 0.01).\n"
	      "--fail-above PCT: exit 1 when the step time (or span) grew by more than\n"
	      "PCT percent, beyond the noise of the steps where they can be tested (p <\n"
	      "0.01): a gate for CI. --steps A-B: only steps A to B of both runs\n"
	      "(as cuptrace stats). -j, --strict as in cuptrace stats.\n"
	      "Exit status: 0, 1 bad input or --fail-above exceeded, 2 usage.\n"
	      "docs/cuptrace-diff.md describes every column.\n",
	      f);
}

static int known_reports(const char *list)
{
	if (!*list) {
		say_cmd("--report needs report names (see --help)");
		return 0;
	}
	for (const char *p = list; *p; p += *p == ',') {
		size_t k = strcspn(p, ","), i;
		for (i = 0; diff_report_names[i]; i++)
			if (strlen(diff_report_names[i]) == k &&
			    !memcmp(diff_report_names[i], p, k))
				break;
		if (!diff_report_names[i]) {
			say_cmd("--report: '%.*s' is not a report diff compares (steps, nvtx_sum, "
			        "cuda_gpu_kern_sum, cuda_api_sum, nccl_sum, mpi_sum, torch_op_sum, "
			        "breakdown)",
			        (int)k, p);
			return 0;
		}
		p += k;
	}
	return 1;
}

/* , "key": v (null when not known), with dec decimals (-1: %g's 6 digits) */
static void json_num(FILE *f, const char *key, double v, int dec)
{
	if (isnan(v))
		fprintf(f, ", \"%s\": null", key);
	else if (dec < 0)
		fprintf(f, ", \"%s\": %.6g", key, v);
	else
		fprintf(f, ", \"%s\": %.*f", key, dec, v);
}

static void print_verdict(FILE *f, enum table_fmt fmt, const struct diff_verdict *v)
{
	if (fmt == FMT_TABLE) {
		fprintf(f, "verdict: %s\n", v->text);
	} else if (fmt == FMT_CSV || fmt == FMT_TSV) {
		fprintf(f, "# verdict: %s\n", v->text);
	} else {
		size_t n;
		char *e = json_escape(v->text, strlen(v->text), &n);
		fprintf(f, "{\"verdict\": {\"text\": \"%.*s\", \"basis\": ", (int)n, e);
		free(e);
		if (v->basis)
			fprintf(f, "\"%s\"", v->basis);
		else
			fputs("null", f);
		json_num(f, "base_ns", v->basis ? v->base_ns : NAN, 1);
		json_num(f, "new_ns", v->basis ? v->new_ns : NAN, 1);
		json_num(f, "change_pct", v->change_pct, 3);
		json_num(f, "p", v->p, -1);
		fputs("}", f);
	}
}

static int parse_fmt(const char *s, enum table_fmt *fmt)
{
	static const struct {
		const char *name;
		enum table_fmt fmt;
	} f[] = {{"table", FMT_TABLE},
	         {"column", FMT_TABLE},
	         {"csv", FMT_CSV},
	         {"tsv", FMT_TSV},
	         {"json", FMT_JSON}};
	for (size_t i = 0; i < sizeof f / sizeof *f; i++)
		if (!strcmp(s, f[i].name)) {
			*fmt = f[i].fmt;
			return 0;
		}
	say_cmd("unknown format '%s' (table, csv, tsv, json)", s);
	return -1;
}

/* Reads both runs, prints the comparison; the exit status. */
static int run_diff(char **args, const char *list, enum table_fmt fmt, double fail_above,
                    int strict, int jobs, const struct stats_opts *opts, const char *steps_arg)
{
	struct diff_run run[2];
	int rc = 0;
	for (int i = 0; i < 2; i++) {
		int r = diff_collect(args + i, 1, strict, jobs, opts, steps_arg, &run[i]);
		if (r && !run[i].n) {
			if (i)
				diff_run_free(&run[0]);
			return 1;
		}
		rc |= r != 0;
	}
	struct table **t = NULL;
	size_t nt = 0;
	struct diff_verdict v;
	diff_compare(&run[0], &run[1], list, &t, &nt, &v);
	print_verdict(stdout, fmt, &v);
	for (size_t i = 0; i < nt; i++) {
		table_print(t[i], stdout, fmt, 0);
		table_free(t[i]);
	}
	if (fmt == FMT_JSON)
		puts("}");
	free(t);
	diff_run_free(&run[0]);
	diff_run_free(&run[1]);
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		say_cmd("writing stdout: %s", strerror(errno ? errno : EIO));
		return 1;
	}
	if (fail_above >= 0 && isnan(v.change_pct)) {
		say_cmd("--fail-above: %s", v.text);
		return 1;
	}
	if (fail_above >= 0 && v.change_pct > fail_above) {
		const char *what = !strcmp(v.basis, "step") ? "step time" : "span per rank";
		/* a growth the test of the step times cannot tell from the
		 * noise fails no gate: a CI job fails on what is real */
		if (!isnan(v.p) && v.p >= DIFF_ALPHA) {
			say_cmd_note("the %s grew %.1f %%, more than --fail-above %g %%, but within "
			             "the noise of the steps (p %.2g): not a failure",
			             what, v.change_pct, fail_above, v.p);
			return rc;
		}
		say_cmd("the %s grew %.1f %%, more than --fail-above %g %%", what, v.change_pct,
		        fail_above);
		return 1;
	}
	return rc;
}

int cmd_diff(int argc, char **argv)
{
	static const struct option lo[] = {{"report", required_argument, NULL, 'r'},
	                                   {"format", required_argument, NULL, 'f'},
	                                   {"fail-above", required_argument, NULL, 'F'},
	                                   {"steps", required_argument, NULL, 's'},
	                                   {"jobs", required_argument, NULL, 'j'},
	                                   {"strict", no_argument, NULL, 'S'},
	                                   {"help", no_argument, NULL, 'h'},
	                                   {0, 0, 0, 0}};
	const char *list = NULL, *steps_arg = NULL;
	enum table_fmt fmt = FMT_TABLE;
	double fail_above = -1;
	int c, strict = 0, jobs = 0;
	struct stats_opts opts = {.min_gap = 1000000};
	optind = 1;
	while ((c = getopt_long(argc, argv, "r:f:s:j:h", lo, NULL)) != -1) {
		if (c == 'r') {
			if (!known_reports(optarg))
				return 2;
			list = optarg;
		} else if (c == 'f') {
			if (parse_fmt(optarg, &fmt))
				return 2;
		} else if (c == 'F') {
			char *end;
			errno = 0;
			fail_above = strtod(optarg, &end);
			if (*end == '%') /* 10% as 10 */
				end++;
			if (end == optarg || *end || errno || !(fail_above >= 0) ||
			    !(fail_above < 1e9)) {
				say_cmd("--fail-above %s: expected a percentage (>= 0)", optarg);
				return 2;
			}
		} else if (c == 's') {
			steps_arg = optarg;
			if (cmd_steps(optarg, &opts))
				return 2;
		} else if (c == 'j') {
			if (cmd_jobs(optarg, &jobs))
				return 2;
		} else if (c == 'S') {
			strict = 1;
		} else {
			return cmd_usage(c, help);
		}
	}
	if (argc - optind != 2) {
		if (argc - optind > 0)
			say_cmd(
			    "expected two runs, BASE and NEW (each a .ctr file or a directory)");
		return cmd_usage(0, help);
	}
	return run_diff(argv + optind, list, fmt, fail_above, strict, jobs, &opts, steps_arg);
}
