// SPDX-License-Identifier: MIT
/* cuptrace report: one self-contained HTML page (docs/REPORT.md) drawn
 * from the tables of the reports of `cuptrace stats`, run by the same
 * driver (stats/collect.h), so the page and stats agree to the digit. */
#include "cmd/cmd.h"
#include "job/clocks.h"
#include "write/html/html.h"
#include "write/sink.h"
#include "stats/collect.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The hang section is there, first, when the verdict says hang or
 * mismatch (a collective left incomplete by a job stopped while it ran,
 * "no hang: ...", is not one). */
static int hang_found(const struct tabs *own)
{
	return html_hang_verdict(own) != NULL;
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
	{"NCCL operations", &report_nccl_sum, html_draw_nccl_sum},
	{"NCCL message sizes", &report_nccl_sizes, html_draw_nccl_sizes},
	{"NCCL skew: who arrives late", &report_nccl_skew, html_draw_nccl_skew},
};

#define NSECTIONS (sizeof sections / sizeof *sections)

static void help(FILE *f)
{
	fputs("usage: cuptrace report -o OUT.html [-s|--steps A-B] [--align none|collectives]\n"
	      "                      [-j N] [--strict] INPUT...\n\n"
	      "Writes one self-contained HTML page (no network, scripts, fonts or images\n"
	      "from elsewhere) with the job's picture: header (command, hosts, ranks, GPUs,\n"
	      "window, events, drops, truncated files), breakdown per rank with the slowest\n"
	      "rank marked, step times per rank, GPU utilisation over time, top kernels and\n"
	      "NVTX ranges, NCCL operations, message sizes, bus bandwidth and arrival skew;\n"
	      "first, when a collective was left incomplete, the nccl_hang verdict and tables.\n"
	      "Every figure is a cell of `cuptrace stats --by step,time --report\n"
	      "breakdown,steps,cuda_gpu_kern_sum,nvtx_sum,nccl_sum,nccl_sizes,nccl_skew`\n"
	      "on the same inputs; hover a mark for its exact values. INPUT is a .ctr\n"
	      "file, a directory of them, or an NCCL_DEBUG=INFO log. --steps, --align,\n"
	      "-j and --strict as in cuptrace stats.\n"
	      "docs/REPORT.md describes the page.\n",
	      f);
}

