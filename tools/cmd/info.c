// SPDX-License-Identifier: MIT
/* cuptrace info: what a trace file holds and whether it ended cleanly. */
#include "cmd/cmd.h"
#include "config.h"
#include "job/clocks.h"
#include "read/inputs.h"
#include "read/live.h"
#include "util/term_escape.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
	fputs("usage: cuptrace info [--strict] [--align none|collectives] INPUT...\n\n"
	      "For one file: its header, configuration, events and drops per kind, and\n"
	      "whether it ended cleanly, is truncated or had damaged blocks skipped. For\n"
	      "several: one row per file, and the ranks missing from the job. --strict:\n"
	      "an unusable input is an error (default: skipped with a warning). Files\n"
	      "from more than one host: each host's clock offset, estimated from\n"
	      "collective ends as convert and stats apply it (--align none: not).\n",
	      f);
}

static uint64_t sum(const uint64_t *v)
{
	uint64_t s = 0;
	for (unsigned k = 0; k < CT_NKINDS; k++)
		s += v[k];
	return s;
}

/* Prints fmt with %s taking s escaped for the terminal (text from the
 * traced program and its machine). */
static void put_esc(const char *fmt, const char *s, size_t n)
{
	char *e = term_escape(s, n, NULL);
	printf(fmt, e);
	free(e);
}

/* The footer's CT_FT_END (format 1.1): how the process ended. */
static void print_ending(const struct ct_file *f)
{
	uint64_t d = f->end_detail;
	switch (f->end_how) {
	case CT_END_EXIT: /* the status where the library saw it (format 1.2) */
		if (d & CT_EXIT_STATUS_KNOWN)
			printf("ended:       exit(%llu)\n", (unsigned long long)(d & 0xff));
		else
			printf("ended:       exit\n");
		break;
	case CT_END_EXIT_NOW:
		printf("ended:       _exit(%llu)\n", (unsigned long long)d);
		break;
	case CT_END_EXEC:
		printf("ended:       exec\n");
		break;
	case CT_END_SIGNAL:
		printf("ended:       signal %llu (%s)\n", (unsigned long long)d,
		       d > 0 && d < 65 ? strsignal((int)d) : "unknown");
		break;
	case CT_END_ROTATE:
		printf("ended:       rotated (file %llu of the process; it goes on in the next)\n",
		       (unsigned long long)d);
		break;
	default:
		if (f->end_how)
			printf("ended:       unknown (%llu)\n", (unsigned long long)f->end_how);
	}
}

