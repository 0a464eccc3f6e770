// SPDX-License-Identifier: MIT
/* String handles: registered NVTX strings and domain names. A handle is
 * returned to the program only after its definition is queued here, and the
 * writer fetches queued definitions before it needs them, so every event
 * that names a handle finds its text in the file before it. */
#ifndef CT_DEFS_H
#define CT_DEFS_H

#include <stddef.h>
#include <stdint.h>

/* A new handle for the text; 0 on failure. */
uint64_t ct_handle_new(const char *s, size_t len);
/* The handle of a domain name; the same name gives the same handle. */
uint64_t ct_domain_handle(const char *name, size_t len);

struct ct_rec;

/* A record that later events of any thread depend on (a category name):
 * it reaches the file before any record the writer takes after this call
 * returns. tid is the thread it is filed under. */
void ct_defs_add_record(int tid, const struct ct_rec *r);

/* Writer side: hands every queued definition to the callbacks, in the
 * order they were made, and empties the queue. */
struct ct_defs_sink {
	void (*handle)(void *ctx, uint64_t h, const char *s, uint32_t len);
	void (*record)(void *ctx, int tid, const struct ct_rec *r);
	void *ctx;
};
void ct_defs_drain(const struct ct_defs_sink *sink);
/* How many definitions the writer has fetched so far (on the writer, no
 * lock); and the first upto
 * of them handed to the callbacks again, the queue unchanged (a flight
 * window's first block: those of the blocks it dropped). */
size_t ct_defs_drained(void);
void ct_defs_each(size_t upto, const struct ct_defs_sink *sink);
/* The process is leaving: the writer waits at most 200 ms for the lock. */
void ct_defs_impatient(void);
/* Queues every definition again (the writer lost a block that held some). */
void ct_defs_replay(void);
/* Are definitions waiting? (one atomic load: checked before every record) */
int ct_defs_pending(void);

void ct_defs_fork_prepare(void);
void ct_defs_fork_parent(void);
/* In the child: the handles stay valid, definitions already written by the
 * parent are queued again for the child's own file. */
void ct_defs_fork_child(void);

#endif