struct collected {
	struct tabs all;
	struct tabs own[NSECTIONS];
	const struct report *rep[NSECTIONS];
	size_t nrep;
	int sec_of[NSECTIONS]; /* report index -> section */
	struct table *clk;
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

static uint64_t sum(const uint64_t *v)
{
	uint64_t s = 0;
	for (unsigned k = 0; k < CT_NKINDS; k++)
		s += v[k];
	return s;
}

static void dd_num(FILE *f, const char *name, const char *key, uint64_t v, int bad)
{
	fprintf(f, "<dt>%s</dt><dd data-h=\"%s\"%s>%llu</dd>\n", name, key,
		bad && v ? " class=\"bad\"" : "", (unsigned long long)v);
}

/* Header: what was traced, where, and whether anything was lost. */
static void header(FILE *f, struct inputs *in, const struct tabs *all,
		   const struct stats_opts *opts)
{
	const struct ct_header *h0 = &in->v[0].f.h;
	fputs("<dl class=\"hdr\">\n<dt>Command</dt><dd data-h=\"command\">", f);
	char *cmd = xcalloc(h0->cmdline_len + 1, 1);
	for (size_t i = 0; i < h0->cmdline_len; i++)
		cmd[i] = h0->cmdline[i] ? h0->cmdline[i] : ' ';
	html_esc(f, cmd);
	free(cmd);
	size_t other = 0;
	for (size_t i = 1; i < in->n; i++)
		other += in->v[i].f.h.cmdline_len != h0->cmdline_len ||
			 memcmp(in->v[i].f.h.cmdline, h0->cmdline, h0->cmdline_len);
	if (other)
		fprintf(f, " <span class=\"sub\">(%zu files ran another command)</span>", other);
	fputs("</dd>\n<dt>Hosts</dt><dd>", f);
	size_t nhosts = 0;
	for (size_t i = 0; i < in->n; i++) {
		size_t j;
		for (j = 0; j < i && strcmp(in->v[j].f.h.host, in->v[i].f.h.host); j++)
			;
		if (j < i)
			continue;
		if (nhosts < 8) {
			fputs(nhosts ? ", " : "", f);
			html_esc(f, in->v[i].f.h.host);
		}
		nhosts++;
	}
	if (nhosts > 8)
		fprintf(f, " and %zu more", nhosts - 8);
	fputs("</dd>\n", f);
	uint64_t ranks = in->nranks, events = 0, drops = 0, bad = 0;
	for (size_t i = 0; i < in->n; i++) {
		events += sum(in->v[i].f.events);
		drops += sum(in->v[i].f.drops);
		bad += in->v[i].f.status != CT_CLEAN;
	}
	dd_num(f, "Files", "files", in->n, 0);
	dd_num(f, "Ranks", "ranks", ranks, 0);
	if (in->world_size > 0)
		dd_num(f, "World size", "world", (uint64_t)in->world_size, 0);
	const struct table *bd = tabs_get(all, "breakdown: GPU time");
	uint64_t gpus = 0;
	for (size_t r = 0; bd && r < table_nrows(bd); r++) {
		int kind;
		table_cell(bd, r, table_find_col(bd, "Step"), &kind);
		gpus += kind == 2;
	}
	dd_num(f, "GPUs with work", "gpus", gpus, 0);
	/* The window: from the earliest start to the latest clean end. */
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (size_t i = 0; i < in->n; i++) {
		const struct ct_file *x = &in->v[i].f;
		t0 = x->h.rt_anchor < t0 ? x->h.rt_anchor : t0;
		if (x->have_footer && x->mono_end > x->h.mono_anchor &&
		    x->h.rt_anchor + (x->mono_end - x->h.mono_anchor) > t1)
			t1 = x->h.rt_anchor + (x->mono_end - x->h.mono_anchor);
	}
	time_t s = (time_t)(t0 / 1000000000u);
	struct tm tm;
	char when[64] = "?";
	if (gmtime_r(&s, &tm))
		strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
	fprintf(f, "<dt>Trace window</dt><dd>from %s", when);
	if (t1 > t0)
		fprintf(f, ", %.3f s", (double)(t1 - t0) / 1e9);
	fputs("</dd>\n", f);
	if (opts->steps) /* the page did not say it covers some steps only */
		fprintf(f, "<dt>Steps</dt><dd data-h=\"steps\" class=\"bad\">%lld-%lld only: the "
			   "sections below cover these steps; this header, the whole trace</dd>\n",
			(long long)opts->step_lo, (long long)opts->step_hi);
	dd_num(f, "Events", "events", events, 0);
	dd_num(f, "Dropped events", "drops", drops, 1);
	dd_num(f, "Truncated or damaged files", "truncated", bad, 1);
	if (bad) {
		fputs("<dd class=\"bad\" style=\"grid-column:2\">", f);
		for (size_t i = 0, k = 0; i < in->n; i++)
			if (in->v[i].f.status != CT_CLEAN && k++ < 16) {
				html_esc(f, in->v[i].f.path);
				fputs(": ", f);
				html_esc(f, ct_status_name(in->v[i].f.status));
				fputs("<br>", f);
			}
		fputs("</dd>\n", f);
	}
	const char *hang = html_hang_verdict(all);
	if (hang) {
		fputs("<dt>Hang</dt><dd data-h=\"hang\" class=\"bad\">", f);
		html_esc(f, hang);
		fputs("</dd>\n", f);
	}
	const char *why = NULL;
	long slow = html_slowest_rank(all, &why);
	if (slow >= 0 && in->nranks > 1) { /* one rank is slowest of nothing: not shown */
		fprintf(f, "<dt>Slowest rank</dt><dd data-h=\"slowest\" class=\"bad\">%ld</dd>"
			   "<dd style=\"grid-column:2\">", slow);
		html_esc(f, why);
		fputs("</dd>\n", f);
	}
	fputs("</dl>\n", f);
}

static void page(FILE *f, struct inputs *in, struct collected *c, const struct stats_opts *opts)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>cuptrace report</title>\n",
	      f);
	html_head_assets(f);
	fputs("</head>\n<body>\n<h1>cuptrace report</h1>\n", f);
	if (in->n)
		header(f, in, &c->all, opts);
	else
		html_none(f, "NCCL_DEBUG logs only: no trace file, so no header, GPU work or steps");
	if (c->clk)
		html_table(f, c->clk, NULL, 0);
	for (size_t i = 0; i < NSECTIONS; i++) {
		if (sections[i].shown && !sections[i].shown(&c->own[i]))
			continue;
		fprintf(f, "<section id=\"s%zu\">\n<h2>", i + 1);
		html_esc(f, sections[i].title);
		fputs("</h2>\n", f);
		if (!in->n && !(sections[i].rep && sections[i].rep->log))
			/* NCCL_DEBUG logs alone: no times, no GPU work, no ranges */
			html_none(f, "NCCL_DEBUG logs carry no times or GPU work: this section needs "
				     "the trace files");
		else
			(sections[i].draw ? sections[i].draw : html_draw_tables)(f, &c->all,
										 &c->own[i]);
		fputs("</section>\n", f);
	}
	fputs("<section id=\"open\">\n<h2>The full trace</h2>\n"
	      "<p>This page summarises the trace files. To see every event on a timeline, convert "
	      "them and open the result in the Perfetto UI (ui.perfetto.dev, which reads the file "
	      "in the browser) or chrome://tracing:</p>\n<pre>cuptrace convert -o trace.pftrace "
	      "INPUT...     # or trace.json.gz; --split-ranks DIR for HTA</pre>\n"
	      "<p>The same tables as text, CSV or JSON: <code>cuptrace stats --by step,time INPUT...</code>"
	      "</p>\n</section>\n",
	      f);
	html_script(f);
	fputs("</body>\n</html>\n", f);
}

