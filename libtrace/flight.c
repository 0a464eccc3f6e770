// SPDX-License-Identifier: MIT
/* The flight recorder's store of blocks, its triggers and the job's
 * marker file (flight.h, docs/flight-recorder.md). */
#include "flight.h"
#include "clock.h"
#include "io.h"
#include "log.h"
#include "pattern.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct ct_fl_store ct_fl;

/* Triggers: a bit per cause asked for and its detail; the causes that
 * fired (once only); the last dump's time. */
static _Atomic uint32_t asked;
static _Atomic uint64_t detail[CT_FL_NCAUSES];
static uint32_t fired;
static uint64_t last_dump;
static int dumped_once;
/* The marker: its path, and the one seen last (inode, mtime), so that
 * only a new or renewed marker is a trigger. */
static char marker[4096];
static char marker_why[512]; /* the cause a marker carried */
/* A cause's words from ct_fl_ask_note: state 1 while being written, 2 once
 * there to read. */
#define NOTE_LEN 256
static struct {
	_Atomic int state;
	char text[NOTE_LEN];
} notes[CT_FL_NCAUSES];
static struct {
	uint64_t ino, mtime;
	int any;
} seen, earlier; /* earlier: the one there at the start (an earlier job's) */

/* Slow steps (CUPTRACE_FLIGHT_SLOW): the durations of the last steps. */
#define STEPS_KEPT   32
#define STEPS_JUDGED 5 /* no verdict before this many steps */
static struct {
	uint64_t last, dur[STEPS_KEPT];
	unsigned n;
} steps;

int ct_fl_on(void)
{
	return ct.cfg.flight > 0;
}

static const char *env(const char *name)
{
	return secure_getenv(name);
}

/* The job's output directory: where every rank looks for the marker. */
static void marker_path(void)
{
	struct ct_pattern_vals v = {
	    .rank = ct.rank.rank,
	    .local_rank = ct.rank.local_rank,
	    .world_size = ct.rank.world_size,
	    .host = ct.host,
	    .pid = ct.pid,
	    .getenv = env,
	};
	/* An output naming an existing directory (-o traces) is one: the
	 * files go in it, as output.c has it. */
	char dir[4096], full[4096], pat[sizeof ct.cfg.output + 2];
	struct stat st;
	int is_dir = !ct_pattern_expand(ct.cfg.output, &v, full, sizeof full) && !stat(full, &st) &&
	             S_ISDIR(st.st_mode);
	snprintf(pat, sizeof pat, "%s%s", ct.cfg.output, is_dir ? "/" : "");
	if (ct_pattern_job_dir(pat, &v, dir, sizeof dir - 32)) {
		marker[0] = 0;
		return;
	}
	if ((size_t)snprintf(marker, sizeof marker, "%.4000s/%s", dir, CT_FL_MARKER) >=
	    sizeof marker)
		marker[0] = 0;
	/* Output to a device (CUPTRACE_OUTPUT=/dev/null): no job directory. */
	if (!strncmp(dir, "/dev/", 5) || !strcmp(dir, "/dev") || !strncmp(dir, "/proc", 5)) {
		marker[0] = 0;
		ct_info("flight recorder: %s is no job directory: no marker, the job's ranks do "
		        "not dump together",
		        dir);
	}
}

static int stat_marker(uint64_t *ino, uint64_t *mtime)
{
	struct stat st;
	if (!marker[0] || stat(marker, &st))
		return -1;
	*ino = (uint64_t)st.st_ino;
	*mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
	return 0;
}

void ct_fl_init(void)
{
	memset(&ct_fl, 0, sizeof ct_fl);
	atomic_store(&asked, 0); /* asked before anything was recorded: nothing to write */
	fired = 0, dumped_once = 0, last_dump = 0; /* a forked child's are its own */
	memset(&steps, 0, sizeof steps);
	ct_fl.window_ns = (uint64_t)(ct.cfg.flight * 1e9);
	ct_fl.budget = (size_t)ct.cfg.flight_mb << 20;
	/* Some 64 blocks a window: from a writer's tick (50 ms) to 500 ms
	 * (the file's interval). */
	ct_fl.cut_ns = ct_fl.window_ns / 64;
	if (ct_fl.cut_ns < 50000000ull)
		ct_fl.cut_ns = 50000000ull;
	if (ct_fl.cut_ns > 500000000ull)
		ct_fl.cut_ns = 500000000ull;
	marker_path();
	seen.any = !stat_marker(&seen.ino, &seen.mtime); /* an earlier job's: ignored */
	earlier = seen;
}

static void drop_oldest(void)
{
	struct ct_fl_block *b = &ct_fl.b[ct_fl.head];
	ct_fl.bytes -= b->len + b->ncounts * sizeof *b->counts;
	ct_fl.active -= b->t1 - b->t0;
	free(b->data);
	free(b->counts);
	ct_fl.head = (ct_fl.head + 1) % ct_fl.cap;
	ct_fl.n--;
}

