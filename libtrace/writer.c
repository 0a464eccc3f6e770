// SPDX-License-Identifier: MIT
/* The writer thread (writer.h): its start, its passes every tick (flush
 * requests served, the capture timer, rotation), the producers' wakes when
 * they take a chunk from the pool, the pages mapped ahead of them, and its
 * end at exit or fork. Its parts are listed in writer_int.h. */
#include "writer.h"
#include "writer_int.h"
#include "clock.h"
#include "enc.h"
#include "io.h"
#include "varint.h"
#include "defs.h"
#include "flight.h"
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
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#define FLUSH_NS 500000000ull /* a block reaches the disk at least this often */
#define TICK_MS 50
#define ORPHAN_TICKS 4 /* ct_program_gone every 200 ms */
#define FINISH_MS 10000 /* the most exit waits for the writer's last pass */
#define JOIN_MS 1000    /* then for its thread to end (1 ms naps) */
#define STRTAB_MAX (4u << 20)
/* zstd level 1: the blocks are mostly timestamp planes (the items
 * compress to almost nothing), where level 6's lazy search costs the writer
 * ~12 ns per NVTX event and ~60 ns per GPU record for files 5-10 % smaller
 * (bench/JOURNAL.md, "The writer's cost per event"). */
#define ZSTD_LEVEL 1

int (*_Atomic ct_writer_tick_hook)(uint64_t now);
void (*_Atomic ct_writer_orphan_hook)(void);

/* The end of the file: what the rings hold, the footer, fsync, close. */
static void last_pass(void)
{
	ct_wr_anchor(1);
	ct_wr_cycle();
	if (ct_wr.flight)
		ct_wr_flight_end(atomic_load(&ct_wr.ending));
	else
		ct_wr_write_footer(atomic_load(&ct_wr.ending));
	ct_wr_sync_file();
	ct_wr_close_file();
}

/* Chunks the writer keeps mapped ahead of the producers (ct_pool_prefault). */
#define PREFAULT_AHEAD 4

/* ct_pool_taken_hook: a producer took a chunk. The writer comes to drain,
 * so that chunks go back to the pool (most recently freed first) while
 * they are warm, instead of a producer taking ever new ones between two
 * of its ticks; one wake at a time. */
static void pool_taken(void)
{
	if (!atomic_exchange_explicit(&ct_wr.pool_wake, 1, memory_order_relaxed))
		sem_post(&ct_wr.wake);
}

/* Waits for the next tick, a flush request or stop. Wakes from producers
 * that took chunks meanwhile are served on the way (the rings drained,
 * pages mapped ahead) without the tick's other work. */
static void wait_tick(void)
{
	struct timespec ts = ct_deadline(TICK_MS);
	for (;;) {
		if (sem_clockwait(&ct_wr.wake, CLOCK_MONOTONIC, &ts)) {
			if (errno == EINTR)
				continue;
			return; /* the tick */
		}
		if (!atomic_exchange_explicit(&ct_wr.pool_wake, 0, memory_order_relaxed) ||
		    atomic_load(&ct_wr.stop) || ct_flushreq_pending(&ct_wr.fr))
			return;
		ct_wr_cycle();
		ct_pool_prefault(PREFAULT_AHEAD);
	}
}

