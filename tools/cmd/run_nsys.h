// SPDX-License-Identifier: MIT
/* `cuptrace run`'s share of `nsys profile`'s options, so that a batch
 * script's `nsys profile ...` line runs as `cuptrace run ...` with the rest
 * of the line kept (docs/cuptrace-run.md, "Coming from nsys profile").
 * An option cuptrace has the feature of is taken with nsys's meaning, onto
 * the CUPTRACE_* variables; one it has not is said once on stderr
 * ("cuptrace run: note: ...") and ignored, unless its value asks for
 * nothing (none, false) or for what cuptrace does anyway. */
#ifndef CT_RUN_NSYS_H
#define CT_RUN_NSYS_H

#include <getopt.h>
#include <stddef.h>

/* getopt_long's value for the i-th nsys option: NSYS_CODE + i; there are
 * at most NSYS_MAX of them. */
#define NSYS_CODE 2000
#define NSYS_MAX  128
/* nsys's short options that are not also cuptrace's (-c and -b are both:
 * the value tells whose; -d and -y are cuptrace's --duration and --delay). */
#define NSYS_SHORTS "p:e:s:f::w::x::n::Y::"

/* What the nsys options asked for, gathered while the command line is
 * read (nsys_take), applied once it is read (nsys_settle, nsys_sources). */
struct nsys_opts {
	const char *range;             /* --capture-range; NULL: not given */
	const char *range_end;         /* --capture-range-end */
	const char *nvtx_capture;      /* -p */
	unsigned long end_repeat;      /* --capture-range-end's windows (0: unlimited) */
	int end_kind;                  /* run_nsys.c's END_* */
	int memory;                    /* --cuda-memory-usage: -1 not given, 0 false, 1 true */
	int nccl;                      /* --nccl-trace: -1 not given, 0 none, 1 some */
	int export_sqlite;             /* --export=sqlite */
	int kill;                      /* --kill: -1 not given, 0 none, 1 a signal */
	const char *dash_d;            /* -d N (nsys's spelling of --duration) */
	char said[NSYS_MAX];           /* the options said once already, by index */
	unsigned long long said_trace; /* -t's tracers said once already, by bit */
	char trace[512];               /* -t's value in cuptrace's names */
	char output[4200];             /* -o's value with .ctr */
	char capture[600];             /* CUPTRACE_CAPTURE from --capture-range and -p */
	char repeat[32];               /* CUPTRACE_CAPTURE_REPEAT from --capture-range-end */
};

void nsys_init(struct nsys_opts *o);

/* Appends the nsys options to lo (getopt_long's table, values NSYS_CODE +
 * i) from lo[n]; returns the new count. */
size_t nsys_long_options(struct option *lo, size_t n);

/* Takes option c (NSYS_CODE + i, or one of NSYS_SHORTS, or 'c' / 'b')
 * with its value arg; for an option whose value may be left out (true or
 * false), the next argument when it is one of those (*optind moves on).
 * Returns 0 when taken, 1 when c is cuptrace's own (-c always|api|nvtx:X,
 * -b MB), 2 for a bad value (said). */
int nsys_take(struct nsys_opts *o, int c, const char *arg, int argc, char **argv, int *optind);

/* -t's value, in cuptrace's source names or nsys's tracer names: the
 * value in cuptrace's names (nsys's tracers cuptrace has not are said once
 * and left out), or NULL for a name of neither (said, as the library
 * says a bad value). */
const char *nsys_trace(struct nsys_opts *o, const char *v);

/* -o's pattern with ".ctr" when its name has not (nsys adds .nsys-rep;
 * its .nsys-rep or .qdrep becomes .ctr); a directory (ending in '/', or
 * existing) or a device stays as it is. */
const char *nsys_output(struct nsys_opts *o, const char *v);

/* After the options: --capture-range, -p and --capture-range-end into
 * *capture and *repeat (cuptrace's -c/--capture and --capture-repeat,
 * NULL when not given: cuptrace's own spelling wins, said once);
 * env_capture is CUPTRACE_CAPTURE of the environment. Says once what -d's
 * duration does not do (end CMD, as nsys does). 2 for a usage error
 * (said), else 0. */
int nsys_settle(struct nsys_opts *o, const char **capture, const char **repeat,
                const char *env_capture);

/* --cuda-memory-usage and --nccl-trace onto the effective sources (a
 * CT_SRC_* mask); 1 when they changed them. */
int nsys_sources(struct nsys_opts *o, unsigned *sources);

#endif
