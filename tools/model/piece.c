// SPDX-License-Identifier: MIT
/* A piece of a big job (piece.h): the options, the files left out, each
 * kept file's window, and the line that says what was kept. */
#include "model/piece.h"
#include "model/step_window.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds (a decimal number >= 0) at s into ns; the end in *end. */
static int seconds(const char *s, char **end, int64_t *ns)
{
	if (*s < '0' || *s > '9') { /* no sign, no "inf", no "nan" */
		if (*s != '.')
			return -1;
	}
	errno = 0;
	double v = strtod(s, end);
	if (*end == s || errno || !(v >= 0) || v > 9e9)
		return -1;
	*ns = (int64_t)llround(v * 1e9);
	return 0;
}

/* T0-T1, T0- or -T1 (seconds). */
static int parse_window(struct piece *p, const char *arg)
{
	const char *dash = strchr(arg, '-');
	char *end;
	p->win_lo = INT64_MIN, p->win_hi = INT64_MAX;
	if (!dash || !strcmp(arg, "-"))
		return -1;
	if (dash != arg && (seconds(arg, &end, &p->win_lo) || end != dash))
		return -1;
	if (dash[1] && (seconds(dash + 1, &end, &p->win_hi) || *end))
		return -1;
	return p->win_hi <= p->win_lo ? -1 : 0;
}

static int parse_ranks(struct piece *p, const char *arg)
{
	char why[160];
	if (!strncmp(arg, "slowest:", 8)) {
		char *end;
		errno = 0;
		long n = strtol(arg + 8, &end, 10);
		if (end == arg + 8 || *end || errno || n < 1 || n > 1 << 20) {
			say_cmd("--ranks %s: slowest:N needs a number N >= 1", arg);
			return -1;
		}
		p->slowest = (int)n;
		return 0;
	}
	if (ct_rankset_parse(arg, &p->ranks, why, sizeof why)) {
		say_cmd("--ranks %s: %s, or slowest:N", arg, why);
		return -1;
	}
	return 0;
}

int piece_option(struct piece *p, int opt, const char *arg)
{
	if (opt == PIECE_OPT_STEPS) {
		if (!step_range_parse(arg, &p->step_lo, &p->step_hi)) {
			p->steps_arg = arg;
			return 0;
		}
		say_cmd("--steps %s: expected A-B (A <= B) or A (step numbers)", arg);
		return -1;
	}
	if (opt == PIECE_OPT_WINDOW) {
		if (!parse_window(p, arg)) {
			p->window_arg = arg;
			return 0;
		}
		say_cmd("--window %s: expected T0-T1 (seconds on the job's timeline, T0 < T1), "
		        "T0- or -T1",
		        arg);
		return -1;
	}
	if (parse_ranks(p, arg))
		return -1;
	p->ranks_arg = arg;
	return 0;
}

int piece_given(const struct piece *p)
{
	return p->steps_arg || p->ranks_arg || p->window_arg;
}

int piece_listed(const struct piece *p, const struct tfile *t)
{
	if (!p->ranks_arg || p->slowest)
		return 1;
	return ct_rankset_has(&p->ranks, (long)t->shown_rank, (long)t->f.h.local_rank) == 1;
}

/* The records a file holds, as its footer counts them (0 without one). */
static uint64_t records(const struct tfile *t)
{
	uint64_t n = 0;
	for (int k = 0; t->f.final_footer && k < CT_NKINDS; k++)
		n += t->f.f_events[k];
	return n;
}

/* Closes the files not kept and moves the rest down (index and lead
 * follow; a forked child is kept with its parent: same rank). */
static void leave_out(struct inputs *in, struct piece *p, const uint8_t *keep)
{
	int *to = xcalloc(in->n + 1, sizeof *to);
	size_t n = 0;
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		if (!keep[i]) {
			to[i] = -1;
			p->files_out++;
			p->records_out += records(t);
			tfile_release(t);
			ct_file_close(&t->f);
			continue;
		}
		to[i] = (int)n;
		t->piece.place = (int)i;
		if (n != i)
			in->v[n] = *t;
		n++;
	}
	for (size_t i = 0; i < n; i++) {
		struct tfile *t = &in->v[i];
		t->index = (int)i;
		t->lead = to[t->lead] >= 0 ? to[t->lead] : (int)i;
	}
	in->n = n;
	in->nranks = 0;
	for (size_t i = 0; i < n; i++) /* sorted by rank */
		in->nranks += !i || in->v[i].shown_rank != in->v[i - 1].shown_rank;
	p->nkept = in->nranks;
	free(to);
}

int piece_window(struct inputs *in, const struct piece *p, size_t i)
{
	struct tfile *t = &in->v[i];
	uint64_t from = 0, to = UINT64_MAX;
	int none = 0;
	t->piece.end = UINT64_MAX;
	if (p->steps_arg && !p->steps_elsewhere) {
		step_window(t, p->step_lo, p->step_hi, &from, &to);
		none = from == UINT64_MAX;
		t->piece.end = t->f.last_ts;
		if (inputs_rewind(in, i))
			return -1;
	}
	int64_t off = t->off_ns;
	if (none) {
		from = UINT64_MAX, to = 0;
	} else if (p->window_arg && p->win_lo != INT64_MIN && p->win_lo - off > 0 &&
	           (uint64_t)(p->win_lo - off) > from) {
		from = (uint64_t)(p->win_lo - off);
	}
	if (!none && p->window_arg && p->win_hi != INT64_MAX) {
		uint64_t hi = p->win_hi - off <= 0 ? 0 : (uint64_t)(p->win_hi - off);
		to = hi < to ? hi : to;
	}
	t->piece.cut = 1, t->piece.from = from, t->piece.to = to;
	return none;
}

