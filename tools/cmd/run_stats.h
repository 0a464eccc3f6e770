// SPDX-License-Identifier: MIT
/* `cuptrace run --stats / --report`: run CMD, then summarise the trace
 * files it wrote. Inside a launcher's job (every rank runs `cuptrace run`)
 * one rank, the lowest that traces, waits for the other ranks' files and
 * summarises the job; the others print and write nothing. */
#ifndef CT_RUN_STATS_H
#define CT_RUN_STATS_H

struct ct_config;

/* Runs cmd, waits for it, writes X.sqlite beside each X.ctr of its own
 * (export_sqlite: nsys's --export=sqlite; in a job, every rank its own),
 * prints the reports (list: comma-separated names, NULL for all) and/or
 * writes the HTML report; returns CMD's exit status (126/127: it could
 * not be run). */
int run_then_stats(char **cmd, const struct ct_config *cfg, int stats, const char *list,
                   const char *report, int export_sqlite);

#endif
