// SPDX-License-Identifier: MIT
/* cuptrace control API. Self-contained: link with -lcuptrace, or resolve
 * the symbols with dlsym when the library is injected. Every call is safe
 * when tracing is off, and costs one load of a flag then. */
#ifndef CUPTRACE_H
#define CUPTRACE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Opens a capture window (CUPTRACE_CAPTURE=api). */
void cuptrace_start(void);
/* Closes the capture window; what was recorded is flushed to the file. */
void cuptrace_stop(void);
/* Marks a step boundary: drives CUPTRACE_STEPS and the per-step reports. */
void cuptrace_step(void);
/* A range on the calling thread (default NVTX domain, so it nests with NVTX
 * ranges); returns its nesting depth, 0 while capture is off. */
int cuptrace_range_push(const char *name);
int cuptrace_range_pop(void);
/* An instant event. */
void cuptrace_mark(const char *name);

/* Writes everything recorded so far into the trace file and waits for the
 * writer (at most 10 s); returns the file's path, or NULL when this process
 * is not tracing or has written nothing yet. */
const char *cuptrace_flush(void);

/* Ends the trace file at this point, as at exit (footer, fsync, close),
 * and goes on recording into a new file: the first file's name with
 * ".w2", ".w3", ... before its extension (traces/r0.ctr, then
 * traces/r0.w2.ctr), opened when the next event comes. Each file reads on
 * its own (header, strings, thread names complete). Recording threads
 * never wait; the caller waits as cuptrace_flush does (at most 10 s).
 * Returns the finished file's path (valid until the next rotation), or
 * NULL when this process is not tracing, recorded nothing since the last
 * rotation (no file), or the writer did not answer in time. Calls from
 * several threads at once may share one rotation. */
const char *cuptrace_rotate(void);

/* Flight mode (CUPTRACE_FLIGHT=SECONDS): writes the last SECONDS kept in
 * memory as a trace file (the first file's name, then ".w2", ".w3", ...
 * as for cuptrace_rotate), and makes every rank of the job do the same
 * (docs/flight-recorder.md). Never waits: the writer thread writes the
 * file within a tick (50 ms). At most one dump every 2 s. Asked before
 * this process recorded anything, it writes no file of its own but still
 * tells the job. Returns 0 when asked, -1 when this process is not
 * tracing in flight mode. */
int cuptrace_dump(void);

/* The process is about to leave without running its exit handlers (_exit,
 * Python's os._exit) with this status. Where the library is preloaded it
 * sees _exit itself and this does nothing; loaded with dlopen it does not,
 * and this finishes the trace file as _exit would there: everything
 * recorded so far, a footer saying _exit(status), fsync, close (waits at
 * most 5 s). What the process records after it is not written. */
void cuptrace_leaving(int status);

/* Is this process tracing (configuration valid, rank selected)? */
int cuptrace_enabled(void);

#ifdef __cplusplus
}
#endif

#endif