void ct_fl_clear(void)
{
	while (ct_fl.n)
		drop_oldest();
	ct_fl.budget_last = 0;
}

static int grow(void)
{
	size_t ncap = ct_fl.cap ? ct_fl.cap * 2 : 256;
	struct ct_fl_block *nb = malloc(ncap * sizeof *nb);
	if (!nb)
		return -1;
	for (size_t i = 0; i < ct_fl.n; i++)
		nb[i] = ct_fl.b[(ct_fl.head + i) % ct_fl.cap];
	free(ct_fl.b);
	ct_fl.b = nb, ct_fl.cap = ncap, ct_fl.head = 0;
	return 0;
}

int ct_fl_push(uint8_t *data, size_t len, uint64_t t0, uint64_t t1, uint32_t sid0, size_t defs0,
               const uint32_t *counts, unsigned ncounts)
{
	uint32_t *c = ncounts ? malloc(ncounts * sizeof *c) : NULL;
	if ((ncounts && !c) || (ct_fl.n == ct_fl.cap && grow())) {
		free(c), free(data);
		return -1;
	}
	if (ncounts)
		memcpy(c, counts, ncounts * sizeof *c);
	ct_fl.b[(ct_fl.head + ct_fl.n) % ct_fl.cap] =
	    (struct ct_fl_block){data, len, t0, t1, sid0, defs0, c, ncounts};
	ct_fl.n++;
	ct_fl.bytes += len + ncounts * sizeof *c;
	ct_fl.active += t1 - t0;
	ct_fl.recorded += t1 - t0;
	/* The oldest goes once the others alone hold the window, or while the
	 * store is over its budget (the newest block stays). */
	while (ct_fl.n > 1) {
		const struct ct_fl_block *old = &ct_fl.b[ct_fl.head];
		int aged = ct_fl.active - (old->t1 - old->t0) >= ct_fl.window_ns;
		if (!aged && ct_fl.bytes <= ct_fl.budget)
			break;
		ct_fl.budget_last = !aged;
		if (!aged)
			ct_fl.dropped_bytes += old->len;
		drop_oldest();
	}
	if (ct_fl.bytes > ct_fl.peak)
		ct_fl.peak = ct_fl.bytes;
	return 0;
}

void ct_fl_ask(enum ct_fl_cause c, uint64_t d)
{
	atomic_store_explicit(&detail[c], d, memory_order_relaxed);
	atomic_fetch_or_explicit(&asked, 1u << c, memory_order_release);
}

