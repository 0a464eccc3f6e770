// SPDX-License-Identifier: MIT
#include "writer.h"
#include "clock.h"
#include "enc.h"
#include "io.h"
#include "varint.h"
#include "defs.h"
#include "flushreq.h"
#include "log.h"
#include "orphan.h"
#include "output.h"
#include "thread.h"
#include "tickmap.h"
#include "tnames.h"
#include "trace.h"
#include "watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define BLOCK_TARGET (1u << 20)
/* Ring bytes drained between checks of the block size. Encoded records
 * are smaller than ring records (strings become references), so a block
 * stays near BLOCK_TARGET and far below CT_BLOCK_RAW_MAX, which readers
 * reject beyond. */
#define DRAIN_STEP (1u << 20)
#define FLUSH_NS 500000000ull /* a block reaches the disk at least this often */
#define TICK_MS 50
#define ORPHAN_TICKS 4 /* ct_program_gone every 200 ms */
#define FINISH_MS 10000 /* the most exit waits for the writer's last pass */
#define STRTAB_MAX (4u << 20)
/* zstd level 1: the blocks are mostly timestamp planes (the items
 * compress to almost nothing), where level 6's lazy search costs the writer
 * ~12 ns per NVTX event and ~60 ns per GPU record for files 5-10 % smaller
 * (bench/JOURNAL.md, "The writer's cost per event"). */
#define ZSTD_LEVEL 1
#define ANCHOR_NS 20000000ull

int (*_Atomic ct_writer_tick_hook)(uint64_t now);
void (*_Atomic ct_writer_orphan_hook)(void);

static struct {
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
} writer_st = {.start_lock = PTHREAD_MUTEX_INITIALIZER, .out.fd = -1, .part = 1};

/* A block that never reaches the file takes its string definitions with
 * it: start the string table over and queue every definition again, so
 * later blocks never refer to strings the file does not hold. */
static void discard_block(void)
{
	ct_enc_forget_strings(&writer_st.enc);
	ct_defs_replay();
	ct_enc_new_block(&writer_st.enc);
}

static void write_block(void)
{
	if (writer_st.enc.len <= writer_st.preamble)
		return;
	if (writer_st.out.fd == -1) {
		writer_st.preamble = 0;
		if (writer_st.part == 1)
			writer_st.out.fd = ct_output_open(writer_st.out.path, sizeof writer_st.out.path);
		else
			writer_st.out.fd = ct_output_open_part(writer_st.first, writer_st.part,
			                                       writer_st.out.path, sizeof writer_st.out.path);
		if (!ct_output_begin(&writer_st.out, writer_st.part))
			ct_info("writing %s", writer_st.out.path);
		else
			writer_st.out.fd = -2;
	}
	if (writer_st.out.fd < 0) {
		ct_enc_new_block(&writer_st.enc);
		return;
	}
	size_t raw_len;
	const uint8_t *raw = ct_enc_block(&writer_st.enc, &raw_len);
	if (!raw) {
		ct_once(boom, CT_LOG_WARN, "out of memory assembling a block; events lost");
		discard_block();
		return;
	}
	size_t bound = ZSTD_compressBound(raw_len) + 12;
	if (bound > writer_st.zcap) {
		uint8_t *z = realloc(writer_st.zbuf, bound);
		if (!z) {
			ct_once(zoom, CT_LOG_WARN,
			        "out of memory compressing a block; events lost");
			discard_block();
			return;
		}
		writer_st.zbuf = z, writer_st.zcap = bound;
	}
	size_t z =
	    ZSTD_compress2(writer_st.cctx, writer_st.zbuf + 12, writer_st.zcap - 12, raw, raw_len);
	if (ZSTD_isError(z)) {
		ct_once(zerr, CT_LOG_WARN, "compression failed (%s); events lost",
		        ZSTD_getErrorName(z));
		discard_block();
		return;
	}
	uint32_t h[3] = {CT_BLOCK_MAGIC, (uint32_t)z, (uint32_t)raw_len};
	memcpy(writer_st.zbuf, h, 12);
	ct_output_write(&writer_st.out, writer_st.zbuf, z + 12); /* says why it failed */
	ct_enc_new_block(&writer_st.enc);
	writer_st.last_write = ct_now();
}

