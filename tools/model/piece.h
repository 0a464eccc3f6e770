// SPDX-License-Identifier: MIT
/* A piece of a big job, for a viewer that cannot hold all of it: convert,
 * export, report and events take --steps A-B, --ranks LIST|slowest:N and
 * --window T0-T1 (docs/cuptrace-convert.md, "A piece of the job"). The
 * options are parsed here, the files of ranks not kept are closed before
 * anything reads them (after the clocks were aligned on every file), and
 * each kept file gets the window of its events on its own clock; the model
 * (model_emit) then hands out only the events the piece keeps. The rule:
 * an event is kept whole when it starts inside the window, [from, to),
 * whatever its end (as `stats --steps` counts); an arrow when both its
 * ends are; tracks and processes always. Choosing the slowest ranks needs
 * the reports (stats/piece_slow.c). */
#ifndef CT_PIECE_H
#define CT_PIECE_H

#include "config.h"
#include "model/model.h"
#include "read/inputs.h"

#include <stddef.h>
#include <stdint.h>

/* getopt_long codes of the three options (above any short option). */
enum { PIECE_OPT_STEPS = 0x7100, PIECE_OPT_RANKS, PIECE_OPT_WINDOW };
/* Their entries of a command's struct option table (<getopt.h>). */
#define PIECE_OPTIONS                                                   \
	{"steps", required_argument, NULL, PIECE_OPT_STEPS},            \
	{"ranks", required_argument, NULL, PIECE_OPT_RANKS},            \
	{"window", required_argument, NULL, PIECE_OPT_WINDOW}
/* Their lines of a command's --help. */
#define PIECE_HELP                                                                 \
	"  --steps A-B        only steps A to B: on each rank, from the start of\n"  \
	"                     step A to the start of step B + 1 (as stats --steps)\n" \
	"  --ranks LIST       only these ranks (as the outputs number them):\n"      \
	"                     0,2,8-15; slowest:N the N ranks that imposed the\n"    \
	"                     most wait at collectives (else with the longest\n"     \
	"                     steps) and the fastest one for contrast\n"              \
	"  --window T0-T1     only seconds T0 to T1 of the job's timeline (the\n"    \
	"                     Chrome JSON's ts / 1e6); T0- or -T1: open ends\n"       \
	"An event is kept whole when it starts inside the piece; an arrow when both\n"  \
	"its ends do.\n"

struct piece {
	const char *steps_arg, *ranks_arg, *window_arg; /* as given; NULL: not */
	int64_t step_lo, step_hi;
	int64_t win_lo, win_hi;  /* ns of the job's timeline; INT64_MIN/MAX: open */
	struct ct_rankset ranks; /* a list (slowest 0) */
	int slowest;             /* slowest:N */
	/* The caller keeps --steps itself (report: its reports follow steps
	 * through stats_opts); the piece only says it. */
	int steps_elsewhere;
	/* Once cut (piece_leave_out, piece_windows_done): */
	size_t nranks;           /* ranks of the job */
	size_t nkept;            /* ranks kept (the inputs' ranks now) */
	uint64_t records_out;    /* records of the files left out (their footers) */
	size_t files_out;
	int64_t t_lo, t_hi;      /* what is kept, ns of the job's timeline; t_hi INT64_MAX: the end */
	char rule[200];          /* slowest:N: which ranks, by what */
};

/* Option `opt` (PIECE_OPT_*) with its argument into p; -1 (said on
 * stderr, as the command's) when the value is malformed. */
int piece_option(struct piece *p, int opt, const char *arg);
/* Whether any of the three options was given. */
int piece_given(const struct piece *p);
/* Whether file t's rank is in --ranks' list (always without one). */
int piece_listed(const struct piece *p, const struct tfile *t);
/* Cutting the piece, in three parts (stats/piece_slow.c reads the files
 * of the second on threads): leaves out the files whose keep[] is 0
 * (closed, the rest renumbered; the clocks as they were placed on every
 * file) and sets in->piece; -2 (said on stderr) when no file is kept
 * (--ranks names no rank of the inputs). */
int piece_leave_out(struct inputs *in, struct piece *p, const uint8_t *keep);
/* Kept file i's window (t->piece): --steps' (a first pass over its step
 * marks, the file rewound after) cut by --window. 0; 1 when the file has
 * no step of --steps' range; -1 when it could not be read again (said).
 * Files may be done at once on several threads. */
int piece_window(struct inputs *in, const struct piece *p, size_t i);
/* Once every file has its window (`none` of them without a step of the
 * range): what the piece spans. -1 (said) when --steps found no step of
 * its range in any kept file. */
int piece_windows_done(struct inputs *in, struct piece *p, size_t none);
/* Events the model left out of the kept files of `only`'s output (every
 * file: NULL), so far. */
uint64_t piece_outside(const struct inputs *in, const struct tfile *only);
/* Whether the files were cut to a window and none kept an event in it. */
int piece_empty(const struct inputs *in);
/* One line of what the piece is and what it left out ("kept ranks 1,3 of
 * 4, steps 2-3 (0.120-0.180 s); left out 2 ranks (5102 records) and 310
 * events of the kept ranks"): for stderr and the outputs' metadata. */
void piece_describe(const struct inputs *in, const struct tfile *only, char *buf, size_t len);
/* The ranks of the inputs (once cut: those kept) as a list ("0-3,8"). */
void piece_ranks_str(const struct inputs *in, char *buf, size_t len);

/* Whether getopt_long's c is one of the three options. */
static inline int piece_is_option(int c)
{
	return c >= PIECE_OPT_STEPS && c <= PIECE_OPT_WINDOW;
}

/* Whether the model hands event ev of a cut file out (model_emit). */
static inline int piece_keeps(const struct tpiece *w, const struct m_event *ev)
{
	if (ev->type == ME_PROCESS || ev->type == ME_TRACK)
		return 1;
	if (ev->ts < w->from || ev->ts >= w->to)
		return 0;
	return ev->type != ME_FLOW || (ev->flow.to_ts >= w->from && ev->flow.to_ts < w->to);
}

#endif
