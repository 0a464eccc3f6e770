// SPDX-License-Identifier: MIT
/* The output file of a conversion, shared by the worker threads. Workers
 * hand over chunks of whole events, each chunk tagged with the piece of
 * the document it belongs to; the sink writes the pieces in the order of
 * their keys, whatever order the workers finish them in, so that the file
 * does not depend on the number of workers or on their timing.
 *
 * Keys: SINK_KEY(unit, piece). A unit is a part of the document (the
 * head, each input file, the tail), its pieces are numbered from 0; the
 * piece flagged `last` at sink_done ends its unit, and the next unit's
 * piece 0 follows. The piece being written (the current one) goes
 * straight to the file; chunks of later pieces wait, in memory up to a
 * few MB in all and beyond that in a temporary file beside the output
 * (unlinked, copied into place in the kernel when their turn comes): the
 * memory stays flat however far a worker runs ahead.
 *
 * For .gz the worker compresses its own chunk (raw deflate ending on a
 * full flush) and the sink stitches the pieces into one gzip member, as
 * pigz does, so compression runs in parallel too. A thread of the sink's
 * writes the chunks while the workers go on (at most a few chunks of the
 * current piece wait). */
#ifndef CT_SINK_H
#define CT_SINK_H

#include <stddef.h>
#include <stdint.h>

struct sink;

#define SINK_KEY(unit, piece) ((uint64_t)(unit) << 32 | (uint32_t)(piece))

/* "-" is stdout; *.gz is compressed. A file is written under a temporary
 * name beside it and renamed when sink_close succeeds. NULL with errno set
 * on failure. The current piece at first: SINK_KEY(0, 0). */
struct sink *sink_open(const char *path);
/* A piece of an output that another process writes (the ranks of an MPI
 * job, docs/parallel-tools.md): written as sink_open writes, under a
 * temporary name beside path, but without gzip's header and trailer and
 * not renamed: sink_close_piece says its name, its bytes, and for .gz the
 * uncompressed bytes and their CRC-32, for sink_put_fd into the output. */
struct sink_piece {
	char *tmp; /* malloc'd; the file is the caller's to remove */
	uint64_t len, ulen;
	uint32_t crc;
};
struct sink *sink_open_piece(const char *path);
int sink_close_piece(struct sink *s, struct sink_piece *pc);
/* Thread-safe. The first len bytes of the file fd are piece `key`'s
 * chunk (ulen and crc: what they stand for uncompressed, with .gz): copied
 * in the kernel when its turn comes; the sink closes fd. */
void sink_put_fd(struct sink *s, uint64_t key, int fd, uint64_t len, uint32_t crc, uint64_t ulen);
/* The output is not to be written (a part of it failed elsewhere):
 * sink_close removes it and returns -1 with errno err. */
void sink_fail(struct sink *s, int err);
/* Thread-safe. Hands over the chunk buf[0..len) of piece `key` with the
 * buffer itself (cap bytes allocated): *buf and *cap come back as another,
 * empty buffer (perhaps NULL, 0), so chunks are never copied. A piece's
 * chunks must come from one thread at a time, in their order. */
void sink_put(struct sink *s, uint64_t key, char **buf, size_t *cap, size_t len);
/* Thread-safe. Piece `key` is complete (its chunks all handed over);
 * last: it ends its unit. Every piece of a unit up to its last must be
 * done for the ones after it to be written before sink_close. */
void sink_done(struct sink *s, uint64_t key, int last);
/* Before any sink_put: chunks go out as they come, whatever their key (the
 * caller hands the head first and the tail last): nothing waits or spills,
 * but the order of the pieces follows the workers' timing (convert
 * --any-order). */
void sink_any_order(struct sink *s);
/* Finishes the file: what still waits is written in key order; 0 once it
 * is complete under its name; -1 with errno when any write failed (the
 * temporary file is removed then). */
int sink_close(struct sink *s);
uint64_t sink_bytes(const struct sink *s);
/* Frees the calling thread's compressor (worker threads, before they end). */
void sink_thread_done(void);

#endif
