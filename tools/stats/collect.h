// SPDX-License-Identifier: MIT
/* Runs reports over the inputs: the one driver behind `cuptrace stats`
 * and `cuptrace report`, so that both show the same tables. */
#ifndef CT_COLLECT_H
#define CT_COLLECT_H

#include "stats/stats.h"

/* Receives each table (to free it); rep is the index into the report
 * list, -1 for the table of the hosts' clock offsets. */
typedef void (*collect_fn)(void *ctx, int rep, struct table *t);

/* Aligns clocks (align: ALIGN_* of job/clocks.h), reads every file once
 * through the model into reports r[0..n) (files shared out to `jobs`
 * threads, -j: 0 for every CPU; the tables are the same for any number),
 * feeds them the NCCL logs and hands out their tables in order, the
 * clocks table first (more than one host). steps_arg is --steps' text.
 * The inputs stay open (headers, counts and status can be read after).
 * Returns 0, 1 when a file was corrupt (the tables still come), or -1
 * when --steps matched no file (said on stderr; no table comes). */
int reports_collect(struct inputs *in, const struct report *const *r, size_t n,
		    const struct stats_opts *opts, int align, int jobs, const char *steps_arg,
		    collect_fn fn, void *ctx);

/* Parses --steps A-B (or A) into opts; -1 when malformed. */
int stats_parse_steps(struct stats_opts *o, const char *s);

#endif
