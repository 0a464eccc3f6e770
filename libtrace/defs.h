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

/* Writer side: hands every queued definition to fn and empties the queue. */
void ct_defs_drain(void (*fn)(void *ctx, uint64_t h, const char *s, uint32_t len), void *ctx);

void ct_defs_fork_prepare(void);
void ct_defs_fork_parent(void);
/* In the child: the handles stay valid, definitions already written by the
 * parent are queued again for the child's own file. */
void ct_defs_fork_child(void);

#endif