int cmd_report(int argc, char **argv)
{
	static const struct option lo[] = {{"output", required_argument, NULL, 'o'},
					   {"steps", required_argument, NULL, 's'},
					   {"strict", no_argument, NULL, 'S'},
					   {"align", required_argument, NULL, 'A'},
					   {"jobs", required_argument, NULL, 'j'},
					   {"help", no_argument, NULL, 'h'},
					   {0, 0, 0, 0}};
	const char *out = NULL, *steps_arg = NULL;
	int c, strict = 0, align = ALIGN_AUTO, jobs = 0;
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
		else if (c == 'A') {
			if (cmd_align(optarg, &align))
				return 2;
		} else if (c == 's') {
			steps_arg = optarg;
			if (cmd_steps(optarg, &opts))
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
	int rc = reports_collect(&in, col.rep, col.nrep, &opts, align, jobs, steps_arg, take, &col);
	if (rc < 0) {
		inputs_close(&in);
		return 1;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem)
		xoom();
	page(mem, &in, &col, &opts);
	if (fclose(mem))
		xoom();
	for (size_t i = 0; i < col.all.n; i++)
		table_free(col.all.v[i]);
	free(col.all.v);
	for (size_t i = 0; i < NSECTIONS; i++)
		free(col.own[i].v);
	if (col.clk)
		table_free(col.clk);
	inputs_close(&in);
	struct sink *s = sink_open(out);
	size_t cap = len + 1;
	if (s) {
		sink_put(s, 0, &buf, &cap, len);
		if (!sink_close(s)) {
			if (strcmp(out, "-")) /* the page on stdout needs no word */
				say_cmd("wrote %s (%zu bytes)", out, len);
			free(buf);
			return rc;
		}
	}
	say_cmd("%s: %s", out, strerror(errno));
	free(buf);
	return 1;
}
