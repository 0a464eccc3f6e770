/* The sink's spill file: chunks of pieces that are not their turn yet,
 * beyond what the sink keeps in memory (out/sink.h). An unlinked file
 * beside the output (the same filesystem, so the kernel copies the bytes
 * into place without them passing through the process), or in $TMPDIR for
 * stdout. Emptied whenever all it held has been copied out. */
#ifndef CT_SINK_SPILL_H
#define CT_SINK_SPILL_H

#include <stddef.h>
#include <stdint.h>

struct sink_spill {
	int fd;        /* -1: not made yet; -2: could not be made */
	int how;       /* copying: 0 copy_file_range, 1 sendfile, 2 read and write */
	uint64_t end;  /* bytes reserved */
	uint64_t live; /* reserved and not copied out yet */
	char *bounce;  /* for read and write */
};

void spill_init(struct sink_spill *sp);
/* Under the sink's lock: room for n bytes at *off; 0 when there is no
 * spill file (none could be made beside `beside`, NULL for stdout). */
int spill_reserve(struct sink_spill *sp, const char *beside, size_t n, uint64_t *off);
/* Without the lock: the bytes into the room reserved. 0 or -1. */
int spill_write(struct sink_spill *sp, const void *buf, size_t n, uint64_t off);
/* The writer thread: n bytes at off appended to fd. 0 or -1 (errno). */
int spill_copy(struct sink_spill *sp, int fd, uint64_t off, size_t n);
/* Under the lock: n reserved bytes were copied out (or given up). */
void spill_copied(struct sink_spill *sp, size_t n);
void spill_close(struct sink_spill *sp);

#endif