static void encode(const struct ct_rec *r)
{
	if (ct_enc_record(&writer_st.enc, r))
		ct_once(badrec, CT_LOG_WARN, "a record could not be encoded (kind %u)", r->kind);
}

static void on_def_handle(void *ctx, uint64_t h, const char *s, uint32_t len)
{
	(void)ctx;
	ct_enc_handle(&writer_st.enc, h, s, len);
}

static void on_def_record(void *ctx, int tid, const struct ct_rec *r)
{
	(void)ctx;
	if (writer_st.watch && r->kind == CT_EV_NCCL_COMM)
		ct_watch_record(tid, r);
	int64_t cur = writer_st.enc.tid;
	ct_enc_thread(&writer_st.enc, tid);
	encode(r);
	if (cur >= 0)
		ct_enc_thread(&writer_st.enc, cur);
}

static const struct ct_defs_sink defs_sink = {on_def_handle, on_def_record, NULL};

/* Drops of the slot's thread since the last report: DROPS items carry the
 * current thread's own cumulative count. */
static void report_drops(struct ct_thread *t)
{
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		uint64_t d = atomic_load_explicit(&t->drops[k], memory_order_relaxed);
		if (d != t->drops_reported[k]) {
			writer_st.drops[k] += d - t->drops_reported[k];
			t->drops_reported[k] = d;
			ct_enc_drops(&writer_st.enc, k, d - t->drops_base[k]);
		}
	}
}

/* A thread took the slot over from one that exited (thread.c): its
 * records follow. Drops counted so far go to the one before (the split
 * is as of now, not exact). */
static void new_owner(struct ct_thread *t, int tid)
{
	report_drops(t);
	memcpy(t->drops_base, t->drops_reported, sizeof t->drops_base);
	t->wtid = tid;
	ct_enc_thread(&writer_st.enc, tid);
}

/* A definition made before a record was written is visible by the time the
 * writer reads that record, so fetching pending definitions first puts
 * every definition ahead of the records that use it. */
static void on_record(void *ctx, const struct ct_rec *r)
{
	if (r->reserved & CT_REC_TICKS) {
		/* In place, before anything reads it: the record is ours until
		 * ct_drain_max's release of `consumed` hands the chunk back. */
		struct ct_rec *w = (struct ct_rec *)r;
		w->f[F_TS] = ct_tickmap_ns(&writer_st.map, w->f[F_TS]);
	}
	if (r->kind == CT_K_THREAD) {
		new_owner(ctx, (int)r->f[0]);
		return;
	}
	if (ct_defs_pending())
		ct_defs_drain(&defs_sink);
	if (r->kind == CT_EV_THREAD_NAME)
		ct_tnames_keep(writer_st.enc.tid, r);
	if (writer_st.watch && r->kind >= CT_EV_NCCL_FIRST && r->kind < CT_EV_NCCL_END)
		ct_watch_record((int)writer_st.enc.tid, r);
	encode(r);
}

/* A (tick, ns) anchor for the map before a pass: the records this pass
 * takes were mostly stamped before it, and are interpolated. */
static void anchor(int force)
{
	if (!ct_tick_flag)
		return;
	uint64_t tick, ns;
	ct_clock_pair(&tick, &ns);
	if (force || ct_tickmap_due(&writer_st.map, tick, ns, ANCHOR_NS)) {
		int64_t j = ct_tickmap_anchor(&writer_st.map, tick, ns);
		if (j)
			ct_debug("the TSC ran %.3f s %s CLOCK_MONOTONIC since the last anchor "
				 "(a suspend?): timestamps step there",
				 (double)(j < 0 ? -j : j) / 1e9, j > 0 ? "ahead of" : "behind");
	}
}

