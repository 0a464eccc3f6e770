// SPDX-License-Identifier: MIT
/* The trace files a `cuptrace run` wrote, for `run --stats / --report`:
 * those under the output pattern's directory whose names fit the pattern,
 * written since the run began, of its run or job id. Inside a launcher's
 * job (every rank runs `cuptrace run`) one rank, the lowest that traces,
 * waits for the other ranks' files and summarises the job. */
#ifndef CT_RUN_FILES_H
#define CT_RUN_FILES_H

#include <stddef.h>
#include <time.h>

struct ct_config;

/* Paths as found (relative to the current directory when the pattern
 * is). */
struct run_files {
	char **v;
	size_t n, cap;
};

/* Where the files of output pattern pat are: dir, the pattern's directory
 * up to its first escape (searched below), and glob, an fnmatch pattern
 * their paths fit. */
void run_files_where(const char *pat, char *dir, size_t dlen, char *glob, size_t glen);
/* The *.ctr files under dir fitting glob, written since t0, of the job
 * (header job id) job when not NULL; sorted by path. */
void run_files_find(const char *dir, const char *glob, const struct timespec *t0, const char *job,
		    struct run_files *f);
void run_files_free(struct run_files *f);

/* A launcher's job this process is a rank of (world 0: none). */
struct run_job {
	long rank, world;
	int leader;    /* this rank summarises the job */
	long expected; /* ranks whose files it waits for; 0: until quiet */
	int traces;    /* this rank traces (CUPTRACE_RANKS) */
};

/* The job this run is a rank of, by the launcher's variables. The summary
 * is made by the lowest rank that traces (cfg's CUPTRACE_RANKS): with
 * local:L, the rank L (ranks placed by node, as Open MPI and srun place
 * them by default); the ranks it waits for are counted the same way (0
 * without a local size: it waits until the files are quiet). */
void run_job_of(const struct ct_config *cfg, struct run_job *j);
/* The ranks that summarise with `cuptrace run --stats/--report` say so
 * with a marker file in the output directory (dir), named by the job id
 * and the rank: a rank that a wrapper script ran without cuptrace (`if
 * [ $RANK = 0 ]; then cuptrace run --stats ...; else ./app; fi`) says
 * nothing and is not waited for. run_job_say writes this rank's at the
 * start; run_job_said, after CMD and no sooner than 2 s after the start
 * (a rank whose program ended at once would miss a slower one's), makes the lowest rank that said so the
 * summarising one and the ranks that said so those it waits for (j is
 * left as it is when none did), and a rank that does not summarise
 * removes its marker; run_job_unsay, once the summary is made, waits (5 s
 * at most) for the others' markers to go and removes this rank's. */
void run_job_say(const struct run_job *j, const char *dir, const char *id);
void run_job_said(struct run_job *j, const char *dir, const char *id,
		  const struct timespec *t0);
void run_job_unsay(const struct run_job *j, const char *dir, const char *id);
/* The summarising rank waits until every file of every rank it expects is
 * finished (a rank's capture windows, its forked children's), or until no
 * trace file has changed for 10 s (a rank that died or hangs elsewhere:
 * the summary then says its file was cut short). Says on stderr that it
 * waits after a second. */
void run_job_wait(const struct run_job *j, const char *dir, const char *glob,
		  const struct timespec *t0, const char *id);

#endif
