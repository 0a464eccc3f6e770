// SPDX-License-Identifier: MIT
/* The trace files a `cuptrace run` wrote (run_files.h): found by the
 * output pattern, their times and their job id; in a launcher's job, the
 * rank that summarises waits for the others' files to close. */
#include "read/run_files.h"
#include "config.h"
#include "pattern.h"
#include "rankenv.h"
#include "cuptrace/format.h"
#include "read/inputs.h"
#include "read/live.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- the files a run wrote ---- */

/* The output pattern as an fnmatch pattern: each escape is '*'; a
 * directory ('/' at the end) with the name the library gives files there. */
static void pattern_glob(const char *pat, char *out, size_t len)
{
	size_t o = 0;
	char whole[PATH_MAX + sizeof CT_PATTERN_DIR_DEFAULT];
	size_t pl = strlen(pat);
	if (pl && pat[pl - 1] == '/' && pl < PATH_MAX) {
		snprintf(whole, sizeof whole, "%s%s", pat, CT_PATTERN_DIR_DEFAULT);
		pat = whole;
	}
	for (const char *p = pat; *p && o + 2 < len; p++) {
		if (*p != '%') {
			if (strchr("*?[\\", *p))
				out[o++] = '\\';
			out[o++] = *p;
			continue;
		}
		if (p[1] == '%') {
			out[o++] = '%', p++;
			continue;
		}
		if (p[1] == 'q' && p[2] == '{') {
			const char *e = strchr(p, '}');
			p = e ? e : p + strlen(p) - 1;
		} else if (p[1])
			p++;
		if (!o || out[o - 1] != '*')
			out[o++] = '*';
	}
	out[o] = 0;
}

/* The job id in the header of the trace file at path ("" none; -1 unreadable). */
static int job_of_file(const char *path, char *job, size_t jlen)
{
	char host[256];
	uint64_t pid;
	int64_t rank;
	return trace_file_who(path, &rank, host, sizeof host, &pid, job, jlen);
}

/* *.ctr files under dir (recursively) matching glob, written since t0, of
 * the job (header job id) `job` when not NULL. */
static void find_written(const char *dir, const char *glob, const struct timespec *t0,
			 const char *job, struct run_files *f, int depth)
{
	DIR *d = opendir(dir);
	if (!d || depth > 16) {
		if (d)
			closedir(d);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char path[PATH_MAX];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= sizeof path)
			continue;
		struct stat st;
		if (stat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode)) {
			find_written(path, glob, t0, job, f, depth + 1);
			continue;
		}
		size_t n = strlen(path);
		const char *rel = !strncmp(path, "./", 2) ? path + 2 : path;
		if (!S_ISREG(st.st_mode) || n < 4 || strcmp(path + n - 4, ".ctr") ||
		    fnmatch(glob, rel, 0) ||
		    st.st_mtim.tv_sec < t0->tv_sec ||
		    (st.st_mtim.tv_sec == t0->tv_sec && st.st_mtim.tv_nsec < t0->tv_nsec))
			continue;
		char id[257];
		if (job && (job_of_file(path, id, sizeof id) || strcmp(id, job)))
			continue; /* another run's, into the same place */
		if (f->n == f->cap) {
			f->cap = f->cap ? f->cap * 2 : 16;
			f->v = xrealloc(f->v, f->cap * sizeof *f->v);
		}
		f->v[f->n++] = xstrdup(rel);
	}
	closedir(d);
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

void run_files_where(const char *pat, char *dir, size_t dlen, char *glob, size_t glen)
{
	const char *rel = !strncmp(pat, "./", 2) ? pat + 2 : pat;
	pattern_glob(rel, glob, glen);
	const char *pc = strchr(rel, '%');
	size_t n = pc ? (size_t)(pc - rel) : strlen(rel);
	while (n && rel[n - 1] != '/')
		n--;
	if (n > 1 && n < dlen) {
		memcpy(dir, rel, n - 1);
		dir[n - 1] = 0;
	} else
		snprintf(dir, dlen, "%s", n == 1 ? "/" : ".");
}

void run_files_find(const char *dir, const char *glob, const struct timespec *t0, const char *job,
		    struct run_files *f)
{
	find_written(dir, glob, t0, job, f, 0);
	if (f->n)
		qsort(f->v, f->n, sizeof *f->v, cmp_str);
}

void run_files_free(struct run_files *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i]);
	free(f->v);
	memset(f, 0, sizeof *f);
}

/* ---- a launcher's job ---- */

