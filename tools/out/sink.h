/* The output file of a conversion, shared by the worker threads. Workers
 * hand over chunks of whole events; the sink appends them in any order
 * (Chrome JSON does not care about event order). For .gz the worker
 * compresses its own chunk (raw deflate ending on a full flush) and the
 * sink stitches the pieces into one gzip member, as pigz does, so
 * compression runs in parallel too. A thread of the sink's writes the
 * chunks while the workers go on (at most a few chunks wait). */
#ifndef CT_SINK_H
#define CT_SINK_H

#include <stddef.h>
#include <stdint.h>

struct sink;

/* "-" is stdout; *.gz is compressed. A file is written under a temporary
 * name beside it and renamed when sink_close succeeds. NULL with errno set
 * on failure. */
struct sink *sink_open(const char *path);
/* Thread-safe. Hands over the chunk buf[0..len) with the buffer itself
 * (cap bytes allocated): *buf and *cap come back as another, empty buffer
 * (perhaps NULL, 0), so chunks are never copied. */
void sink_put(struct sink *s, char **buf, size_t *cap, size_t len);
/* Finishes the file: 0 once it is complete under its name; -1 with errno
 * when any write failed (the temporary file is removed then). */
int sink_close(struct sink *s);
uint64_t sink_bytes(const struct sink *s);
/* Frees the calling thread's compressor (worker threads, before they end). */
void sink_thread_done(void);

#endif