/* One pass over every thread. Returns the number of records taken. */
static size_t cycle(void)
{
	size_t n = 0;
	ct_defs_drain(&defs_sink);
	for (struct ct_thread *t = atomic_load(&ct_threads); t; t = t->next) {
		int st = atomic_load_explicit(&t->state, memory_order_acquire);
		/* An exited thread's last chunks come back to the pool, unless
		 * a new thread took the slot over first (then it is ACTIVE or
		 * CLAIMING, and read on as a live one). */
		if (st == CT_T_EXITED &&
		    atomic_compare_exchange_strong_explicit(&t->state, &st, CT_T_DRAINING,
							    memory_order_acquire, memory_order_acquire))
			st = CT_T_DRAINING;
		if (st != CT_T_ACTIVE && st != CT_T_DRAINING)
			continue;
		/* tid0 stays put until the slot is FREE again (adopters announce
		 * themselves in the ring); t->tid is the live owner's. */
		if (t->wtid < 0)
			t->wtid = t->tid0;
		ct_enc_thread(&writer_st.enc, t->wtid);
		/* At most one pool's worth per thread and cycle: a thread that
		 * records faster than we encode must not keep us from the other
		 * threads, from flush requests or from exiting. */
		size_t got, taken = 0, budget = (size_t)ct_pool.nchunks * CT_CHUNK_SIZE;
		do {
			n += ct_drain_max(t, on_record, t, st == CT_T_DRAINING, DRAIN_STEP, &got);
			taken += got;
			if (ct_enc_size(&writer_st.enc) >= BLOCK_TARGET)
				write_block();
		} while (got >= DRAIN_STEP && taken < budget);
		report_drops(t);
		/* An exited thread's slot is free only once its last chunk is
		 * back in the pool; until then it can still be taken over. */
		if (st == CT_T_DRAINING)
			atomic_store_explicit(&t->state, t->rhead < 0 ? CT_T_FREE : CT_T_EXITED,
					      memory_order_release);
		if (ct_enc_size(&writer_st.enc) >= BLOCK_TARGET)
			write_block();
	}
	return n;
}

static void sync_file(void);

/* A record the writer makes itself (times in ns already), on thread tid. */
static void own_record(unsigned kind, int64_t tid, const uint64_t *f, unsigned n)
{
	_Static_assert(F_HANG_N <= 8 && F_CAPTURE_N <= 8, "the kinds it makes fit buf");
	uint64_t buf[1 + 8];
	struct ct_rec *r = (struct ct_rec *)buf;
	r->size = ct_rec_size(n, 0);
	r->kind = (uint16_t)kind;
	r->reserved = 0;
	memcpy(r->f, f, n * sizeof *f);
	int64_t cur = writer_st.enc.tid;
	ct_enc_thread(&writer_st.enc, tid);
	encode(r);
	if (cur >= 0)
		ct_enc_thread(&writer_st.enc, cur);
}

/* The watchdog's pass, after the rings were drained: each operation in
 * flight too long gets its hang_suspected record (on the thread that
 * started it), then everything held goes to disk, then one line each. */
#define WATCH_LINES 8
static void watch_pass(void)
{
	struct ct_watch_hit hit[WATCH_LINES];
	size_t n = 0;
	uint64_t now = ct_now();
	while (n < WATCH_LINES && ct_watch_due(now, &hit[n])) {
		uint64_t f[F_HANG_N] = {
		    [F_HANG_TS] = now,
		    [F_HANG_CTX] = hit[n].ctx,
		    [F_HANG_TASK] = hit[n].task,
		    [F_HANG_HAS_SEQ] = (uint64_t)hit[n].has_seq,
		    [F_HANG_SEQ] = hit[n].seq,
		    [F_HANG_FUNC] = hit[n].func,
		    [F_HANG_IN_FLIGHT] = hit[n].in_flight,
		};
		own_record(CT_EV_HANG, hit[n].tid, f, F_HANG_N);
		n++;
	}
	if (!n)
		return;
	write_block();
	sync_file();
	for (size_t i = 0; i < n; i++)
		ct_log_notice("%s; trace flushed%s", hit[i].line,
		              writer_st.out.fd >= 0 ? "" : " (but the file could not be written)");
}