int piece_leave_out(struct inputs *in, struct piece *p, const uint8_t *keep)
{
	p->nranks = in->nranks;
	leave_out(in, p, keep);
	in->piece = p;
	if (in->n)
		return 0;
	say_cmd("--ranks %s: no input has such a rank", p->ranks_arg);
	return -2;
}

int piece_windows_done(struct inputs *in, struct piece *p, size_t none)
{
	p->t_lo = INT64_MAX, p->t_hi = INT64_MIN;
	for (size_t i = 0; i < in->n; i++) {
		const struct tfile *t = &in->v[i];
		if (t->piece.from >= t->piece.to)
			continue;
		/* from 0: not cut at the start (no --steps, --window's T0 open
		 * or before the file's clock began): the piece begins where
		 * --window says, else it is open (not the file clock's zero) */
		int64_t a = (int64_t)t->piece.from + t->off_ns;
		if (!t->piece.from)
			a = p->window_arg ? p->win_lo : INT64_MIN;
		uint64_t e = t->piece.to < t->piece.end ? t->piece.to : t->piece.end;
		int64_t b = e == UINT64_MAX ? INT64_MAX : (int64_t)e + t->off_ns;
		p->t_lo = a < p->t_lo ? a : p->t_lo;
		p->t_hi = b > p->t_hi ? b : p->t_hi;
	}
	if (p->steps_arg && !p->steps_elsewhere && none == in->n) {
		say_cmd("--steps %s: no step of that range in %s (steps come from cuptrace_step() "
		        "or CUPTRACE_STEP_RANGE)",
		        p->steps_arg, in->n == 1 ? in->v[0].f.path : "the files kept");
		return -1;
	}
	if (!p->window_arg && (!p->steps_arg || p->steps_elsewhere))
		p->t_lo = INT64_MIN, p->t_hi = INT64_MAX; /* not cut in time */
	else if (p->t_lo == INT64_MAX) /* nothing in the window: say it as asked */
		p->t_lo = p->window_arg ? p->win_lo : INT64_MIN,
		p->t_hi = p->window_arg ? p->win_hi : INT64_MAX;
	return 0;
}

uint64_t piece_outside(const struct inputs *in, const struct tfile *only)
{
	uint64_t n = 0;
	for (size_t i = 0; i < in->n; i++)
		if (tfile_in_output(&in->v[i], only))
			n += in->v[i].piece.outside;
	return n;
}

int piece_empty(const struct inputs *in)
{
	int cut = 0;
	for (size_t i = 0; i < in->n; i++) {
		if (in->v[i].piece.inside)
			return 0;
		cut |= in->v[i].piece.cut;
	}
	return cut;
}

void piece_ranks_str(const struct inputs *in, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = 0;
	for (size_t i = 0; i < in->n && o < len; i++) {
		int64_t a = in->v[i].shown_rank, b = a;
		if (i && a == in->v[i - 1].shown_rank)
			continue; /* files of one rank */
		while (i + 1 < in->n && (in->v[i + 1].shown_rank == b ||
		                         in->v[i + 1].shown_rank == b + 1))
			b = in->v[++i].shown_rank;
		if (a == b)
			o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64, o ? "," : "", a);
		else
			o += (size_t)snprintf(buf + o, len - o, "%s%" PRId64 "-%" PRId64, o ? "," : "", a,
			                      b);
	}
}

static size_t add(char *buf, size_t len, size_t o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static size_t add(char *buf, size_t len, size_t o, const char *fmt, ...)
{
	if (o >= len)
		return o;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + o, len - o, fmt, ap);
	va_end(ap);
	return n < 0 ? o : o + (size_t)n;
}

void piece_describe(const struct inputs *in, const struct tfile *only, char *buf, size_t len)
{
	const struct piece *p = in->piece;
	char ranks[256];
	piece_ranks_str(in, ranks, sizeof ranks);
	size_t o = 0;
	if (p->nkept == p->nranks && p->nranks == 1)
		o = add(buf, len, o, "kept the only rank, %s", ranks);
	else if (p->nkept == p->nranks)
		o = add(buf, len, o, "kept all %zu ranks", p->nranks);
	else
		o = add(buf, len, o, "kept rank%s %s of %zu", p->nkept > 1 ? "s" : "", ranks, p->nranks);
	if (p->rule[0])
		o = add(buf, len, o, " (%s)", p->rule);
	if (p->steps_arg)
		o = add(buf, len, o, ", steps %s", p->steps_arg);
	if (p->window_arg)
		o = add(buf, len, o, ", window %s s", p->window_arg);
	int timed = p->steps_arg || p->window_arg;
	if (timed && p->t_lo != INT64_MIN && p->t_hi != INT64_MAX)
		o = add(buf, len, o, " (%.3f-%.3f s)", (double)p->t_lo / 1e9, (double)p->t_hi / 1e9);
	else if (timed && p->t_lo != INT64_MIN)
		o = add(buf, len, o, " (%.3f s to the end)", (double)p->t_lo / 1e9);
	else if (timed && p->t_hi != INT64_MAX)
		o = add(buf, len, o, " (up to %.3f s)", (double)p->t_hi / 1e9);
	uint64_t outside = piece_outside(in, only);
	if (!p->files_out && !outside) {
		add(buf, len, o, "; nothing left out");
		return;
	}
	o = add(buf, len, o, "; left out ");
	if (p->files_out)
		o = add(buf, len, o, "%zu rank%s (%" PRIu64 " records)%s", p->nranks - p->nkept,
		        p->nranks - p->nkept == 1 ? "" : "s", p->records_out, outside ? " and " : "");
	if (outside)
		add(buf, len, o, "%" PRIu64 " events of %s", outside,
		    only ? "this rank" : "the kept ranks");
}
