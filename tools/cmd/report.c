// SPDX-License-Identifier: MIT
/* cuptrace report: one self-contained HTML page (docs/REPORT.md) drawn
 * from the tables of the reports of `cuptrace stats`, run by the same
 * driver (stats/collect.h), so the page and stats agree to the digit. */
#include "cmd/cmd.h"
#include "job/clocks.h"
#include "model/piece.h"
#include "write/html/html.h"
#include "write/sink.h"
#include "stats/collect.h"
#include "stats/diff.h"
#include "util/mpirt.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The hang section is there, first, when the verdict says hang or
 * mismatch (a collective left incomplete by a job stopped while it ran,
 * "no hang: ...", is not one). */
static int hang_found(const struct tabs *own)
{
	return html_hang_verdict(own) != NULL;
}

/* Sections of what not every trace holds (PyTorch operators and memory)
 * are there when their tables have rows. */
static int has_rows(const struct tabs *own)
{
	for (size_t i = 0; i < own->n; i++)
		if (table_nrows(own->v[i]))
			return 1;
	return 0;
}

/* The page's sections in order. A section draws its report's tables (and
 * may look at every other's); NULL draw: its tables as they are, so one
 * line adds a report to the page. */
static const struct section {
	const char *title;
	const struct report *rep; /* NULL: draws from the others' tables */
	html_draw_fn draw;
	int (*shown)(const struct tabs *own); /* NULL: always there */
} sections[] = {
	{"NCCL hang: who never arrived", &report_nccl_hang, NULL, hang_found},
	{"Breakdown per rank", &report_breakdown, html_draw_breakdown},
	{"Step times", &report_steps, html_draw_steps},
	{"GPU utilisation over time", NULL, html_draw_util},
	{"Top kernels", &report_cuda_gpu_kern_sum, html_draw_top_kernels},
	{"Top NVTX ranges", &report_nvtx_sum, html_draw_top},
	{"PyTorch operators", &report_torch_op_sum, html_draw_top, has_rows},
	{"PyTorch memory", &report_torch_mem, NULL, has_rows},
	{"NCCL operations", &report_nccl_sum, html_draw_nccl_sum},
	{"NCCL message sizes", &report_nccl_sizes, html_draw_nccl_sizes},
	{"NCCL skew: who arrives late", &report_nccl_skew, html_draw_nccl_skew},
	{"MPI calls", &report_mpi_sum, html_draw_top, has_rows},
	{"MPI skew: who arrives late", &report_mpi_skew, NULL, has_rows},
};

#define NSECTIONS (sizeof sections / sizeof *sections)

static void help(FILE *f)
{
	fputs("usage: cuptrace report -o OUT.html [-s|--steps A-B] [--align none|collectives]\n"
	      "                      [--ranks LIST] [--window T0-T1] [-j N] [--strict]\n"
	      "                      [--base BASE] INPUT...\n\n"
	      "Writes one self-contained HTML page (no network, scripts, fonts or images\n"
	      "from elsewhere) with the job's picture: header (command, hosts, ranks, GPUs,\n"
	      "window, events, drops, truncated files), breakdown per rank with the slowest\n"
	      "rank marked, step times per rank, GPU utilisation over time, top kernels and\n"
	      "NVTX ranges, PyTorch operators and memory (when traced), NCCL operations,\n"
	      "message sizes, bus bandwidth and arrival skew, MPI calls and skew (when\n"
	      "traced);\n"
	      "first, when a collective was left incomplete, the nccl_hang verdict and tables.\n"
	      "Every figure is a cell of `cuptrace stats --by step,time --report\n"
	      "breakdown,steps,cuda_gpu_kern_sum,nvtx_sum,torch_op_sum,torch_mem,nccl_sum,\n"
	      "nccl_sizes,nccl_skew,mpi_sum,mpi_skew`\n"
	      "on the same inputs; hover a mark for its exact values. INPUT is a .ctr\n"
	      "file, a directory of them, or an NCCL_DEBUG=INFO log. --steps, --align,\n"
	      "-j and --strict as in cuptrace stats.\n"
	      "--base BASE: a section first compares the inputs with the run BASE (a .ctr\n"
	      "file or a directory), as cuptrace diff BASE INPUT does: its verdict and\n"
	      "tables (docs/cuptrace-diff.md), of the whole runs (--steps applies,\n"
	      "--ranks and --window do not).\n"
	      "docs/REPORT.md describes the page. Under mpiexec (N ranks of a launcher),\n"
	      "the ranks share the files out and rank 0 draws the same page, once\n"
	      "(docs/parallel-tools.md).\n\n"
	      "A piece of the job, as cuptrace convert (docs/cuptrace-report.md; a line\n"
	      "of the page's header says what was left out; the reports see only it):\n"
	      PIECE_HELP,
	      f);
}