/* end: how << 32 | detail (enum ct_end) */
static void write_footer(uint64_t end)
{
	uint64_t rt, mono;
	ct_clock_anchor(&rt, &mono);
	if (writer_st.enc.len <= writer_st.preamble && writer_st.out.fd == -1)
		return; /* nothing was ever recorded (in this file): no file */
	writer_st.enc.trunc_str = atomic_load_explicit(&ct.truncated_strings, memory_order_relaxed);
	/* The footer in a block of its own, found through the trailer. */
	write_block();
	writer_st.enc.end_how = (uint32_t)(end >> 32);
	writer_st.enc.end_detail = (uint32_t)end;
	uint64_t nr = atomic_load_explicit(&ct.nccl_rank, memory_order_relaxed);
	writer_st.enc.nccl_nranks = (uint32_t)(nr >> 32);
	writer_st.enc.nccl_rank = (uint32_t)nr;
	ct_enc_footer(&writer_st.enc, writer_st.drops, rt, mono);
	uint64_t at = writer_st.out.off;
	write_block();
	ct_output_trailer(&writer_st.out, at);
}

static void sync_file(void)
{
	ct_output_sync(&writer_st.out);
}

static void close_file(void)
{
	ct_output_close(&writer_st.out);
}

/* A thread's name at the head of a new file, as of the rotation. */
static void replay_name(int64_t tid, struct ct_rec *r)
{
	r->f[F_THREAD_NAME_TS] = ct_now();
	int64_t cur = writer_st.enc.tid;
	ct_enc_thread(&writer_st.enc, tid);
	encode(r);
	if (cur >= 0)
		ct_enc_thread(&writer_st.enc, cur);
}

/* A window ended (cuptrace_rotate): the file is finished as at exit
 * (footer, fsync, close) and what comes next goes to a new file, opened
 * with its first block. Each file stands alone: the string table starts
 * over, every definition and thread name goes in again, event and drop
 * counts start from zero. Recording threads never wait: their rings are
 * drained into the old file up to here (cycle), the rest into the new. */
static void rotate(void)
{
	writer_st.rotated[0] = 0;
	if (writer_st.out.fd == -2 || (writer_st.out.fd == -1 && writer_st.enc.len <= writer_st.preamble))
		return; /* tracing failed, or nothing since the last file: no file */
	write_footer((uint64_t)CT_END_ROTATE << 32 | writer_st.part);
	sync_file();
	if (writer_st.out.fd < 0)
		return; /* the file failed (said so); tracing stops */
	snprintf(writer_st.rotated, sizeof writer_st.rotated, "%s", writer_st.out.path);
	if (writer_st.part == 1)
		snprintf(writer_st.first, sizeof writer_st.first, "%s", writer_st.out.path);
	close_file();
	writer_st.out.fd = -1;
	writer_st.part++;
	memset(writer_st.enc.events, 0, sizeof writer_st.enc.events);
	memset(writer_st.drops, 0, sizeof writer_st.drops);
	ct_threads_rebase_drops();
	ct_enc_forget_strings(&writer_st.enc);
	ct_enc_new_block(&writer_st.enc);
	ct_defs_replay();
	ct_defs_drain(&defs_sink);
	ct_tnames_each(replay_name);
	writer_st.preamble = writer_st.enc.len;
}

/* The end of the file: what the rings hold, the footer, fsync, close. */
static void last_pass(void)
{
	anchor(1);
	cycle();
	write_footer(atomic_load(&writer_st.ending));
	sync_file();
	close_file();
}

/* Chunks the writer keeps mapped ahead of the producers (ct_pool_prefault). */
#define PREFAULT_AHEAD 4

/* ct_pool_taken_hook: a producer took a chunk. The writer comes to drain,
 * so that chunks go back to the pool (most recently freed first) while
 * they are warm, instead of a producer taking ever new ones between two
 * of its ticks; one wake at a time. */
static void pool_taken(void)
{
	if (!atomic_exchange_explicit(&writer_st.pool_wake, 1, memory_order_relaxed))
		sem_post(&writer_st.wake);
}

/* Waits for the next tick, a flush request or stop. Wakes from producers
 * that took chunks meanwhile are served on the way (the rings drained,
 * pages mapped ahead) without the tick's other work. */
