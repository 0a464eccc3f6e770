// SPDX-License-Identifier: MIT
/* The life of the traced process as the library sees it: start, threads'
 * first events, fork, signals and exit. This module calls the other parts'
 * hooks in a fixed order; the parts do not call each other for it. */
#ifndef CT_LIFECYCLE_H
#define CT_LIFECYCLE_H

/* Reads the configuration, sets capture up, installs the fork handlers.
 * Safe from any thread; only the first call does work. The library's
 * constructor calls it. */
void ct_start(void);
/* Every entry point calls it first (NVTX, CUDA and NCCL injection, the
 * control API): ct_start, and, when capture runs on a timer, the writer
 * (a process that never enters starts no thread). */
void ct_enter(void);

/* cuptrace_leaving: the process is about to leave without its exit
 * handlers, where the library does not interpose _exit (loaded with
 * dlopen): the file is finished as the interposed _exit finishes it. Does
 * nothing where _exit is the library's own (it finishes the file itself). */
void ct_leaving(int status);

/* Set by a source that holds records outside the rings (CUPTI keeps
 * completed GPU records in its buffers until a flush): called when the
 * process is about to leave (a signal that ends it, _exit, exec), before
 * the writer's last flush, to move them into the rings. It may wait at most
 * timeout_ms and must be async-signal-safe (the caller may be a handler). */
extern void (*_Atomic ct_leaving_hook)(int timeout_ms);

/* Called by such a source once it is set up: the writer and the signal
 * handlers start now, as at a thread's first event, so that a signal that
 * comes before its first records still finds what it holds. */
void ct_source_started(void);

#endif
