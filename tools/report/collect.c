/* The driver of the reports (collect.h): clocks, one pass over each file
 * through the model, NCCL logs, then the tables. */
#include "report/collect.h"
#include "model/clocks.h"
#include "model/step_window.h"

#include <stdio.h>
#include <stdlib.h>

struct run {
	const struct report *const *r;
	void **st;
	size_t n;
	struct tfile *t;
	const struct stats_opts *opts;
	uint64_t from, to; /* --steps: the file's window, [from, to) */
};

static int outside(const struct run *run, const struct report *r, uint64_t ts)
{
	return run->opts->steps && !r->own_steps && (ts < run->from || ts >= run->to);
}

/* The reports are consumers of the model's events. */
static void on_event(void *ctx, const struct m_event *ev)
{
	struct run *run = ctx;
	for (size_t i = 0; i < run->n; i++)
		if (!outside(run, run->r[i], ev->ts))
			run->r[i]->event(run->st[i], run->t, ev);
}

static const struct m_consumer reports_consumer = {NULL, on_event, NULL};

int stats_parse_steps(struct stats_opts *o, const char *s)
{
	char *end;
	long long a = strtoll(s, &end, 10), b = a;
	if (end == s || a < 0)
		return -1;
	if (*end == '-') {
		const char *q = end + 1;
		b = strtoll(q, &end, 10);
		if (end == q)
			return -1;
	}
	if (*end || b < a)
		return -1;
	o->steps = 1;
	o->step_lo = a;
	o->step_hi = b;
	return 0;
}

/* Each host's clock offset, when estimated (more than one host). */
static struct table *clocks_table(const struct clocks *c)
{
	if (c->mode != ALIGN_COLLECTIVES || c->n < 2)
		return NULL;
	static const char *cols[] = {"Host", "Files", "First Rank", "Last Rank", "Offset (ns)",
				     "Rank Ends", "Collectives"};
	struct table *t = table_new("clocks: offset of each host's clock (estimated from "
				    "collective ends; subtracted)", 7, cols);
	char note[160];
	snprintf(note, sizeof note,
		 "--align collectives: the first host is the reference; %llu collectives matched "
		 "across hosts", (unsigned long long)c->colls);
	table_note(t, note);
	for (size_t i = 0; i < c->n; i++) {
		const struct clock_host *h = &c->h[i];
		table_row(t);
		table_str(t, h->host);
		table_u64(t, h->files);
		if (h->rank_lo >= 0) {
			table_i64(t, h->rank_lo);
			table_i64(t, h->rank_hi);
		} else {
			table_null(t);
			table_null(t);
		}
		if (h->known)
			table_i64(t, h->offset_ns);
		else
			table_null(t);
		table_u64(t, h->samples);
		table_u64(t, c->colls);
	}
	return t;
}

int reports_collect(struct inputs *in, const struct report *const *r, size_t n,
		    const struct stats_opts *opts, int align, const char *cmd,
		    const char *steps_arg, collect_fn fn, void *ctx)
{
	struct run run = {.r = r, .n = n, .opts = opts};
	run.st = calloc(n ? n : 1, sizeof *run.st);
	if (!run.st)
		exit(1);
	struct clocks ck;
	int rc = 0;
	if (clocks_align(in, align, 1, &ck))
		rc = 1;
	for (size_t i = 0; i < n; i++)
		run.st[i] = r[i]->begin(opts);
	size_t stepless = 0;
	for (size_t k = 0; k < in->n; k++) {
		run.t = &in->v[k];
		if (opts->steps) {
			/* A first pass for the window of the steps. */
			if (!step_window(run.t, opts->step_lo, opts->step_hi, &run.from, &run.to)) {
				stepless++;
				if (in->n > 1)
					fprintf(stderr, "cuptrace %s: warning: %s holds no steps\n", cmd,
						run.t->f.path);
			}
			if (inputs_rewind(in, k)) {
				rc = 1;
				continue;
			}
		}
		model_file(run.t, &reports_consumer, &run, NULL);
		if (run.t->f.status == CT_CORRUPT) {
			fprintf(stderr, "cuptrace: %s\n", run.t->f.err);
			rc = 1;
		} else if (run.t->f.status == CT_TRUNCATED || run.t->f.status == CT_DAMAGED) {
			fprintf(stderr, "cuptrace: warning: %s\n", run.t->f.err);
		}
		tfile_release(run.t);
	}
	int none = in->n && stepless == in->n;
	if (none) {
		/* Tables of nothing would only say "(no rows)". */
		if (in->n == 1)
			fprintf(stderr, "cuptrace %s: --steps %s: %s holds no steps", cmd, steps_arg,
				in->v[0].f.path);
		else
			fprintf(stderr, "cuptrace %s: --steps %s: none of the %zu files holds steps", cmd,
				steps_arg, in->n);
		fprintf(stderr, " (steps come from cuptrace_step() or CUPTRACE_STEP_RANGE)\n");
	} else {
		for (size_t k = 0; k < in->nlogs; k++)
			for (size_t i = 0; i < n; i++)
				if (r[i]->log)
					r[i]->log(run.st[i], in->logs[k]);
	}
	struct table *clk = none ? NULL : clocks_table(&ck);
	clocks_free(&ck);
	if (clk)
		fn(ctx, -1, clk);
	for (size_t i = 0; i < n; i++) {
		struct table *tabs[4];
		int nt = r[i]->end(run.st[i], tabs);
		for (int k = 0; k < nt; k++) {
			if (none)
				table_free(tabs[k]);
			else
				fn(ctx, (int)i, tabs[k]);
		}
	}
	free(run.st);
	return none ? -1 : rc;
}
