// SPDX-License-Identifier: MIT
/* cuptrace dump PID... | DIR...: asks processes in flight mode
 * (CUPTRACE_FLIGHT) to write their window, through the marker file every
 * rank of a job polls in the job's output directory
 * (docs/flight-recorder.md); then waits and prints the files written. */
#include "cmd.h"
#include "config.h"
#include "pattern.h"
#include "rankenv.h"
#include "util/say.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MARKER ".cuptrace-dump" /* libtrace/flight.h's CT_FL_MARKER */

static void help(FILE *f)
{
	fputs("usage: cuptrace dump [--wait SECONDS] PID... | DIR...\n\n"
	      "Asks processes traced in flight mode (cuptrace run --flight, CUPTRACE_FLIGHT)\n"
	      "to write the last seconds they keep in memory as trace files. It creates the\n"
	      "marker file .cuptrace-dump in the job's output directory (DIR, or the one a\n"
	      "PID's CUPTRACE_OUTPUT names): every rank of the job watching it writes its\n"
	      "window within about a second. Then it waits (--wait SECONDS, from 0 to 86400;\n"
	      "default 3) and prints the trace files that appeared; exit status 1 when none\n"
	      "did, 2 for a usage error.\n",
	      f);
}

/* The process's environment, NUL-separated, for the pattern's %q{VAR}. */
static char penv[1 << 16];
static size_t penv_len;

static const char *penv_get(const char *name)
{
	size_t n = strlen(name);
	for (size_t i = 0; i < penv_len; i += strlen(penv + i) + 1)
		if (!strncmp(penv + i, name, n) && penv[i + n] == '=')
			return penv + i + n + 1;
	return NULL;
}

/* The job directory of process pid, from its CUPTRACE_OUTPUT, in dir. */
static int pid_dir(const char *pid, char *dir, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%s/environ", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		say("%s: no such process, or not ours (%s)", pid, strerror(errno));
		return -1;
	}
	ssize_t n = read(fd, penv, sizeof penv - 1);
	close(fd);
	penv_len = n > 0 ? (size_t)n : 0;
	penv[penv_len] = 0;
	if (!penv_get("CUPTRACE_FLIGHT"))
		say_cmd_note("process %s has no CUPTRACE_FLIGHT: it does not dump", pid);
	const char *out = penv_get("CUPTRACE_OUTPUT");
	struct ct_rankinfo ri;
	ct_rank_detect(&ri, penv_get);
	char host[256] = "unknown";
	gethostname(host, sizeof host - 1);
	struct ct_pattern_vals v = {.rank = ri.rank,
	                            .local_rank = ri.local_rank,
	                            .world_size = ri.world_size,
	                            .host = host,
	                            .pid = atol(pid),
	                            .getenv = penv_get};
	char cwdl[64], cwd[PATH_MAX] = "";
	snprintf(cwdl, sizeof cwdl, "/proc/%s/cwd", pid);
	ssize_t k = readlink(cwdl, cwd, sizeof cwd - 1);
	cwd[k > 0 ? k : 0] = 0;
	/* An output naming an existing directory (-o traces) is one, as the
	 * library has it (from the process's working directory). */
	const char *pat = out ? out : CT_DEFAULT_OUTPUT;
	char full[PATH_MAX], whole[2 * PATH_MAX + 2], pd[PATH_MAX + 2], rel[PATH_MAX];
	struct stat st;
	int is_dir = !ct_pattern_expand(pat, &v, full, sizeof full);
	if (is_dir) {
		snprintf(whole, sizeof whole, "%s%s%s", full[0] == '/' ? "" : cwd,
		         full[0] == '/' ? "" : "/", full);
		is_dir = !stat(whole, &st) && S_ISDIR(st.st_mode);
	}
	snprintf(pd, sizeof pd, "%s%s", pat, is_dir ? "/" : "");
	if (ct_pattern_job_dir(pd, &v, rel, sizeof rel)) {
		say("%s: its CUPTRACE_OUTPUT cannot be read", pid);
		return -1;
	}
	if (k < 0 && rel[0] != '/') {
		say("%s: its working directory cannot be read (%s)", pid, strerror(errno));
		return -1;
	}
	if (rel[0] == '/')
		snprintf(dir, len, "%s", rel);
	else
		snprintf(dir, len, "%.2000s/%.2000s", cwd, rel);
	return 0;
}

/* mkdir -p dir: a job in flight mode has written nothing, not even it. */
static void make_dirs(const char *dir)
{
	char d[PATH_MAX];
	snprintf(d, sizeof d, "%s/", dir);
	for (char *p = d + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(d, 0777);
			*p = '/';
		}
}

