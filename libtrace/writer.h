/* The writer thread: drains the rings, encodes, compresses and writes
 * blocks; puts a block on disk at least once a second. */
#ifndef CT_WRITER_H
#define CT_WRITER_H

#include <stdint.h>

/* Called by the writer thread about every 50 ms with the time: lifecycle.c
 * points it at capture's timer (CUPTRACE_DELAY, CUPTRACE_DURATION). */
extern void (*_Atomic ct_writer_tick_hook)(uint64_t now);

/* Starts the writer thread if it is not running (first event). */
void ct_writer_ensure(void);
/* Normal exit: final drain, footer, close. Joins the writer thread. */
void ct_writer_finish(void);
/* From a signal handler: asks the writer to write everything recorded so
 * far (and a footer when `footer`), waiting at most timeout_ms. */
void ct_writer_flush_from_signal(int footer, int timeout_ms);

void ct_writer_fork_prepare(void);
void ct_writer_fork_parent(void);
void ct_writer_fork_child(void);

#endif