struct collected {
	struct tabs all;
	struct tabs own[NSECTIONS];
	const struct report *rep[NSECTIONS];
	size_t nrep;
	int sec_of[NSECTIONS]; /* report index -> section */
	struct table *clk;
	/* --base: cuptrace diff's comparison */
	const char *base;
	struct table **diff;
	size_t ndiff;
	struct diff_verdict verdict;
};

static void push(struct tabs *t, struct table *x)
{
	t->v = xrealloc(t->v, (t->n + 1) * sizeof *t->v);
	t->v[t->n++] = x;
}

static void take(void *ctx, int rep, struct table *t)
{
	struct collected *c = ctx;
	if (rep < 0) {
		c->clk = t;
		return;
	}
	push(&c->all, t);
	push(&c->own[c->sec_of[rep]], t);
}

/* Frees what the reports and --base's comparison made. */
static void collected_free(struct collected *c)
{
	for (size_t i = 0; i < c->all.n; i++)
		table_free(c->all.v[i]);
	free(c->all.v);
	for (size_t i = 0; i < NSECTIONS; i++)
		free(c->own[i].v);
	if (c->clk)
		table_free(c->clk);
	for (size_t i = 0; i < c->ndiff; i++)
		table_free(c->diff[i]);
	free(c->diff);
}

static void page(FILE *f, struct inputs *in, struct collected *c, const struct stats_opts *opts)
{
	html_page_begin(f);
	if (in->n)
		html_header(f, in, &c->all, opts);
	else
		html_none(f, "NCCL_DEBUG logs only: no trace file, so no header, GPU work or steps");
	if (c->clk)
		html_table(f, c->clk, NULL, 0);
	if (c->base) {
		html_section_begin(f, 0, "Compared with the base run");
		html_diff(f, c->base, c->verdict.text, c->diff, c->ndiff);
		html_section_end(f);
	}
	for (size_t i = 0; i < NSECTIONS; i++) {
		if (sections[i].shown && !sections[i].shown(&c->own[i]))
			continue;
		html_section_begin(f, i + 1, sections[i].title);
		if (!in->n && !(sections[i].rep && sections[i].rep->log))
			/* NCCL_DEBUG logs alone: no times, no GPU work, no ranges */
			html_none(f, "NCCL_DEBUG logs carry no times or GPU work: this section needs "
				     "the trace files");
		else
			(sections[i].draw ? sections[i].draw : html_draw_tables)(f, &c->all,
										 &c->own[i]);
		html_section_end(f);
	}
	html_page_end(f);
}

/* --base: the inputs compared with the run BASE as cuptrace diff does
 * (both read again, through diff's reports); -1 when a run could not be
 * read (said). */
