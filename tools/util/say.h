// SPDX-License-Identifier: MIT
/* The tools' messages on stderr, one line each, written at once (the
 * ranks of a job share a terminal). Two speakers:
 *   say_cmd*: the running command about its options, its outputs and its
 *             run: "cuptrace stats: ...";
 *   say*:     the code every command shares (inputs, writers, the model),
 *             which says the same whichever command runs it: "cuptrace: ...".
 * A warning (something was left out or may be wrong; the command goes
 * on), a note (how the inputs were taken) or an error of the configuration
 * (worded as the injected library words it) says so after the prefix.
 * The newline is added; errno is kept. */
#ifndef CT_SAY_H
#define CT_SAY_H

#include <stdio.h>

/* The command say_cmd* names ("stats": "cuptrace stats: "), set where a
 * command is dispatched; none set, they say "cuptrace: ". */
void say_command(const char *name);
/* Not 0: no line is said (the ranks above 0 of an MPI job, util/mpirt.h). */
void say_mute(int on);
/* Not NULL: the lines go to f instead, muted or not (what a rank above 0
 * says, sent to rank 0 to be said there in file order); NULL: stderr. */
void say_into(FILE *f);

#define SAY_FMT __attribute__((format(printf, 1, 2)))

void say_cmd(const char *fmt, ...) SAY_FMT;         /* cuptrace CMD: */
void say_cmd_warning(const char *fmt, ...) SAY_FMT; /* cuptrace CMD: warning: */
void say_cmd_note(const char *fmt, ...) SAY_FMT;    /* cuptrace CMD: note: */

void say(const char *fmt, ...) SAY_FMT;         /* cuptrace: */
void say_warning(const char *fmt, ...) SAY_FMT; /* cuptrace: warning: */
void say_note(const char *fmt, ...) SAY_FMT;    /* cuptrace: note: */
void say_error(const char *fmt, ...) SAY_FMT;   /* cuptrace: error: */

#undef SAY_FMT

#endif