static void wait_tick(void)
{
	struct timespec ts = ct_deadline(TICK_MS);
	for (;;) {
		if (sem_clockwait(&writer_st.wake, CLOCK_MONOTONIC, &ts)) {
			if (errno == EINTR)
				continue;
			return; /* the tick */
		}
		if (!atomic_exchange_explicit(&writer_st.pool_wake, 0, memory_order_relaxed) ||
		    atomic_load(&writer_st.stop) || ct_flushreq_pending(&writer_st.fr))
			return;
		cycle();
		ct_pool_prefault(PREFAULT_AHEAD);
	}
}

static void *writer_main(void *arg)
{
	(void)arg; /* every signal blocked: ct_writer_ensure created it so */
	ct_thread_mark_internal();
	prctl(PR_SET_NAME, "cuptrace-write", 0, 0, 0);
	writer_st.last_write = ct_now();
	ct_pool_prefault(PREFAULT_AHEAD);
	atomic_store(&ct_pool_taken_hook, pool_taken);
	for (unsigned ticks = 1; !atomic_load(&writer_st.stop); ticks++) {
		wait_tick();
		/* main left by pthread_exit and the program's threads are gone:
		 * glibc's last thread would call exit(0), but that is us now */
		void (*orphaned)(void) = atomic_load(&ct_writer_orphan_hook);
		if (orphaned && ticks % ORPHAN_TICKS == 0 && ct_program_gone()) {
			writer_st.self_exit = 1;
			orphaned(); /* exit(0), as glibc's last thread */
		}
		uint32_t seq;
		int req = ct_flushreq_take(&writer_st.fr, &seq, CT_FLUSH_BLOCK);
		uint64_t now = ct_now();
		int (*tick)(uint64_t) = atomic_load(&ct_writer_tick_hook);
		int sw = tick ? tick(now) : -1;
		anchor(req != 0);
		cycle();
		if (sw >= 0) /* the capture timer switched here: on the main thread, as a
			      * program's own switch is on its thread (the tools read windows) */
			own_record(
			    CT_EV_CAPTURE, (int64_t)ct.pid,
			    (uint64_t[]){[F_CAPTURE_TS] = now, [F_CAPTURE_ON] = (uint64_t)sw},
			    F_CAPTURE_N);
		if (writer_st.watch)
			watch_pass();
		if (req >= CT_FLUSH_FOOTER) {
			writer_st.rotated[0] = 0; /* the process leaves: no rotation */
			write_footer(atomic_load(&writer_st.ending));
		} else if (req == CT_FLUSH_ROTATE) {
			rotate();
		} else if (req || (writer_st.enc.len && now - writer_st.last_write >= FLUSH_NS)) {
			write_block();
		}
		if (req >= CT_FLUSH_SYNC)
			sync_file();
		if (req >= CT_FLUSH_CLOSE)
			close_file();
		if (req)
			ct_flushreq_served(&writer_st.fr, seq);
		ct_pool_prefault(PREFAULT_AHEAD);
	}
	last_pass();
	atomic_store(&writer_st.gone, 1);
	sem_post(&writer_st.fr.flushed);
	return NULL;
}

