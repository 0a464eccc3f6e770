// SPDX-License-Identifier: MIT
/* `stats --steps A-B` for the reports that do not follow steps themselves:
 * the time window of those steps in a file, and when an event started. */
#ifndef CT_STEP_WINDOW_H
#define CT_STEP_WINDOW_H

#include "read/inputs.h"

#include <stdint.h>

/* Reads file t to its end (the caller rewinds it) for its step marks
 * (cuptrace_step()): [*from, *to) is from the start of the first step in
 * [lo, hi] to the start of the first step after hi (or the file's end).
 * No step of [lo, hi] in the file: an empty window. Returns how many step
 * marks the file holds (0: it has no steps at all). */
uint64_t step_window(struct tfile *t, int64_t lo, int64_t hi, uint64_t *from, uint64_t *to);

/* "A-B" or "A" (step numbers, 0 <= A <= B) into *lo, *hi; -1 when it is
 * not that (stats --steps and the piece's --steps read it). */
int step_range_parse(const char *s, int64_t *lo, int64_t *hi);

/* The event's start on the tracer clock: its first timestamp field. */
uint64_t event_start(const struct ct_event *ev);

#endif
