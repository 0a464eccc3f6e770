// SPDX-License-Identifier: MIT
/* The writer's state and the calls its parts make to each other; writer.h
 * is what the rest of the library sees of the writer. The parts, each
 * using only those below it (docs/LAYOUT.md):
 *   writer.c        the thread: start, the pass every tick, flush requests,
 *                   the pool's wakes and prefault, exit, fork
 *   writer_own.c    records the writer makes itself; the watchdog's pass
 *   writer_drain.c  a pass over every thread's ring into the block
 *   writer_flight.c the flight recorder: blocks kept in memory, dumps
 *   writer_file.c   the file: footer, fsync, close, rotation
 *   writer_block.c  the state; the block encoded, compressed and written
 */
#ifndef CT_WRITER_INT_H
#define CT_WRITER_INT_H

#include "enc.h"
#include "flushreq.h"
#include "output.h"
#include "tickmap.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

struct ct_defs_sink;
struct ct_rec;

struct ct_wr_state {
	pthread_mutex_t start_lock;
	_Atomic int started;
	pthread_t th;
	_Atomic int stop;
	_Atomic int gone; /* writer_main returned (ct_writer_finish waits for it) */
	int self_exit;	  /* the writer called exit(0): the program's threads were gone */
	struct ct_flushreq fr;	 /* flush requests (flushreq.h) */
	_Atomic uint64_t ending; /* how << 32 | detail, for the footer */
	sem_t wake;
	_Atomic int pool_wake; /* a producer took a chunk since the last pass */
	struct ct_out_file out; /* fd -1 until the first block (of each file) */
	/* Rotation (cuptrace_rotate): the number of the file being written
	 * (1, 2, ...), the first file's path (later ones are named after it),
	 * the file the last rotation finished ("" when none), and how much of
	 * the block is what a new file starts with (definitions, thread
	 * names): that alone makes no file. */
	unsigned part;
	char first[4096];
	char rotated[4096];
	size_t preamble;
	struct ct_enc enc;
	ZSTD_CCtx *cctx;
	uint8_t *zbuf;
	size_t zcap;
	uint64_t last_write;
	uint64_t drops[CT_NKINDS];
	int finished;
	int watch; /* the hang watchdog is on: NCCL records go past it */
	/* Records stamped with the TSC (clock.h) get their nanoseconds here;
	 * the map is anchored before a pass every ANCHOR_NS, or at once
	 * where the clocks parted (ct_tickmap_due). */
	struct ct_tickmap map;
	/* Per kind, its TS fields after the first (bit i: field i; a
	 * torch_op's end): in a record stamped with the TSC they hold ticks
	 * too, and are mapped with f[0] (ct_wr_ts_fields fills it). */
	uint32_t more_ts[CT_NKINDS];
	/* Flight mode (flight.h): blocks go to the store, not the file,
	 * except while a dump writes its window (dumping). The block being
	 * built got its first records after fl_t0, the tick before the one
	 * that found it not empty (0: none yet; fl_tick: the last tick), and began with
	 * string id fl_sid0, fl_defs0 definitions fetched and the event
	 * counts fl_events. */
	int flight, dumping;
	uint64_t fl_t0, fl_tick;
	uint32_t fl_sid0;
	size_t fl_defs0;
	uint64_t fl_events[CT_NKINDS];
};

extern struct ct_wr_state ct_wr;

/* The block being built: a record into it (on the current thread of the
 * encoder), and the block compressed and written to the file, opened with
 * the first block of each file. */
void ct_wr_encode(const struct ct_rec *r);
void ct_wr_write_block(void);
/* Where pending definitions go (ct_defs_drain): into the block. */
extern const struct ct_defs_sink ct_wr_defs_sink;

/* One pass over every thread's ring, into the block (written whenever it
 * reaches its size); returns the number of records taken. Before it, the
 * TSC map's anchor (now when force, else when due). */
size_t ct_wr_cycle(void);
void ct_wr_anchor(int force);
/* Fills ct_wr.more_ts from the schemas, before the writer starts. */
void ct_wr_ts_fields(void);

/* The flight recorder: its start (with the writer), its part of each
 * tick (blocks cut, the marker polled, triggers served by a dump), and
 * the process's end (a dump when the end asks for one). */
void ct_wr_flight_start(void);
void ct_wr_flight_tick(uint64_t now, unsigned ticks);
void ct_wr_flight_end(uint64_t end);
/* The block kept in the store (writer_block.c), and the next one begun. */
void ct_wr_flight_keep(const uint8_t *z, size_t zlen);
void ct_wr_flight_begin_block(void);

/* The file: its footer (end: how << 32 | detail, enum ct_end), fsync,
 * close, and a rotation (cuptrace_rotate) to a new file. */
void ct_wr_write_footer(uint64_t end);
void ct_wr_sync_file(void);
void ct_wr_close_file(void);
void ct_wr_rotate(void);

/* Records the writer makes itself: one of n fields on thread tid, and the
 * hang watchdog's pass (its hang_suspected records, flushed). */
void ct_wr_own_record(unsigned kind, int64_t tid, const uint64_t *f, unsigned n);
void ct_wr_watch_pass(void);

#endif
