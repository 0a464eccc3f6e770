// SPDX-License-Identifier: MIT
/* The sink's spill files: chunks of pieces that are not their turn yet,
 * beyond what the sink keeps in memory (write/sink.h). Unlinked files beside
 * the output (the same filesystem, so the kernel copies the bytes into
 * place without them passing through the process), or in $TMPDIR for
 * stdout. Two of them, used in turn as a ring: new chunks go to one while
 * the other's are copied out; once all of those are, that one is written
 * over from its start. Written-over blocks stay allocated (and allocated
 * ahead, as the output's): on ext4 a write into new blocks cost 5 times
 * one into allocated blocks here (pwrite 449 against write 82 us per MB,
 * strace -c of a 16-file conversion). The disk holds about twice what
 * waits at the most. */
#ifndef CT_SINK_SPILL_H
#define CT_SINK_SPILL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct spill_file {
	int fd;		/* -1: not made yet; -2: could not be made */
	uint64_t end;	/* bytes reserved */
	uint64_t live;	/* reserved and not copied out yet */
	uint64_t alloc; /* blocks allocated (0 when it cannot) */
	int prealloc;
};

struct sink_spill {
	struct spill_file f[2];
	unsigned active; /* the one new chunks go to */
	uint64_t fsize_max; /* RLIMIT_FSIZE: a file never grows past it (SIGXFSZ) */
	int how;	 /* copying: 0 copy_file_range, 1 sendfile, 2 read and write */
	char *bounce;	 /* for read and write */
};

void spill_init(struct sink_spill *sp);
/* Under the sink's lock: room for n bytes at *off (which file and where);
 * 0 when there is no spill file (none could be made beside `beside`,
 * NULL for stdout). */
int spill_reserve(struct sink_spill *sp, const char *beside, size_t n, uint64_t *off);
/* Without the lock: the bytes into the room reserved. 0 or -1. */
int spill_write(struct sink_spill *sp, const void *buf, size_t n, uint64_t off);
/* The writer thread: n bytes at off appended to fd. 0 or -1 (errno). */
int spill_copy(struct sink_spill *sp, int fd, uint64_t off, size_t n);
/* The same from any file: n bytes of `from` at `in` appended to fd. */
int spill_copy_from(struct sink_spill *sp, int from, off_t in, int fd, size_t n);
/* Under the lock: the n bytes reserved at off were copied out (or given
 * up). */
void spill_copied(struct sink_spill *sp, uint64_t off, size_t n);
void spill_close(struct sink_spill *sp);

#endif
