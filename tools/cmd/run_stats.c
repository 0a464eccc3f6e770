// SPDX-License-Identifier: MIT
/* `cuptrace run --stats / --report` (run_stats.h): the files a run wrote,
 * found by the output pattern and their times; in a launcher's job, the
 * rank that summarises waits for the others' files to close. */
#include "cmd/run_stats.h"
#include "cmd/cmd.h"
#include "config.h"
#include "pattern.h"
#include "rankenv.h"
#include "cuptrace/format.h"
#include "read/inputs.h"
#include "read/live.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- --stats: the files this run wrote ---- */

struct found {
	char **v;
	size_t n, cap;
};

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
			 const char *job, struct found *f, int depth)
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

/* ---- a launcher's job ---- */

#define QUIET_S 10 /* no trace file changed this long: the rest are not coming */

struct job {
	long rank, world;
	int leader;    /* this rank summarises the job */
	long expected; /* ranks whose files it waits for; 0: until quiet */
};

/* The job this run is a rank of (world 0: none). The summary is made by
 * the lowest rank that traces: with CUPTRACE_RANKS=local:L, the rank L
 * (ranks placed by node, as Open MPI and srun place them by default); the
 * ranks it waits for are counted the same way (0 without a local size:
 * it waits until the files are quiet). */
static void job_of(const struct ct_config *cfg, struct job *j)
{
	struct ct_rankinfo ri;
	ct_rank_detect(&ri, (const char *(*)(const char *))getenv);
	memset(j, 0, sizeof *j);
	if (ri.world_size <= 1 || ri.rank < 0 || ri.rank >= ri.world_size)
		return;
	j->rank = ri.rank, j->world = ri.world_size;
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

/* The summarising rank waits until every file of every rank it expects is
 * finished (a rank's capture windows, its forked children's), or until no
 * trace file has changed for QUIET_S seconds (a rank that died or hangs
 * elsewhere: the summary then says its file was cut short). */
static void wait_for_ranks(const struct job *j, const char *dir, const char *glob,
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
		struct found f = {0};
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

/* Signals a scheduler or `docker stop` sends the launcher are CMD's, as
 * when the launcher is CMD (without --stats it execs it): passed on. The
 * terminal's SIGINT and SIGQUIT reach CMD by themselves (system()'s way). */
static const int passed_on[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
#define NPASSED (sizeof passed_on / sizeof *passed_on)
static volatile pid_t cmd_pid;

static void pass_on(int sig)
{
	if (cmd_pid > 0)
		kill(cmd_pid, sig);
}

/* Runs CMD, waits, then prints the reports for the files it wrote; the
 * exit status stays CMD's. */
int run_then_stats(char **cmd, const struct ct_config *cfg, int stats, const char *list,
		   const char *report)
{
	const char *pat = cfg->output;
	struct job job;
	job_of(cfg, &job);
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	/* The files of this run: outside a launcher's job, those of a run id
	 * its processes inherit; in one, those of the launcher's job id (each
	 * rank's run would make its own run id); the pattern and the time
	 * alone would take the files of runs before or beside this one. */
	char run_id[128];
	if (!job.world) {
		char host[64] = "";
		gethostname(host, sizeof host - 1);
		snprintf(run_id, sizeof run_id, "run.%s.%ld.%lld%09ld", host, (long)getpid(),
			 (long long)t0.tv_sec, t0.tv_nsec);
		setenv(CT_RUN_VAR, run_id, 1);
	}
	const char *id = ct_job_id((const char *(*)(const char *))getenv);
	t0.tv_sec -= 1; /* file systems keep coarse times */
	fflush(NULL);
	/* held from before the fork until CMD's pid is known: none is lost */
	sigset_t hold, mask;
	sigemptyset(&hold);
	for (size_t i = 0; i < NPASSED; i++)
		sigaddset(&hold, passed_on[i]);
	sigprocmask(SIG_BLOCK, &hold, &mask);
	pid_t pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &mask, NULL);
		say_cmd("fork: %s", strerror(errno));
		return 2;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &mask, NULL);
		execvp(cmd[0], cmd);
		int e = errno;
		say("%s: %s", cmd[0], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	/* As system() does: the terminal's signals are for CMD. */
	struct sigaction ign = {.sa_handler = SIG_IGN}, oint, oquit, fwd = {.sa_handler = pass_on},
	                 old[NPASSED];
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	cmd_pid = pid;
	fwd.sa_flags = SA_RESTART;
	for (size_t i = 0; i < NPASSED; i++)
		sigaction(passed_on[i], &fwd, &old[i]);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	int ws = 0;
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	for (size_t i = 0; i < NPASSED; i++)
		sigaction(passed_on[i], &old[i], NULL);
	cmd_pid = 0;
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	int rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : 1;
	if (rc == 126 || rc == 127 || (job.world && !job.leader))
		return rc; /* in a job, the lowest traced rank summarises it */
	/* Where the files are: the pattern's directory up to its first
	 * escape, searched for names that fit the pattern. */
	char glob[PATH_MAX * 2], dir[PATH_MAX];
	const char *rel = !strncmp(pat, "./", 2) ? pat + 2 : pat;
	pattern_glob(rel, glob, sizeof glob);
	const char *pc = strchr(rel, '%');
	size_t n = pc ? (size_t)(pc - rel) : strlen(rel);
	while (n && rel[n - 1] != '/')
		n--;
	if (n > 1 && n < sizeof dir) {
		memcpy(dir, rel, n - 1);
		dir[n - 1] = 0;
	} else
		snprintf(dir, sizeof dir, "%s", n == 1 ? "/" : ".");
	if (job.world)
		wait_for_ranks(&job, dir, glob, &t0, id);
	struct found f = {0};
	find_written(dir, glob, &t0, id, &f, 0);
	/* the summary speaks as the options that asked for it, the commands it
	 * runs as themselves */
	say_command(stats && report ? "run --stats, --report"
	            : stats         ? "run --stats"
	                            : "run --report");
	if (!f.n) {
		say_cmd("no trace file was written (pattern %s)", pat);
		return rc;
	}
	qsort(f.v, f.n, sizeof *f.v, cmp_str);
	char **av = xcalloc(f.n + 5, sizeof *av); /* also `report -o OUT FILES` */
	int ac = 0;
	av[ac++] = "stats";
	if (list) {
		av[ac++] = "--report";
		av[ac++] = (char *)list;
	}
	for (size_t i = 0; i < f.n; i++)
		av[ac++] = f.v[i];
	say_cmd("%zu trace file%s", f.n, f.n > 1 ? "s" : "");
	fflush(stderr);
	if (stats) {
		say_command("stats");
		cmd_stats(ac, av);
	}
	if (report) {
		/* the same files, for `cuptrace report -o OUT` */
		av[0] = "report";
		av[1] = "-o";
		av[2] = (char *)report;
		for (size_t i = 0; i < f.n; i++)
			av[3 + i] = f.v[i];
		fflush(stdout);
		say_command("report");
		cmd_report((int)f.n + 3, av);
	}
	for (size_t i = 0; i < f.n; i++)
		free(f.v[i]);
	free(f.v);
	free(av);
	return rc;
}

