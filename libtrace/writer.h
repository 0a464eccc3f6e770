// SPDX-License-Identifier: MIT
/* The writer thread: drains the rings, encodes, compresses and writes
 * blocks; puts a block on disk at least once a second. */
#ifndef CT_WRITER_H
#define CT_WRITER_H

#include <stdint.h>

/* Called by the writer thread about every 50 ms with the time: lifecycle.c
 * points it at capture's timer (CUPTRACE_DELAY, CUPTRACE_DURATION). */
/* Called on every writer pass; returns the capture state the timer switched
 * to there (0, 1), else -1: the writer records the switch. */
extern int (*_Atomic ct_writer_tick_hook)(uint64_t now);
/* Called by the writer thread when main ended by pthread_exit and no
 * thread of the program is left (orphan.h); lifecycle.c makes it exit(0),
 * and the destructor then finishes the file on the writer's thread. */
extern void (*_Atomic ct_writer_orphan_hook)(void);

/* Starts the writer thread if it is not running (first event). */
void ct_writer_ensure(void);
/* Normal exit: final drain, footer, close. Joins the writer thread. */
/* The footer's end: exit, detail CT_EXIT_STATUS_KNOWN | status when the
 * library saw it (format.h), else 0. */
void ct_writer_finish(uint32_t detail);
/* What ct_writer_flush asks for; each kind does BLOCK's work first, and
 * from FOOTER on what the kinds before it do (ROTATE apart). Of requests
 * served together the highest wins: a process that leaves (FOOTER and
 * after) ends its file there, rotation asked for or not. */
enum {
	CT_FLUSH_BLOCK = 1,  /* everything recorded so far into a block */
	CT_FLUSH_ROTATE = 2, /* ... then footer, fsync and close as at exit, and
	                      * later records go to a new file (cuptrace_rotate) */
	CT_FLUSH_FOOTER = 3, /* ... then a footer saying how the process ends */
	CT_FLUSH_SYNC = 4,   /* ... then fsync (exec: the file stays open) */
	CT_FLUSH_CLOSE = 5,  /* ... then close (_exit) */
};
/* Asks the writer to write everything recorded so far (ring records
 * committed before the call), as `what` says, with `how` and `detail`
 * (enum ct_end) in the footer, and waits at most timeout_ms. Returns 0
 * when served, -1 on timeout or when no writer runs. Async-signal-safe:
 * only atomics and semaphores. */
int ct_writer_flush(int what, uint32_t how, uint32_t detail, int timeout_ms);

/* After a served CT_FLUSH_ROTATE: the path of the file it finished, or
 * NULL when that window recorded nothing (no file) or the file failed.
 * Valid until the next rotation. */
/* Asks the writer for a flight recorder's dump (enum ct_fl_cause of
 * flight.h; detail: a signal, a status, a step): async-signal-safe, never
 * waits. -1 when flight mode is off. */
int ct_writer_flight_ask(int cause, uint64_t detail);
/* The same with the cause in words (ct_fl_ask_note); not for signal
 * handlers. */
int ct_writer_flight_note(int cause, uint64_t detail, const char *note);
/* Installs the handler of CUPTRACE_FLIGHT_SIGNAL (a dump), once (at load);
 * returns that signal, 0 when none. */
int ct_writer_flight_signal(void);

const char *ct_writer_rotated_path(void);

/* The trace file's path once the writer opened it (after a served
 * ct_writer_flush the caller sees it complete), else NULL. */
const char *ct_writer_path(void);

void ct_writer_fork_prepare(void);
void ct_writer_fork_parent(void);
void ct_writer_fork_child(void);

#endif