#define QUIET_S 10 /* no trace file changed this long: the rest are not coming */
/* A launcher starts its ranks within moments of each other, but a rank
 * whose program does not wait for the others (no MPI_Init, a short job
 * step) can end before a slower one has said it traces: ranks decide no
 * sooner than this long after they started. */
#define SAY_LATE_S 2

void run_job_of(const struct ct_config *cfg, struct run_job *j)
{
	struct ct_rankinfo ri;
	ct_rank_detect(&ri, (const char *(*)(const char *))getenv);
	memset(j, 0, sizeof *j);
	if (ri.world_size <= 1 || ri.rank < 0 || ri.rank >= ri.world_size)
		return;
	j->rank = ri.rank, j->world = ri.world_size;
	char why[256];
	j->traces = ct_ranks_decide(&cfg->ranks, &ri, why, sizeof why) == 1;
	const struct ct_rankset *set = &cfg->ranks;
	long first = -1, n = 0;
	if (set->all) {
		first = 0, n = j->world;
	} else if (!set->local) {
		for (long r = 0; r < j->world; r++)
			if (ct_rankset_has(set, r, -1)) {
				if (first < 0)
					first = r;
				n++;
			}
	} else if (ri.local_size > 0) {
		/* ranks placed by node: rank r is local rank r % local_size */
		for (long r = 0; r < j->world; r++)
			if (ct_rankset_has(set, r, r % ri.local_size)) {
				if (first < 0)
					first = r;
				n++;
			}
	} else { /* no local size: the leader is the one whose local rank is first */
		for (long l = 0; l < j->world && first < 0; l++)
			if (ct_rankset_has(set, l, l))
				first = l;
	}
	j->leader = first == j->rank;
	j->expected = n;
}

/* ---- ranks that said they summarise ---- */

#define SAID ".cuptrace-rank-"

/* The marker's name without the rank: SAID, the job id made a file name. */
static void said_prefix(const char *id, char *out, size_t len)
{
	size_t o = (size_t)snprintf(out, len, "%s", SAID);
	for (const char *p = id; *p && o + 2 < len && o < 120; p++)
		out[o++] = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				   (*p >= '0' && *p <= '9') || *p == '.' || *p == '_'
			       ? *p
			       : '_';
	out[o++] = '-';
	out[o] = 0;
}

void run_job_say(const struct run_job *j, const char *dir, const char *id)
{
	if (!j->world || !id || !j->traces) /* a rank CUPTRACE_RANKS leaves out writes nothing */
		return;
	char pre[160], path[PATH_MAX];
	said_prefix(id, pre, sizeof pre);
	snprintf(path, sizeof path, "%s/%s%ld", dir, pre, j->rank);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
}

/* Calls fn for each marker of job id in dir, with its rank (-1 when the
 * name has no rank after the prefix). */
static void each_marker(const char *dir, const char *id,
			void (*fn)(void *arg, int dfd, const char *name, long rank), void *arg)
{
	char pre[160];
	said_prefix(id, pre, sizeof pre);
	size_t pl = strlen(pre);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, pre, pl))
			continue;
		char *end;
		long r = strtol(e->d_name + pl, &end, 10);
		fn(arg, dirfd(d), e->d_name, *end || r < 0 ? -1 : r);
	}
	closedir(d);
}

struct said {
	const struct run_job *j;
	const struct timespec *t0;
	long first, n;
};

static void count_said(void *arg, int dfd, const char *name, long r)
{
	struct said *s = arg;
	struct stat st;
	if (r < 0 || r >= s->j->world || fstatat(dfd, name, &st, 0))
		return;
	/* a marker of an earlier run with the same job id (two steps of one
	 * Slurm job) is older than this run */
	if (st.st_mtim.tv_sec + 10 < s->t0->tv_sec)
		return;
	if (s->first < 0 || r < s->first)
		s->first = r;
	s->n++;
}

/* This rank's marker gone: a rank that is not the summarising one has
 * decided so and leaves. */
static void unsay_self(const struct run_job *j, const char *dir, const char *id)
{
	char pre[160], path[PATH_MAX];
	said_prefix(id, pre, sizeof pre);
	snprintf(path, sizeof path, "%s/%s%ld", dir, pre, j->rank);
	unlink(path);
}

