// SPDX-License-Identifier: MIT
/* One function per subcommand (tools/cmd_*.c). Exit status: 0 success,
 * 1 bad input, 2 usage error. */
#ifndef CT_CMD_H
#define CT_CMD_H

int cmd_run(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_dump(int argc, char **argv);
/* The inputs into an SQLite database (export.c; convert -o *.sqlite too). */
struct inputs;
int cmd_export_to(struct inputs *in, const char *outpath, const char *split);
/* Whether every name of the comma-separated list is a report of stats. */
int stats_known_reports(const char *list);

#include <stdio.h>

/* What every command does at the end of its options: 'h' (--help) prints
 * the help on stdout (exit 0); anything else (an unknown option, 0 for
 * no INPUT) prints it on stderr (exit 2). Returns the exit status. */
int cmd_usage(int c, void (*help)(FILE *));
/* Leaves the NCCL logs among in's inputs out, with a note saying why (logs
 * beside traces, which the reports asked for do not read). */
void cmd_drop_logs(struct inputs *in, const char *why);
/* 0 when a file can be made at path (or path's prefix, for stats -o): its
 * directory exists and takes files; else why not, in why. */
int cmd_out_dir(const char *path, char *why, size_t wlen);
/* The output name when -o is not given: one input's name (INPUT.ctr,
 * a directory's own name even when given as . or ..) with ext, else
 * cuptrace<ext>, in the current directory for . and ... */
void cmd_default_out(char *buf, size_t len, char **args, int n, const char *ext);
/* --align ARG into *align; -1 (said on stderr) when ARG is
 * neither none nor collectives. */
int cmd_align(const char *arg, int *align);
/* Puts the files on one timeline as --align says (hosts' offsets from the
 * collectives), saying the offsets on stderr; -1 when a file could not be
 * read again for it (said). */
struct inputs;
int cmd_place(struct inputs *in, int align);
/* -j/--jobs ARG (a number >= 1) into *jobs; -1 (said on stderr)
 * otherwise. */
int cmd_jobs(const char *arg, int *jobs);
/* --steps ARG (A-B or A) into opts; -1 (said on stderr) when it is not
 * that. */
struct stats_opts;
int cmd_steps(const char *arg, struct stats_opts *opts);

/* A piece of the job (--steps, --ranks, --window: model/piece.h): when
 * one was asked for, chooses and cuts it on inputs placed on one timeline
 * (stats/piece_slow.h). Returns the exit status for a failure (1, 2; said)
 * or 0. */
struct piece;
int cmd_piece(struct inputs *in, struct piece *p, int jobs);
/* The line that says what the piece kept and left out (nothing without
 * one), once the output is written. */
void cmd_piece_said(const struct inputs *in);

#endif