static int compare_base(struct collected *c, const char *base, char **args, int nargs,
                        int strict, int jobs, const struct stats_opts *opts, const char *steps)
{
	struct diff_run run[2];
	char *b[] = {(char *)base};
	struct stats_opts o = *opts;
	o.explicit_list = 0, o.by_step = 0, o.by_time = 0;
	/* an MPI job's rank above 0 reads its shares of both runs, its tables
	 * (none) rank 0's: only a run that could not be read stops it */
	int above = mpirt_rank() > 0, r = diff_collect(b, 1, strict, jobs, &o, steps, &run[0]);
	if (r < 0 || (!run[0].n && (r || !above)))
		return -1;
	r = diff_collect(args, nargs, strict, jobs, &o, steps, &run[1]);
	if (r < 0 || (!run[1].n && (r || !above))) {
		diff_run_free(&run[0]);
		return -1;
	}
	c->base = base;
	diff_compare(&run[0], &run[1], NULL, &c->diff, &c->ndiff, &c->verdict);
	diff_run_free(&run[0]);
	diff_run_free(&run[1]);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {{"output", required_argument, NULL, 'o'},
					   {"steps", required_argument, NULL, 's'},
					   {"strict", no_argument, NULL, 'S'},
					   {"align", required_argument, NULL, 'A'},
					   {"jobs", required_argument, NULL, 'j'},
					   {"base", required_argument, NULL, 'b'},
					   {"help", no_argument, NULL, 'h'},
					   {"ranks", required_argument, NULL, PIECE_OPT_RANKS},
					   {"window", required_argument, NULL, PIECE_OPT_WINDOW},
					   {0, 0, 0, 0}};
	const char *out = NULL, *steps_arg = NULL, *base = NULL;
	int c, strict = 0, align = ALIGN_AUTO, jobs = 0;
	struct piece pc = {.steps_elsewhere = 1}; /* --steps: the reports follow it */
	struct stats_opts opts = {.explicit_list = 1, .by_step = 1, .by_time = 1,
				  .min_gap = 1000000};
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:s:j:h", lo, NULL)) != -1) {
		if (c == 'o')
			out = optarg;
		else if (c == 'j') {
			if (cmd_jobs(optarg, &jobs))
				return 2;
		}
		else if (c == 'S')
			strict = 1;
		else if (c == 'b')
			base = optarg;
		else if (c == 'A') {
			if (cmd_align(optarg, &align))
				return 2;
		} else if (c == 's') {
			steps_arg = optarg;
			if (cmd_steps(optarg, &opts) || piece_option(&pc, PIECE_OPT_STEPS, optarg))
				return 2;
		} else if (piece_is_option(c)) {
			if (piece_option(&pc, c, optarg))
				return 2;
		} else
			return cmd_usage(c, help);
	}
	if (optind >= argc)
		return cmd_usage(0, help);
	if (!out) {
		say_cmd("-o OUT.html is needed");
		return 2;
	}
	struct collected col = {0};
	for (size_t i = 0; i < NSECTIONS; i++)
		if (sections[i].rep) {
			col.sec_of[col.nrep] = (int)i;
			col.rep[col.nrep++] = sections[i].rep;
		}
	struct inputs in;
	if (inputs_open_logs(&in, argv + optind, argc - optind, strict))
		return 1;
	if (inputs_hold(&in, out)) {
		inputs_close(&in);
		return 2;
	}
	if (in.nlogs && opts.steps && !in.n) {
		say_cmd("%s: --steps of NCCL logs needs cuptrace stats (report keeps the steps of "
		        "traces)",
		        in.logs[0]);
		inputs_close(&in);
		return 2;
	}
	if (opts.steps) /* logs beside the traces: the steps are the traces' */
		cmd_drop_logs(&in, "report --steps keeps the steps of traces only");
	if (pc.ranks_arg || pc.window_arg) {
		/* the clocks placed on every file, then the piece: the reports
		 * then leave that placement as it is */
		int bad = cmd_place(&in, align);
		bad = bad ? 1 : cmd_piece(&in, &pc, jobs);
		if (bad) {
			inputs_close(&in);
			return bad;
		}
		align = ALIGN_NONE;
	}
	int rc = reports_collect(&in, col.rep, col.nrep, &opts, align, jobs, steps_arg, take, &col);
	/* the base is read as the inputs are: in an MPI job by every rank */
	if (rc >= 0 && base &&
	    compare_base(&col, base, argv + optind, argc - optind, strict, jobs, &opts, steps_arg))
		rc = -1;
	if (rc < 0 || mpirt_rank() > 0) { /* an MPI job's rank above 0: rank 0 draws */
		if (rc < 0)
			collected_free(&col);
		inputs_close(&in);
		return rc < 0;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		xoom();
	page(mem, &in, &col, &opts);
	if (fclose(mem))
		xoom();
	collected_free(&col);
	char piece_line[512] = "";
	if (in.piece)
		piece_describe(&in, NULL, piece_line, sizeof piece_line);
	inputs_close(&in);
	struct sink *s = sink_open(out);
	size_t cap = len + 1;
	if (s) {
		sink_put(s, 0, &buf, &cap, len);
		if (!sink_close(s)) {
			if (strcmp(out, "-")) /* the page on stdout needs no word */
				say_cmd("wrote %s (%zu bytes)", out, len);
			if (piece_line[0])
				say("%s", piece_line);
			free(buf);
			return rc;
		}
	}
	say_cmd("%s: %s", out, strerror(errno));
	free(buf);
	return 1;
}
