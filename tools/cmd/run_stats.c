// SPDX-License-Identifier: MIT
/* `cuptrace run --stats / --report / --export=sqlite` (run_stats.h): runs
 * CMD as system() would, then `export`, `stats` and `report` on the files
 * it wrote (read/run_files.h). */
#include "cmd/run_stats.h"
#include "cmd/cmd.h"
#include "config.h"
#include "rankenv.h"
#include "read/inputs.h"
#include "read/run_files.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* No file: in flight mode what a healthy run writes (nothing). */
static void say_none(const char *pat)
{
	if (getenv("CUPTRACE_FLIGHT"))
		say_cmd_note("no trace file was written (pattern %s): flight mode, and no trigger "
			     "fired", pat);
	else
		say_cmd("no trace file was written (pattern %s)", pat);
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

/* --export=sqlite: each trace file of this process's run (in a job, of
 * its rank: each rank's run exports its own, as nsys writes one database
 * per process) into X.sqlite beside X.ctr, by `cuptrace export`. */
static void export_own(const char *pat, const char *dir, const char *glob,
		       const struct timespec *t0, const char *id, const struct run_job *job)
{
	struct run_files f = {0};
	run_files_find(dir, glob, t0, id, &f);
	size_t done = 0;
	for (size_t i = 0; i < f.n; i++) {
		char host[256];
		uint64_t pid;
		int64_t rank;
		if (job->world && (trace_file_who(f.v[i], &rank, host, sizeof host, &pid, NULL, 0) ||
				   rank != job->rank))
			continue; /* another rank's, which that rank's run exports */
		char out[PATH_MAX + 8];
		size_t n = strlen(f.v[i]) - 4; /* without .ctr */
		snprintf(out, sizeof out, "%.*s.sqlite", (int)n, f.v[i]);
		char *av[] = {"export", "-o", out, f.v[i], NULL};
		fflush(stdout);
		say_command("export");
		cmd_export(4, av);
		done++;
	}
	say_command("run --export");
	if (!done && !job->world)
		say_none(pat);
	say_command("run");
	run_files_free(&f);
}

/* Runs CMD, waits, then exports and prints the reports for the files it
 * wrote; the exit status stays CMD's. */
int run_then_stats(char **cmd, const struct ct_config *cfg, int stats, const char *list,
		   const char *report, int export_sqlite)
{
	const char *pat = cfg->output;
	struct run_job job;
	run_job_of(cfg, &job);
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
	char glob[PATH_MAX * 2], dir[PATH_MAX];
	run_files_where(pat, dir, sizeof dir, glob, sizeof glob);
	if (stats || report) /* the summary's protocol: export alone has none */
		run_job_say(&job, dir, id);
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
	if (export_sqlite && rc != 126 && rc != 127)
		export_own(pat, dir, glob, &t0, id, &job);
	if (!stats && !report)
		return rc;
	/* in a job, the lowest rank that traces, or that said so, summarises it */
	run_job_said(&job, dir, id, &t0);
	if (job.world && !job.leader)
		return rc;
	int ran = rc != 126 && rc != 127; /* CMD could not be run: nothing to summarise */
	if (job.world) {
		if (ran)
			run_job_wait(&job, dir, glob, &t0, id);
		run_job_unsay(&job, dir, id);
	}
	if (!ran)
		return rc;
	struct run_files f = {0};
	run_files_find(dir, glob, &t0, id, &f);
	/* the summary speaks as the options that asked for it, the commands it
	 * runs as themselves */
	say_command(stats && report ? "run --stats, --report"
	            : stats         ? "run --stats"
	                            : "run --report");
	if (!f.n) {
		say_none(pat);
		return rc;
	}
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
	run_files_free(&f);
	free(av);
	return rc;
}