static void detail(struct tfile *t)
{
	const struct ct_header *h = &t->f.h;
	put_esc("file:        %s\n", t->f.path, strlen(t->f.path));
	printf("format:      %u.%u ", h->major, h->minor);
	put_esc("(written by cuptrace %s)\n", h->version, strlen(h->version));
	put_esc("host:        %s\n", h->host, strlen(h->host));
	printf("pid:         %llu (parent %llu)\n", (unsigned long long)h->pid,
	       (unsigned long long)h->ppid);
	if (h->rank < 0 && t->f.nccl_nranks)
		printf("rank:        none from a launcher; %llu of %llu in its largest NCCL "
		       "communicator, shown as rank %lld\n",
		       (unsigned long long)t->f.nccl_rank, (unsigned long long)t->f.nccl_nranks,
		       (long long)t->shown_rank);
	else if (h->rank < 0)
		printf("rank:        none (not started by a launcher)\n");
	else
	{
		printf("rank:        %lld (local %lld, world size %lld, ", (long long)h->rank,
		       (long long)h->local_rank, (long long)h->world_size);
		put_esc("from %s)\n", h->rank_source, strlen(h->rank_source));
	}
	char *cmd = xmalloc(h->cmdline_len + 1);
	for (size_t i = 0; i < h->cmdline_len; i++)
		cmd[i] = h->cmdline[i] ? h->cmdline[i] : ' ';
	put_esc("command:     %s\n", cmd, h->cmdline_len);
	free(cmd);
	printf("started:     %llu ns (CLOCK_REALTIME)\n", (unsigned long long)h->rt_anchor);
	if (t->f.have_footer && t->f.mono_end > h->mono_anchor)
		printf("duration:    %.3f s\n", (double)(t->f.mono_end - h->mono_anchor) / 1e9);
	if (h->flight_want) { /* a flight recorder's window (1.5) */
		printf("flight:      window of %.3f s (the last %.3f s of recording asked), from "
		       "%.3f s to %.3f s after the start\n",
		       (double)(h->flight_to - h->flight_from) / 1e9, (double)h->flight_want / 1e9,
		       (double)(h->flight_from - h->mono_anchor) / 1e9,
		       (double)(h->flight_to - h->mono_anchor) / 1e9);
		put_esc("trigger:     %s\n", h->flight_cause, strlen(h->flight_cause));
		if (h->flight_budget)
			printf("flight store: %.2f MB at most held in memory, of a budget of %.0f MB "
			       "(CUPTRACE_FLIGHT_MB)\n",
			       (double)h->flight_held / (1 << 20), (double)h->flight_budget / (1 << 20));
		if (h->flight_short)
			printf("flight cut:  %.3f s of the window left out: over its budget of %llu MB "
			       "(CUPTRACE_FLIGHT_MB)\n",
			       (double)h->flight_short / 1e9,
			       (unsigned long long)(h->flight_budget >> 20));
	}
	printf("config:\n");
	for (const char *p = h->config; *p;) {
		size_t n = strcspn(p, "\n");
		put_esc("  %s\n", p, n);
		p += n + (p[n] ? 1 : 0);
	}
	printf("blocks:      %llu (%llu bytes decoded)\n", (unsigned long long)t->f.nblocks,
	       (unsigned long long)t->f.bytes);
	printf("events:      %llu\n", (unsigned long long)sum(t->f.events));
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		const struct ct_schema *s = ct_schema_of(k);
		if (s && (t->f.events[k] || t->f.drops[k]))
			printf("  %-14s %12llu   dropped %llu\n", s->name,
			       (unsigned long long)t->f.events[k], (unsigned long long)t->f.drops[k]);
	}
	printf("dropped:     %llu\n", (unsigned long long)sum(t->f.drops));
	if (t->f.trunc_str)
		printf("cut strings: %llu (longer than the recorder keeps)\n",
		       (unsigned long long)t->f.trunc_str);
	if (t->f.have_footer)
		print_ending(&t->f);
	if (t->f.damaged) {
		uint64_t want = sum(t->f.f_events), got = sum(t->f.events);
		printf("damaged:     %llu damaged block%s skipped (%llu bytes)", (unsigned long long)t->f.damaged,
		       t->f.damaged > 1 ? "s" : "", (unsigned long long)t->f.damaged_bytes);
		if (t->f.final_footer && want > got)
			printf(", %llu of %llu events lost", (unsigned long long)(want - got),
			       (unsigned long long)want);
		if (t->f.lost_refs)
			printf(", %llu references to strings lost with them (read as \"?\")",
			       (unsigned long long)t->f.lost_refs);
		printf("\n");
	}
	printf("status:      %s%s%s\n", ct_status_name(t->f.status), t->f.err[0] ? ": " : "",
	       t->f.status == CT_CLEAN ? "" : tfile_err(t));
}

/* The ranks the job chose to trace (CUPTRACE_RANKS in the first file's
 * settings): 1 and *set filled when it names global ranks, else 0 (all, or
 * node-local ranks, which say nothing of an absent rank). */
static int traced_ranks(const struct inputs *in, struct ct_rankset *set, char *spec, size_t len)
{
	static const char key[] = "CUPTRACE_RANKS=";
	const char *p = in->n ? strstr(in->v[0].f.h.config, key) : NULL;
	if (!p || (p != in->v[0].f.h.config && p[-1] != '\n'))
		return 0;
	p += sizeof key - 1;
	snprintf(spec, len, "%.*s", (int)strcspn(p, "\n"), p);
	struct ct_config c;
	char err[256];
	ct_config_defaults(&c);
	if (ct_config_set(&c, "CUPTRACE_RANKS", spec, err, sizeof err) || c.ranks.all ||
	    c.ranks.local)
		return 0;
	*set = c.ranks;
	return 1;
}

