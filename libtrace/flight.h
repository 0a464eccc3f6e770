// SPDX-License-Identifier: MIT
/* The flight recorder (CUPTRACE_FLIGHT=SECONDS, docs/flight-recorder.md):
 * the writer's blocks kept in memory, the last SECONDS of them within a
 * budget, instead of the file; the triggers that ask for them to be
 * written as a file (a dump); the job's marker file through which one
 * rank's dump makes every rank dump. The dump itself is the writer's
 * (writer_flight.c); everything here but ct_fl_ask runs on the writer. */
#ifndef CT_FLIGHT_H
#define CT_FLIGHT_H

#include <stddef.h>
#include <stdint.h>

/* Why a window is written (the header's CT_H_FLIGHT_CAUSE says it in words). */
enum ct_fl_cause {
	CT_FL_HANG = 0,   /* the hang watchdog fired */
	CT_FL_FATAL,      /* a signal ends the process */
	CT_FL_EXIT,       /* the process exits with a status other than 0 */
	CT_FL_CLEAN,      /* a clean exit, CUPTRACE_FLIGHT_EXIT=always */
	CT_FL_SIGNAL,     /* CUPTRACE_FLIGHT_SIGNAL arrived */
	CT_FL_API,        /* cuptrace_dump() */
	CT_FL_SLOW,       /* a step took more than CUPTRACE_FLIGHT_SLOW times the median */
	CT_FL_NCCL_ERR,   /* an NCCL call said an error (sources/nccl_err.c) */
	CT_FL_NCCL_ABORT, /* ncclCommAbort was called */
	CT_FL_JOB,        /* another rank dumped (its marker), or `cuptrace dump` */
	CT_FL_NCAUSES
};

/* A block kept: its compressed bytes (block header included), the tracer
 * clock times of its first record (as the writer saw it, within a tick)
 * and of its cut, the string id and definition count at its start (what
 * a window starting with it needs before it), and its events per kind
 * (kind << 24 | count, the kinds with any). */
struct ct_fl_block {
	uint8_t *data;
	size_t len;
	uint64_t t0, t1;
	uint32_t sid0;
	size_t defs0;
	uint32_t *counts;
	unsigned ncounts;
};

struct ct_fl_store {
	struct ct_fl_block *b; /* a ring of cap entries, n of them from head */
	size_t head, n, cap;
	size_t bytes;       /* data and counts held */
	size_t peak;        /* the most bytes held at once */
	uint64_t window_ns; /* CUPTRACE_FLIGHT */
	size_t budget;      /* CUPTRACE_FLIGHT_MB in bytes */
	uint64_t cut_ns;    /* how often a block is cut */
	/* The window is SECONDS of recording: the kept blocks' spans from
	 * their first record to their cut, summed (active), so that time in
	 * which the process recorded nothing (a rank waiting in a collective,
	 * one that never came) does not push its last moments out. */
	uint64_t active;
	uint64_t recorded; /* the same of every block ever kept, dropped ones too */
	int budget_last;        /* the last block dropped went for the budget */
	uint64_t dropped_bytes; /* dropped for the budget, all told */
};

extern struct ct_fl_store ct_fl;

/* Flight mode is on (from ct.cfg, set at the writer's start). */
int ct_fl_on(void);
/* Sets the store up from the configuration; the marker's directory and
 * the marker already there (from an earlier job: never a trigger). */
void ct_fl_init(void);
/* Keeps a block (data is taken over) recorded over [t0, t1]; then drops
 * the oldest blocks while the others still hold the window, or while over
 * the budget. -1: out of memory (data freed). */
int ct_fl_push(uint8_t *data, size_t len, uint64_t t0, uint64_t t1, uint32_t sid0, size_t defs0,
               const uint32_t *counts, unsigned ncounts);
void ct_fl_clear(void);

/* Asks for a dump: async-signal-safe, never waits (the writer is woken by
 * the caller). detail: a signal number, a status, a step number. */
void ct_fl_ask(enum ct_fl_cause c, uint64_t detail);
/* The same with the cause in words (the NCCL causes: which call, which
 * error); the first note of a cause is kept, as the cause fires once. Not
 * for signal handlers. */
void ct_fl_ask_note(enum ct_fl_cause c, uint64_t detail, const char *note);
/* Step number step ends now (cuptrace_step, the CUPTRACE_STEP_RANGE
 * range; under the capture lock): with CUPTRACE_FLIGHT_SLOW, a step over
 * that many times the median of the last 32 steps (once 5 are known) asks
 * for a dump. The first step seen has no start: it only starts the next. */
void ct_fl_step(long step);
/* On the writer: the cause of a dump to make now, or -1; its words in
 * why. Each cause but the repeatable ones (API, SIGNAL, JOB) fires once,
 * and no dump follows another within CT_FL_GAP_NS. now: tracer clock. */
int ct_fl_take(uint64_t now, char *why, size_t len);
/* On the writer, about once a second: a new marker in the job's
 * directory asks for a dump (through ct_fl_ask). */
void ct_fl_poll_marker(uint64_t now);
/* After this process's own trigger: the marker for the other ranks,
 * created when none is there or the one there is older than the gap. */
void ct_fl_fire_marker(const char *why);
/* A dump was written at now. */
void ct_fl_dumped(uint64_t now);

/* The marker's name in the job's output directory (cuptrace dump). */
#define CT_FL_MARKER ".cuptrace-dump"
/* No dump follows another of the same process within this. */
#define CT_FL_GAP_NS 2000000000ull

#endif