void ct_writer_ensure(void)
{
	if (atomic_load_explicit(&writer_st.started, memory_order_acquire))
		return;
	pthread_mutex_lock(&writer_st.start_lock);
	if (!atomic_load(&writer_st.started) && !writer_st.finished) {
		writer_st.cctx = ZSTD_createCCtx();
		if (!writer_st.cctx || ct_enc_init(&writer_st.enc, STRTAB_MAX)) {
			ct_log_error(
			    "out of memory starting the writer; this process is not traced");
			ct.active = 0;
			goto out;
		}
		ZSTD_CCtx_setParameter(writer_st.cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
		if (ct_tick_flag) {
			/* From the anchor read before the first record. */
			uint64_t tick, ns, rate;
			ct_clock_start(&tick, &ns, &rate);
			ct_tickmap_init(&writer_st.map, tick, ns, rate);
		}
		writer_st.watch = ct_watch_on();
		ZSTD_CCtx_setParameter(writer_st.cctx, ZSTD_c_checksumFlag, 1);
		sem_init(&writer_st.wake, 0, 0);
		ct_flushreq_init(&writer_st.fr);
		/* Plain attributes, and every signal blocked from its first
		 * instruction: no signal of the program's is ever run on it. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		int bad = pthread_create(&writer_st.th, NULL, writer_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (bad) {
			ct_log_error("cannot start the writer thread; this process is not traced");
			ct.active = 0;
			goto out;
		}
		atomic_store_explicit(&writer_st.started, 1, memory_order_release);
	}
out:
	pthread_mutex_unlock(&writer_st.start_lock);
}

void ct_writer_finish(uint32_t detail)
{
	pthread_mutex_lock(&writer_st.start_lock);
	int started = atomic_load(&writer_st.started);
	writer_st.finished = 1;
	pthread_mutex_unlock(&writer_st.start_lock);
	if (!started)
		return;
	atomic_store(&writer_st.ending, (uint64_t)CT_END_EXIT << 32 | detail);
	if (pthread_equal(pthread_self(), writer_st.th)) {
		if (writer_st.self_exit) /* the exit(0) above: the writer ends here */
			last_pass();
		return;
	}
	ct_defs_impatient();
	atomic_store(&writer_st.stop, 1);
	sem_post(&writer_st.wake);
	/* Bounded: the writer may wait for a lock that the thread now
	 * leaving holds (a signal handler that calls exit() interrupted it
	 * inside an NVTX call); the process then leaves without its footer
	 * rather than never. */
	if (ct_flushreq_wait_flag(&writer_st.fr, &writer_st.gone, FINISH_MS))
		pthread_join(writer_st.th, NULL);
	else
		ct_log_error("the writer did not finish within %d s; the trace ends without footer",
			     FINISH_MS / 1000);
	atomic_store(&writer_st.started, 0);
}

int ct_writer_flush(int what, uint32_t how, uint32_t detail, int timeout_ms)
{
	if (!atomic_load(&writer_st.started) || pthread_equal(pthread_self(), writer_st.th))
		return -1;
	int saved = errno;
	if (what >= CT_FLUSH_FOOTER) {
		atomic_store(&writer_st.ending, (uint64_t)how << 32 | detail);
		ct_defs_impatient();
	}
	int rc = ct_flushreq_ask(&writer_st.fr, what, &writer_st.wake, timeout_ms);
	errno = saved;
	return rc;
}

const char *ct_writer_rotated_path(void)
{
	return writer_st.rotated[0] ? writer_st.rotated : NULL;
}

const char *ct_writer_path(void)
{
	return writer_st.out.fd >= 0 ? writer_st.out.path : NULL;
}

void ct_writer_fork_prepare(void)
{
	pthread_mutex_lock(&writer_st.start_lock);
}

void ct_writer_fork_parent(void)
{
	pthread_mutex_unlock(&writer_st.start_lock);
}

void ct_writer_fork_child(void)
{
	/* The writer thread does not exist here; its file is the parent's. The
	 * child starts its own writer and file on its first event. */
	/* The parent's writer may have been in the middle of changing these:
	 * leave them (copy-on-write pages, untouched) rather than free them. */
	memset(&writer_st.enc, 0, sizeof writer_st.enc);
	writer_st.cctx = NULL;
	writer_st.zbuf = NULL, writer_st.zcap = 0;
	ct_output_drop(&writer_st.out);
	writer_st.part = 1;
	writer_st.preamble = 0;
	writer_st.first[0] = writer_st.rotated[0] = 0;
	ct_tnames_fork_child();
	memset(writer_st.drops, 0, sizeof writer_st.drops);
	atomic_store(&ct.nccl_rank, 0); /* the parent's communicators are not the child's */
	atomic_store(&writer_st.started, 0);
	atomic_store(&writer_st.stop, 0);
	atomic_store(&writer_st.gone, 0);
	writer_st.self_exit = 0;
	ct_flushreq_reset(&writer_st.fr);
	atomic_store(&writer_st.ending, 0);
	writer_st.finished = 0;
	/* The child's records are stamped after this: a map of its own from
	 * a new anchor, with the rate the parent measured. */
	ct_clock_fork_child(writer_st.map.rate);
	ct_watch_fork_child();
	pthread_mutex_init(&writer_st.start_lock, NULL);
}