void run_job_said(struct run_job *j, const char *dir, const char *id,
		  const struct timespec *t0)
{
	if (!j->world || !id)
		return;
	/* t0 is the start less the file systems' coarse second */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	double left = (double)(t0->tv_sec + 1 + SAY_LATE_S - now.tv_sec) +
		      (double)(t0->tv_nsec - now.tv_nsec) / 1e9;
	if (left > 0 && left <= SAY_LATE_S) {
		struct timespec nap = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
		nanosleep(&nap, NULL);
	}
	struct said s = {j, t0, -1, 0};
	each_marker(dir, id, count_said, &s);
	if (!s.n)
		return;
	j->leader = s.first == j->rank;
	j->expected = s.n;
	if (!j->leader)
		unsay_self(j, dir, id);
}

static void count_others(void *arg, int dfd, const char *name, long r)
{
	(void)dfd, (void)name;
	struct said *s = arg;
	s->n += r != s->j->rank;
}

void run_job_unsay(const struct run_job *j, const char *dir, const char *id)
{
	if (!j->world || !id || !j->traces)
		return;
	/* The others decide right after their program ends, so their markers
	 * go within moments of their files closing; until then they must
	 * still see ours, or one would take itself for the summarising rank. */
	for (int i = 0; i < 100; i++) {
		struct said s = {j, NULL, -1, 0};
		each_marker(dir, id, count_others, &s);
		if (!s.n)
			break;
		struct timespec nap = {0, 50 * 1000000L};
		nanosleep(&nap, NULL);
	}
	unsay_self(j, dir, id);
}

/* 1 when the file at path ends with a trailer: its process closed it. */
static int closed_file(const char *path, off_t size)
{
	if (size < CT_TRAILER_SIZE)
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	uint32_t magic = 0;
	ssize_t n = pread(fd, &magic, sizeof magic, size - CT_TRAILER_SIZE);
	close(fd);
	return n == (ssize_t)sizeof magic && magic == CT_TRAILER_MAGIC;
}

/* 1 when the file is finished: closed, or cut short by a process of this
 * host that is gone (killed); 0 while it is being written; -1 when it
 * cannot be read yet. *rank is its header's. */
static int file_done(const char *path, off_t size, int64_t *rank)
{
	char host[256];
	uint64_t pid;
	if (trace_file_who(path, rank, host, sizeof host, &pid, NULL, 0))
		return -1;
	if (closed_file(path, size))
		return 1;
	return trace_process_alive(host, pid) == 0;
}

static double since(const struct timespec *a)
{
	struct timespec b;
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) + (double)(b.tv_nsec - a->tv_nsec) / 1e9;
}

void run_job_wait(const struct run_job *j, const char *dir, const char *glob,
		  const struct timespec *t0, const char *id)
{
	/* raw: a world too large to hold (a stray WORLD_SIZE) is not waited for */
	char *seen = calloc((size_t)j->world, 2), *open_ = seen + j->world;
	if (!seen)
		return;
	struct timespec start, changed;
	clock_gettime(CLOCK_MONOTONIC, &start);
	changed = start;
	unsigned long long last_sig = 0;
	int said = 0;
	for (;;) {
		struct run_files f = {0};
		find_written(dir, glob, t0, id, &f, 0);
		long ranks = 0;
		int64_t rank;
		unsigned long long sig = f.n;
		memset(seen, 0, 2 * (size_t)j->world);
		for (size_t i = 0; i < f.n; i++) {
			struct stat st;
			if (stat(f.v[i], &st) == 0) {
				sig = sig * 1000003u + (unsigned long long)st.st_size;
				int done = file_done(f.v[i], st.st_size, &rank);
				if (done >= 0 && rank >= 0 && rank < j->world) {
					seen[rank] = 1;
					open_[rank] |= !done;
				}
			}
			free(f.v[i]);
		}
		free(f.v);
		for (long r = 0; r < j->world; r++)
			ranks += seen[r] && !open_[r];
		if (j->expected && ranks >= j->expected)
			break;
		if (sig != last_sig) {
			last_sig = sig;
			clock_gettime(CLOCK_MONOTONIC, &changed);
		} else if (since(&changed) >= QUIET_S) {
			say_cmd("%ld of %ld ranks finished their files; no trace "
			        "file changed for %d s: summarising what there is",
			        ranks, j->expected, QUIET_S);
			break;
		}
		if (!said && since(&start) >= 1.0) {
			say_cmd("rank %ld waits for the other ranks' files "
			        "(%ld of %ld finished)",
			        j->rank, ranks, j->expected);
			said = 1;
		}
		struct timespec nap = {0, 200 * 1000000L};
		nanosleep(&nap, NULL);
	}
	free(seen);
}