void ct_fl_ask_note(enum ct_fl_cause c, uint64_t d, const char *note)
{
	int idle = 0;
	if (note && atomic_compare_exchange_strong(&notes[c].state, &idle, 1)) {
		snprintf(notes[c].text, sizeof notes[c].text, "%s", note);
		atomic_store_explicit(&notes[c].state, 2, memory_order_release);
	}
	ct_fl_ask(c, d);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void ct_fl_step(long step)
{
	if (!(ct.cfg.flight > 0 && ct.cfg.flight_slow > 0))
		return;
	uint64_t now = ct_now();
	if (steps.last) {
		uint64_t d = now - steps.last;
		unsigned k = steps.n < STEPS_KEPT ? steps.n : STEPS_KEPT;
		if (k >= STEPS_JUDGED) {
			uint64_t v[STEPS_KEPT];
			memcpy(v, steps.dur, k * sizeof *v);
			qsort(v, k, sizeof *v, cmp_u64);
			uint64_t med = v[k / 2];
			if ((double)d > ct.cfg.flight_slow * (double)med)
				ct_fl_ask(CT_FL_SLOW, (uint64_t)step);
		}
		steps.dur[steps.n++ % STEPS_KEPT] = d;
	}
	steps.last = now;
}

static int repeatable(int c)
{
	return c == CT_FL_API || c == CT_FL_SIGNAL || c == CT_FL_JOB;
}

static void describe(int c, uint64_t d, char *why, size_t len)
{
	if (atomic_load_explicit(&notes[c].state, memory_order_acquire) == 2) {
		snprintf(why, len, "%s", notes[c].text);
		return;
	}
	switch (c) {
	case CT_FL_HANG:
		snprintf(why, len, "hang: the watchdog fired");
		break;
	case CT_FL_FATAL:
		snprintf(why, len, "signal %d", (int)d);
		break;
	case CT_FL_EXIT:
		snprintf(why, len, "exit status %d", (int)d);
		break;
	case CT_FL_CLEAN:
		snprintf(why, len, "exit status 0 (CUPTRACE_FLIGHT_EXIT=always)");
		break;
	case CT_FL_SIGNAL:
		snprintf(why, len, "signal SIG%s (CUPTRACE_FLIGHT_SIGNAL)", ct_signal_name((int)d));
		break;
	case CT_FL_API:
		snprintf(why, len, "cuptrace_dump()");
		break;
	case CT_FL_SLOW:
		snprintf(why, len,
		         "slow step: step %llu took more than %.9g times the "
		         "median of the steps before it (CUPTRACE_FLIGHT_SLOW)",
		         (unsigned long long)d, ct.cfg.flight_slow);
		break;
	case CT_FL_NCCL_ERR:
		snprintf(why, len, "nccl_error: error %d", (int)d);
		break;
	case CT_FL_NCCL_ABORT:
		snprintf(why, len, "nccl_abort: ncclCommAbort");
		break;
	default:
		snprintf(why, len, "job: %s", marker_why);
		break;
	}
}

int ct_fl_take(uint64_t now, char *why, size_t len)
{
	uint32_t a = atomic_exchange_explicit(&asked, 0, memory_order_acquire);
	int pick = -1;
	for (int c = 0; c < CT_FL_NCAUSES && pick < 0; c++) {
		if (!(a & (1u << c)) || (fired & (1u << c)))
			continue;
		if (!repeatable(c))
			fired |= 1u << c;
		/* The process's end always dumps; other causes wait out the gap
		 * after a dump (another rank's marker for the same moment). */
		int ending = c == CT_FL_FATAL || c == CT_FL_EXIT || c == CT_FL_CLEAN;
		if (!ending && dumped_once && now - last_dump < CT_FL_GAP_NS)
			continue;
		pick = c;
		describe(c, atomic_load_explicit(&detail[c], memory_order_relaxed), why, len);
	}
	return pick;
}

void ct_fl_dumped(uint64_t now)
{
	last_dump = now;
	dumped_once = 1;
}

/* The marker's first line: what the rank that made it says. */
static void read_marker(void)
{
	snprintf(marker_why, sizeof marker_why, "a marker in the job's directory");
	int fd = ct_open_high(marker, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd < 0)
		return;
	char buf[sizeof marker_why];
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	if (buf[0])
		snprintf(marker_why, sizeof marker_why, "%s", buf);
}

void ct_fl_poll_marker(uint64_t now)
{
	(void)now;
	uint64_t ino, mtime;
	if (stat_marker(&ino, &mtime))
		return;
	if (seen.any && ino == seen.ino && mtime == seen.mtime)
		return;
	seen.any = 1, seen.ino = ino, seen.mtime = mtime;
	read_marker();
	ct_fl_ask(CT_FL_JOB, 0);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* mkdir -p of the marker's directory. */
static void make_dir(void)
{
	char d[4096];
	snprintf(d, sizeof d, "%s", marker);
	for (char *p = d + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(d, 0777);
			*p = '/';
		}
}

void ct_fl_fire_marker(const char *why)
{
	if (!marker[0])
		return;
	make_dir();
	/* A process of no rank (no launcher's variables) says none, not -1. */
	char text[1024], rank[32] = "";
	if (ct.rank.rank >= 0)
		snprintf(rank, sizeof rank, "rank %ld, ", ct.rank.rank);
	int n = snprintf(text, sizeof text,
	                 "%s (%shost %s, pid %d)\ncause=%s\nrank=%ld\n"
	                 "host=%s\npid=%d\ntime=%llu\n",
	                 why, rank, ct.host, ct.pid, why, ct.rank.rank, ct.host, ct.pid,
	                 (unsigned long long)realtime_ns());
	if (n < 0 || (size_t)n >= sizeof text)
		n = (int)strlen(text);
	int fd = ct_open_high(marker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
	if (fd < 0 && errno == EEXIST) {
		/* One there: renewed only when older than the gap (an earlier
		 * trigger) or an earlier job's, however recent (this job's
		 * processes ignored it: no moment of theirs), through a name of
		 * our own and a rename, so that readers see it whole and as a
		 * new file. */
		uint64_t ino, mtime;
		if (!stat_marker(&ino, &mtime) && realtime_ns() - mtime < CT_FL_GAP_NS &&
		    !(earlier.any && ino == earlier.ino && mtime == earlier.mtime))
			return;
		char tmp[4400];
		snprintf(tmp, sizeof tmp, "%.4000s.%.255s.%d", marker, ct.host, ct.pid);
		fd = ct_open_high(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return;
		int bad = ct_write_all(fd, text, (size_t)n);
		close(fd);
		if (bad || rename(tmp, marker))
			unlink(tmp);
	} else if (fd >= 0) {
		ct_write_all(fd, text, (size_t)n);
		close(fd);
	} else {
		ct_once(nomark, CT_LOG_WARN, "cannot create %s: %s; the other ranks do not dump",
		        marker, strerror(errno));
		return;
	}
	uint64_t ino, mtime; /* our own: not a trigger for us */
	if (!stat_marker(&ino, &mtime))
		seen.any = 1, seen.ino = ino, seen.mtime = mtime;
}