static void missing_ranks(struct inputs *in)
{
	int64_t world = 0; /* of the launcher ranks that stand (inputs_rank) */
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].rank >= 0 && in->v[i].f.h.world_size > world)
			world = in->v[i].f.h.world_size;
	if (world <= 0 || world > 1 << 24)
		return;
	char *seen = xcalloc((size_t)world, 1);
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].rank >= 0 && in->v[i].rank < world)
			seen[in->v[i].rank] = 1;
	/* Ranks left out by CUPTRACE_RANKS are not missing. */
	struct ct_rankset set;
	char spec[256];
	int chosen = traced_ranks(in, &set, spec, sizeof spec);
	for (int64_t r = 0; chosen && r < world; r++)
		if (!ct_rankset_has(&set, (long)r, -1))
			seen[r] = 1;
	int printed = 0;
	for (int64_t r = 0; r < world; r++) {
		if (seen[r])
			continue;
		int64_t e = r;
		while (e + 1 < world && !seen[e + 1])
			e++;
		printf("%s%lld", printed ? "," : "missing ranks: ", (long long)r);
		if (e > r)
			printf("-%lld", (long long)e);
		printed = 1;
		r = e;
	}
	if (printed && chosen)
		printf(" (world size %lld; traced: CUPTRACE_RANKS=%s)\n", (long long)world, spec);
	else if (printed)
		printf(" (world size %lld)\n", (long long)world);
	free(seen);
}

/* Flight recorder's windows among the files: each one's trigger. */
static void flight_rows(const struct inputs *in)
{
	for (size_t i = 0, n = 0; i < in->n; i++) {
		const struct ct_header *h = &in->v[i].f.h;
		if (!h->flight_want)
			continue;
		if (!n++)
			printf("flight windows (the last %.3g s of recording asked):\n",
			       (double)h->flight_want / 1e9);
		printf("%4lld   window of %.3f s, ", (long long)in->v[i].shown_rank,
		       (double)(h->flight_to - h->flight_from) / 1e9);
		put_esc("trigger: %s\n", h->flight_cause, strlen(h->flight_cause));
	}
}

int cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {{"help", no_argument, NULL, 'h'},
					   {"strict", no_argument, NULL, 'S'},
					   {"align", required_argument, NULL, 'A'},
					   {0, 0, 0, 0}};
	int c, strict = 0, align = ALIGN_AUTO;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		if (c == 'S') {
			strict = 1;
		} else if (c == 'A') {
			if (cmd_align(optarg, &align))
				return 2;
		} else {
			return cmd_usage(c, help);
		}
	}
	if (optind >= argc)
		return cmd_usage(0, help);
	struct inputs in;
	if (inputs_open(&in, argv + optind, argc - optind, strict))
		return 1;
	struct clocks ck; /* a first pass over the NCCL records; the files are rewound */
	int rc = clocks_align(&in, align, 0, &ck) ? 1 : 0;
	for (size_t i = 0; i < in.n; i++) {
		struct ct_event ev;
		while (ct_file_next(&in.v[i].f, &ev) == 1)
			;
		if (in.v[i].f.status == CT_CORRUPT || in.v[i].f.status == CT_DAMAGED)
			rc = 1;
		tfile_release(&in.v[i]);
	}
	if (in.n == 1) {
		detail(&in.v[0]);
	} else {
		printf("%5s  %-20s %8s %12s %10s  %-9s  %s\n", "rank", "host", "pid", "events", "dropped",
		       "status", "file");
		int marks = 0; /* 1: a rank from NCCL shown, 2: a number given */
		for (size_t i = 0; i < in.n; i++) {
			struct tfile *t = &in.v[i];
			char *host = term_escape(t->f.h.host, strlen(t->f.h.host), NULL);
			char *path = term_escape(t->f.path, strlen(t->f.path), NULL);
			int mark = t->rank >= 0 ? 0 : t->nccl_shown ? 1 : 2;
			marks |= mark;
			printf("%4lld%c  %-20.20s %8llu %12llu %10llu  %-9s  %s\n", (long long)t->shown_rank,
			       " *~"[mark], host,
			       (unsigned long long)t->f.h.pid, (unsigned long long)sum(t->f.events),
			       (unsigned long long)sum(t->f.drops), ct_status_name(t->f.status), path);
			free(host);
			free(path);
		}
		if (marks & 1)
			printf("* no launcher rank: its rank in its largest NCCL communicator\n");
		if (marks & 2)
			printf("~ no launcher rank: numbered after the known ranks, in start order\n");
		missing_ranks(&in);
		flight_rows(&in);
		clocks_print(&ck, stdout, "");
	}
	clocks_free(&ck);
	inputs_close(&in);
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		say_cmd("writing stdout: %s", strerror(errno ? errno : EIO));
		rc = 1;
	}
	return rc;
}