static void *writer_main(void *arg)
{
	(void)arg; /* every signal blocked: ct_writer_ensure created it so */
	ct_thread_mark_internal();
	prctl(PR_SET_NAME, "cuptrace-write", 0, 0, 0);
	ct_wr.last_write = ct_now();
	ct_pool_prefault(PREFAULT_AHEAD);
	atomic_store(&ct_pool_taken_hook, pool_taken);
	for (unsigned ticks = 1; !atomic_load(&ct_wr.stop); ticks++) {
		wait_tick();
		/* main left by pthread_exit and the program's threads are gone:
		 * glibc's last thread would call exit(0), but that is us now */
		void (*orphaned)(void) = atomic_load(&ct_writer_orphan_hook);
		if (orphaned && ticks % ORPHAN_TICKS == 0 && ct_program_gone()) {
			ct_wr.self_exit = 1;
			orphaned(); /* exit(0), as glibc's last thread */
		}
		uint32_t seq;
		int req = ct_flushreq_take(&ct_wr.fr, &seq, CT_FLUSH_BLOCK);
		uint64_t now = ct_now();
		int (*tick)(uint64_t) = atomic_load(&ct_writer_tick_hook);
		int sw = tick ? tick(now) : -1;
		ct_wr_anchor(req != 0);
		ct_wr_cycle();
		if (sw >= 0) /* the capture timer switched here: on the main thread, as a
			      * program's own switch is on its thread (the tools read windows) */
			ct_wr_own_record(
			    CT_EV_CAPTURE, (int64_t)ct.pid,
			    (uint64_t[]){[F_CAPTURE_TS] = now, [F_CAPTURE_ON] = (uint64_t)sw},
			    F_CAPTURE_N);
		if (ct_wr.watch)
			ct_wr_watch_pass();
		if (ct_wr.flight && req >= CT_FLUSH_FOOTER) {
			ct_wr_flight_end(atomic_load(&ct_wr.ending));
		} else if (ct_wr.flight) { /* blocks to the store; triggers */
			ct_wr_flight_tick(now, ticks);
		} else if (req >= CT_FLUSH_FOOTER) {
			ct_wr.rotated[0] = 0; /* the process leaves: no rotation */
			ct_wr_write_footer(atomic_load(&ct_wr.ending));
		} else if (req == CT_FLUSH_ROTATE) {
			ct_wr_rotate();
		} else if (req || (ct_wr.enc.len && now - ct_wr.last_write >= FLUSH_NS)) {
			ct_wr_write_block();
		}
		if (req >= CT_FLUSH_SYNC)
			ct_wr_sync_file();
		if (req >= CT_FLUSH_CLOSE)
			ct_wr_close_file();
		if (req)
			ct_flushreq_served(&ct_wr.fr, seq);
		ct_pool_prefault(PREFAULT_AHEAD);
	}
	last_pass();
	atomic_store(&ct_wr.gone, 1);
	sem_post(&ct_wr.fr.flushed);
	return NULL;
}

