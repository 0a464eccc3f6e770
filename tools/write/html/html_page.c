// SPDX-License-Identifier: MIT
/* The report page's frame (html.h): its head, the header of what was
 * traced, a section's heading and the closing section. */
#include "write/html/html.h"
#include "model/piece.h"
#include "read/inputs.h"
#include "stats/stats.h"
#include "util/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void html_page_begin(FILE *f)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width\">\n<title>cuptrace report</title>\n",
	      f);
	html_head_assets(f);
	fputs("</head>\n<body>\n<h1>cuptrace report</h1>\n", f);
}

static uint64_t sum(const uint64_t *v)
{
	uint64_t s = 0;
	for (unsigned k = 0; k < CT_NKINDS; k++)
		s += v[k];
	return s;
}


/* Flight recorder's windows (docs/flight-recorder.md): how many, the window
 * asked and the trigger, as the rank that fired says it (not "job: ..."). */
static void flight_line(FILE *f, const struct inputs *in)
{
	size_t n = 0, who = in->n;
	for (size_t i = 0; i < in->n; i++) {
		const struct ct_header *h = &in->v[i].f.h;
		if (!h->flight_want)
			continue;
		n++;
		if (who == in->n || (strncmp(h->flight_cause, "job: ", 5) &&
				     !strncmp(in->v[who].f.h.flight_cause, "job: ", 5)))
			who = i;
	}
	if (!n)
		return;
	const struct ct_header *h = &in->v[who].f.h;
	fprintf(f, "<dt>Flight windows</dt><dd data-h=\"flight\">%zu of %zu files, the last %.3g s "
		   "of each process; trigger: ", n, in->n, (double)h->flight_want / 1e9);
	html_esc(f, h->flight_cause);
	fputs("</dd>\n", f);
}

static void dd_num(FILE *f, const char *name, const char *key, uint64_t v, int bad)
{
	fprintf(f, "<dt>%s</dt><dd data-h=\"%s\"%s>%llu</dd>\n", name, key,
		bad && v ? " class=\"bad\"" : "", (unsigned long long)v);
}

void html_header(FILE *f, const struct inputs *in, const struct tabs *all,
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
	flight_line(f, in);
	if (opts->steps) /* the page did not say it covers some steps only */
		fprintf(f, "<dt>Steps</dt><dd data-h=\"steps\" class=\"bad\">%lld-%lld only: the "
			   "sections below cover these steps; this header, the whole trace</dd>\n",
			(long long)opts->step_lo, (long long)opts->step_hi);
	if (in->piece) { /* a piece of the job: what it kept and left out */
		char text[512];
		piece_describe(in, NULL, text, sizeof text);
		fputs("<dt>Piece</dt><dd data-h=\"piece\" class=\"bad\">", f);
		html_esc(f, text);
		fputs(": the page covers this piece only</dd>\n", f);
	}
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

void html_section_begin(FILE *f, size_t id, const char *title)
{
	fprintf(f, "<section id=\"s%zu\">\n<h2>", id);
	html_esc(f, title);
	fputs("</h2>\n", f);
}

void html_section_end(FILE *f)
{
	fputs("</section>\n", f);
}

void html_page_end(FILE *f)
{
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