/* The marker, whole and new (a rename over any older one). */
static int make_marker(const char *dir)
{
	char m[PATH_MAX], tmp[PATH_MAX + 32], host[256] = "unknown";
	gethostname(host, sizeof host - 1);
	snprintf(m, sizeof m, "%.4000s/" MARKER, dir);
	snprintf(tmp, sizeof tmp, "%s.dump.%d", m, (int)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f) {
		say("cannot create a marker in %s: %s", dir, strerror(errno));
		return -1;
	}
	fprintf(f,
	        "cuptrace dump (host %s, pid %d)\ncause=cuptrace dump\nhost=%s\npid=%d\n"
	        "time=%lld\n",
	        host, (int)getpid(), host, (int)getpid(), (long long)time(NULL));
	if (fclose(f) || rename(tmp, m)) {
		say("cannot create %s: %s", m, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Prints the .ctr files under dir (two levels) changed since t; their count. */
static int list_new(const char *dir, const struct timespec *t, int depth)
{
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char p[PATH_MAX];
		snprintf(p, sizeof p, "%.3000s/%.255s", dir, e->d_name);
		struct stat st;
		if (stat(p, &st))
			continue;
		size_t l = strlen(e->d_name);
		if (S_ISDIR(st.st_mode) && depth < 2)
			n += list_new(p, t, depth + 1);
		else if (S_ISREG(st.st_mode) && l > 4 && !strcmp(e->d_name + l - 4, ".ctr") &&
		         (st.st_mtim.tv_sec > t->tv_sec ||
		          (st.st_mtim.tv_sec == t->tv_sec && st.st_mtim.tv_nsec >= t->tv_nsec))) {
			printf("%s\n", p);
			n++;
		}
	}
	closedir(d);
	return n;
}

/* --wait SECONDS: a number from 0 to a day (nanosleep's time_t and a
 * reasonable wait); anything else is a usage error, before any marker. */
static int parse_wait(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !(v >= 0) || !(v <= 86400)) {
		say_cmd("--wait %s: expected seconds, from 0 to 86400", s);
		return -1;
	}
	*out = v;
	return 0;
}

/* Whether dirs[n] is a directory of dirs[0..n-1] (ranks of one job, DIR
 * and DIR/, a PID's directory and its name): one marker and one listing
 * each. Compared by canonical path (real[]); listed as the user wrote it,
 * less a trailing '/'. */
static int seen_dir(char (*dirs)[PATH_MAX], char (*real)[PATH_MAX], int n)
{
	size_t l = strlen(dirs[n]);
	while (l > 1 && dirs[n][l - 1] == '/')
		dirs[n][--l] = 0;
	if (!realpath(dirs[n], real[n]))
		snprintf(real[n], PATH_MAX, "%s", dirs[n]);
	for (int i = 0; i < n; i++)
		if (!strcmp(real[i], real[n]))
			return 1;
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option lo[] = {{"wait", 1, 0, 'w'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	double wait_s = 3;
	int c;
	while ((c = getopt_long(argc, argv, "w:h", lo, NULL)) != -1) {
		if (c != 'w')
			return cmd_usage(c, help);
		if (parse_wait(optarg, &wait_s))
			return 2;
	}
	if (optind >= argc)
		return cmd_usage(0, help);
	static char dirs[64][PATH_MAX], real[64][PATH_MAX];
	int nd = 0;
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	t0.tv_sec -= 1; /* mtimes of a file system with coarse times */
	for (int i = optind; i < argc && nd < 64; i++) {
		const char *a = argv[i];
		struct stat st;
		int is_pid = a[strspn(a, "0123456789")] == 0;
		if (is_pid && pid_dir(a, dirs[nd], sizeof dirs[nd]))
			continue;
		if (is_pid)
			make_dirs(dirs[nd]);
		if (!is_pid) {
			if (stat(a, &st) || !S_ISDIR(st.st_mode)) {
				say("%s: not a directory nor a process id", a);
				continue;
			}
			snprintf(dirs[nd], sizeof dirs[nd], "%s", a);
		}
		if (!seen_dir(dirs, real, nd) && !make_marker(dirs[nd]))
			nd++;
	}
	if (!nd)
		return 1;
	struct timespec nap = {(time_t)wait_s, (long)((wait_s - (double)(time_t)wait_s) * 1e9)};
	nanosleep(&nap, NULL);
	int n = 0;
	for (int i = 0; i < nd; i++)
		n += list_new(dirs[i], &t0, 0);
	if (!n)
		say("no trace file appeared within %.9g s", wait_s);
	return n ? 0 : 1;
}