void ct_writer_ensure(void)
{
	if (atomic_load_explicit(&ct_wr.started, memory_order_acquire))
		return;
	pthread_mutex_lock(&ct_wr.start_lock);
	if (!atomic_load(&ct_wr.started) && !ct_wr.finished) {
		ct_wr.cctx = ZSTD_createCCtx();
		if (!ct_wr.cctx || ct_enc_init(&ct_wr.enc, STRTAB_MAX)) {
			ct_log_error(
			    "out of memory starting the writer; this process is not traced");
			ct.active = 0;
			goto out;
		}
		ZSTD_CCtx_setParameter(ct_wr.cctx, ZSTD_c_compressionLevel, ZSTD_LEVEL);
		if (ct_tick_flag) {
			/* From the anchor read before the first record. */
			uint64_t tick, ns, rate;
			ct_clock_start(&tick, &ns, &rate);
			ct_tickmap_init(&ct_wr.map, tick, ns, rate);
			ct_wr_ts_fields();
		}
		ct_wr.watch = ct_watch_on();
		if (ct_fl_on())
			ct_wr_flight_start();
		ZSTD_CCtx_setParameter(ct_wr.cctx, ZSTD_c_checksumFlag, 1);
		sem_init(&ct_wr.wake, 0, 0);
		ct_flushreq_init(&ct_wr.fr);
		/* Plain attributes, and every signal blocked from its first
		 * instruction: no signal of the program's is ever run on it. */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		int bad = pthread_create(&ct_wr.th, NULL, writer_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (bad) {
			ct_log_error("cannot start the writer thread; this process is not traced");
			ct.active = 0;
			goto out;
		}
		atomic_store_explicit(&ct_wr.started, 1, memory_order_release);
	}
out:
	pthread_mutex_unlock(&ct_wr.start_lock);
}

void ct_writer_finish(uint32_t detail)
{
	pthread_mutex_lock(&ct_wr.start_lock);
	int started = atomic_load(&ct_wr.started);
	ct_wr.finished = 1;
	pthread_mutex_unlock(&ct_wr.start_lock);
	if (!started)
		return;
	atomic_store(&ct_wr.ending, (uint64_t)CT_END_EXIT << 32 | detail);
	if (pthread_equal(pthread_self(), ct_wr.th)) {
		if (ct_wr.self_exit) /* the exit(0) above: the writer ends here */
			last_pass();
		return;
	}
	ct_defs_impatient();
	atomic_store(&ct_wr.stop, 1);
	sem_post(&ct_wr.wake);
	/* Bounded: the writer may wait for a lock that the thread now
	 * leaving holds (a signal handler that calls exit() interrupted it
	 * inside an NVTX call); the process then leaves without its footer
	 * rather than never. */
	if (ct_flushreq_wait_flag(&ct_wr.fr, &ct_wr.gone, FINISH_MS)) {
		/* The file is finished. The writer thread's own end (freeing its
		 * thread-local storage) may still need the allocator's lock that
		 * the leaving thread held when the signal came inside malloc:
		 * the join is bounded too, and the process leaves without it. */
		struct timespec nap = {0, 1000000}; /* tryjoin: what the sanitizers know */
		for (int i = 0; i < JOIN_MS && pthread_tryjoin_np(ct_wr.th, NULL) == EBUSY; i++)
			nanosleep(&nap, NULL);
	} else
		ct_log_error("the writer did not finish within %d s; the trace ends without footer",
			     FINISH_MS / 1000);
	atomic_store(&ct_wr.started, 0);
}

int ct_writer_flush(int what, uint32_t how, uint32_t detail, int timeout_ms)
{
	if (!atomic_load(&ct_wr.started) || pthread_equal(pthread_self(), ct_wr.th))
		return -1;
	int saved = errno;
	if (what >= CT_FLUSH_FOOTER) {
		atomic_store(&ct_wr.ending, (uint64_t)how << 32 | detail);
		ct_defs_impatient();
	}
	int rc = ct_flushreq_ask(&ct_wr.fr, what, &ct_wr.wake, timeout_ms);
	errno = saved;
	return rc;
}

int ct_writer_flight_ask(int cause, uint64_t detail)
{
	return ct_writer_flight_note(cause, detail, NULL);
}

int ct_writer_flight_note(int cause, uint64_t detail, const char *note)
{
	if (!ct.active || !(ct.cfg.flight > 0) || cause < 0 || cause >= CT_FL_NCAUSES)
		return -1;
	if (note)
		ct_fl_ask_note((enum ct_fl_cause)cause, detail, note);
	else
		ct_fl_ask((enum ct_fl_cause)cause, detail); /* async-signal-safe */
	if (atomic_load(&ct_wr.started))
		sem_post(&ct_wr.wake); /* async-signal-safe */
	return 0;
}

/* CUPTRACE_FLIGHT_SIGNAL: a dump asked for, nothing else (the user
 * chose a signal the program does not use). */
static void flight_handler(int sig)
{
	int saved = errno;
	ct_writer_flight_ask(CT_FL_SIGNAL, (uint64_t)sig);
	errno = saved;
}

int ct_writer_flight_signal(void)
{
	static _Atomic int done;
	int sig = ct.cfg.flight > 0 ? ct.cfg.flight_signal : 0;
	if (!sig || atomic_exchange(&done, 1))
		return sig; /* installed once: the program's later choice stands */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = flight_handler;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	return sig;
}

const char *ct_writer_rotated_path(void)
{
	return ct_wr.rotated[0] ? ct_wr.rotated : NULL;
}

const char *ct_writer_path(void)
{
	return ct_wr.out.fd >= 0 ? ct_wr.out.path : NULL;
}

void ct_writer_fork_prepare(void)
{
	pthread_mutex_lock(&ct_wr.start_lock);
}

void ct_writer_fork_parent(void)
{
	pthread_mutex_unlock(&ct_wr.start_lock);
}

void ct_writer_fork_child(void)
{
	/* The writer thread does not exist here; its file is the parent's. The
	 * child starts its own writer and file on its first event. */
	/* The parent's writer may have been in the middle of changing these:
	 * leave them (copy-on-write pages, untouched) rather than free them. */
	memset(&ct_wr.enc, 0, sizeof ct_wr.enc);
	ct_wr.cctx = NULL;
	ct_wr.zbuf = NULL, ct_wr.zcap = 0;
	ct_output_drop(&ct_wr.out);
	ct_wr.part = 1;
	ct_wr.preamble = 0;
	/* The parent's window is not the child's: its store is left as it is
	 * (copy-on-write pages) and the child starts its own. */
	ct_wr.flight = ct_wr.dumping = 0;
	memset(&ct_fl, 0, sizeof ct_fl);
	ct_wr.first[0] = ct_wr.rotated[0] = 0;
	ct_tnames_fork_child();
	memset(ct_wr.drops, 0, sizeof ct_wr.drops);
	atomic_store(&ct.nccl_rank, 0); /* the parent's communicators are not the child's */
	atomic_store(&ct_wr.started, 0);
	atomic_store(&ct_wr.stop, 0);
	atomic_store(&ct_wr.gone, 0);
	ct_wr.self_exit = 0;
	ct_flushreq_reset(&ct_wr.fr);
	atomic_store(&ct_wr.ending, 0);
	ct_wr.finished = 0;
	/* The child's records are stamped after this: a map of its own from
	 * a new anchor, with the rate the parent measured. */
	ct_clock_fork_child(ct_wr.map.rate);
	ct_watch_fork_child();
	pthread_mutex_init(&ct_wr.start_lock, NULL);
}
