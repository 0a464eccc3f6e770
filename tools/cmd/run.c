// SPDX-License-Identifier: MIT
/* cuptrace run: validate the settings, set the environment, exec CMD.
 * Every option maps onto one CUPTRACE_* variable; the exec keeps CMD's
 * exit status and signals exactly as they are. nsys profile's options are
 * taken too (run_nsys.h). */
#include "cmd/cmd.h"
#include "cmd/run_nsys.h"
#include "cmd/run_stats.h"
#include "config.h"
#include "rankenv.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const struct {
	const char *opt;
	char short_opt;
	const char *var;
	const char *help;
} opts[] = {
	{"output", 'o', "CUPTRACE_OUTPUT", "file pattern: %r rank, %l local rank, %w world size, %h host, %p pid, %q{VAR}, %%"},
	{"trace", 't', "CUPTRACE_TRACE", "sources: kernel,memcpy,api,sync,memory,nvtx,nccl,torch,mpi; cuda; none"},
	{"torch", 0, "CUPTRACE_TORCH", "what the torch source adds to operators: shapes,memory,stack; none"},
	{"ranks", 'r', "CUPTRACE_RANKS", "ranks that trace: all, 0,2,8-15, local:0, local:0@0-7"},
	{"delay", 'y', "CUPTRACE_DELAY", "seconds before capture starts"},
	{"duration", 'd', "CUPTRACE_DURATION", "seconds capture lasts"},
	{"capture", 'c', "CUPTRACE_CAPTURE", "always, api, nvtx:NAME[@DOMAIN]"},
	{"capture-repeat", 0, "CUPTRACE_CAPTURE_REPEAT", "capture windows for api/nvtx (0 = unlimited)"},
	{"steps", 0, "CUPTRACE_STEPS", "skip_first=S,wait=W,warmup=U,active=A,repeat=R"},
	{"step-range", 0, "CUPTRACE_STEP_RANGE", "NVTX range name that marks a step"},
	{"buffer-mb", 'b', "CUPTRACE_BUFFER_MB", "in-memory budget per process (MB)"},
	{"log", 'l', "CUPTRACE_LOG", "quiet, warn, info, debug"},
	{"hang-timeout", 0, "CUPTRACE_HANG_TIMEOUT", "seconds an NCCL operation or MPI collective may stay in flight before the trace is flushed and one line says so"},
	{"flight", 0, "CUPTRACE_FLIGHT", "flight recorder: keep the last SECONDS in memory, write nothing until a trigger (hang, crash, failure, cuptrace dump) writes them"},
	{"flight-mb", 0, "CUPTRACE_FLIGHT_MB", "the flight recorder's memory per process (MB, default 64)"},
	{"clock", 0, "CUPTRACE_CLOCK", "timestamps read from: auto (the TSC where invariant), tsc, monotonic"},
};
#define NOPTS (sizeof opts / sizeof *opts)

static void help(FILE *f)
{
	fprintf(f, "usage: cuptrace run [options] [--] CMD [ARGS...]\n\n"
		   "Runs CMD with libcuptrace.so preloaded. Each option sets one variable;\n"
		   "variables already in the environment apply too.\n\n");
	for (size_t i = 0; i < NOPTS; i++) {
		char left[48];
		if (opts[i].short_opt)
			snprintf(left, sizeof left, "-%c, --%s V", opts[i].short_opt, opts[i].opt);
		else
			snprintf(left, sizeof left, "    --%s V", opts[i].opt);
		fprintf(f, "  %-26s %s (%s)\n", left, opts[i].help, opts[i].var);
	}
	fprintf(f, "  %-26s %s\n", "    --stats[=LIST]",
		"when CMD ends, print `cuptrace stats` reports (LIST: comma-separated\n"
		"                             names, default all; `--stats LIST` works too) for the\n"
		"                             trace files this run wrote; in a launcher's job, once, by\n"
		"                             the lowest traced rank, after the other ranks' files");
	fprintf(f, "  %-26s %s\n", "    --report OUT.html",
		"when CMD ends, write `cuptrace report -o OUT.html` over the trace\n"
		"                             files this run wrote (with --stats too: both; in a job,\n"
		"                             as --stats, by one rank)");
	fprintf(f, "\nnsys profile's options are taken too, with nsys's meaning: -t's tracer names,\n"
		   "-c/--capture-range, -p, --capture-range-end, --stats=true, --export=sqlite (when\n"
		   "CMD ends, X.sqlite beside each X.ctr it wrote), --cuda-memory-usage, -e, ...; one\n"
		   "cuptrace has not (-s, -f, --gpu-metrics-devices, ...) is said once and ignored.\n"
		   "As nsys adds .nsys-rep, -o NAME gets .ctr (a directory does not).\n"
		   "docs/cuptrace-run.md, \"Coming from nsys profile\".\n");
	fprintf(f, "\nExit status: CMD's (128+N when CMD is killed by signal N); 2 for a bad\n"
		   "option or an output location where no file can be created (checked, and\n"
		   "its directory created, before CMD starts); 127 when CMD cannot be found.\n");
}

/* build/bin/cuptrace -> build/lib/libcuptrace.so */
static int find_lib(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	char *dir = dirname(exe);
	char cand[PATH_MAX + 64];
	snprintf(cand, sizeof cand, "%s/../lib/libcuptrace.so", dir);
	if (!realpath(cand, out) || access(out, R_OK))
		return -1;
	(void)len;
	return 0;
}

static char warned[4096]; /* names warned about, for CT_WARNED_VAR */

static void add_warned(const char *name)
{
	size_t n = strlen(warned);
	snprintf(warned + n, sizeof warned - n, "%s%s", n ? "," : "", name);
}

static void warn_unknown(const char *name, const char *closest)
{
	say_warning("unknown variable %s (did you mean %s?)", name, closest);
	add_warned(name);
}

static const struct ct_config *run_cfg; /* for warn_unused's values */

static void warn_unused(const char *name, const char *why)
{
	char v[64] = "";
	if (!strcmp(name, "CUPTRACE_HANG_TIMEOUT"))
		snprintf(v, sizeof v, "%.9g", run_cfg->hang_timeout);
	else if (!strcmp(name, "CUPTRACE_TORCH"))
		ct_torch_str(run_cfg->torch, v, sizeof v);
	say_warning("%s=%s %s", name, v, why);
	add_warned(name);
}

/* Where the library will write: the directory part of the pattern up to
 * its first %-escape (the rest depends on the rank, host or pid). Created
 * as the library would create it, then a file is made there and removed.
 * -1 with the reason in why when nothing could be written there. */
static int check_output(const char *pat, char *why, size_t wlen)
{
	const char *slash = strrchr(pat, '/');
	size_t n = slash ? (size_t)(slash - pat) : 0;
	const char *pc = memchr(pat, '%', n);
	if (pc) { /* back to the slash before the component with the escape */
		n = (size_t)(pc - pat);
		while (n && pat[n - 1] != '/')
			n--;
		if (n)
			n--;
	}
	char dir[PATH_MAX];
	if (n >= sizeof dir - 32) {
		snprintf(why, wlen, "the directory name is too long");
		return -1;
	}
	if (n)
		memcpy(dir, pat, n), dir[n] = 0;
	else
		snprintf(dir, sizeof dir, "%s", pat[0] == '/' ? "/" : ".");
	for (char *p = dir + 1; *p; p++) { /* mkdir -p */
		if (*p != '/')
			continue;
		*p = 0;
		int bad = mkdir(dir, 0777) && errno != EEXIST;
		*p = '/';
		if (bad) {
			*p = 0;
			snprintf(why, wlen, "cannot create the directory %.300s: %s", dir, strerror(errno));
			return -1;
		}
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snprintf(why, wlen, "cannot create the directory %.300s: %s", dir, strerror(errno));
		return -1;
	}
	char probe[PATH_MAX + 32];
	snprintf(probe, sizeof probe, "%s/.cuptrace-probe-XXXXXX", dir);
	int fd = mkostemp(probe, O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, wlen, "cannot create a file in %.300s: %s", dir, strerror(errno));
		return -1;
	}
	close(fd);
	unlink(probe);
	/* The file's own name: its fixed characters alone must fit (the
	 * escapes' values are not known here). */
	const char *base = slash ? slash + 1 : pat;
	size_t fixed = 0;
	for (const char *q = base; *q; q++) {
		if (*q != '%' || !q[1]) {
			fixed++;
		} else if (q[1] == '%') {
			fixed++, q++;
		} else if (q[1] == 'q' && q[2] == '{' && strchr(q, '}')) {
			q = strchr(q, '}');
		} else {
			q++;
		}
	}
	if (fixed > NAME_MAX) {
		snprintf(why, wlen, "the file name is longer than %d characters", NAME_MAX);
		return -1;
	}
	return 0;
}

/* lib appended to LD_PRELOAD, unless there already. */
static void preload(const char *lib)
{
	const char *pre = getenv("LD_PRELOAD");
	if (pre && strstr(pre, lib))
		return;
	size_t n = strlen(lib) + (pre ? strlen(pre) : 0) + 2;
	char *v = xmalloc(n);
	snprintf(v, n, "%s%s%s", pre ? pre : "", pre && *pre ? ":" : "", lib);
	setenv("LD_PRELOAD", v, 1);
	free(v);
}

static const char *option_set[NOPTS]; /* values given as options */

static size_t var_index(const char *var)
{
	size_t i;
	for (i = 0; i < NOPTS && strcmp(opts[i].var, var); i++)
		;
	return i;
}

static const char *env_unless_option(const char *var)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (option_set[i] && !strcmp(opts[i].var, var))
			return NULL;
	return getenv(var);
}

/* "nvtx_sum,bogus": a list of reports, not a command (--stats LIST CMD). */
static int looks_like_list(const char *s)
{
	return strchr(s, ',') && strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_,") == strlen(s);
}

int cmd_run(int argc, char **argv)
{
	static struct option lo[NOPTS + 4 + NSYS_MAX];
	char shorts[64] = "+h";
	size_t ns = 2;
	for (size_t i = 0; i < NOPTS; i++) {
		lo[i] = (struct option){opts[i].opt, required_argument, NULL, 1000 + (int)i};
		if (opts[i].short_opt) {
			shorts[ns++] = opts[i].short_opt;
			shorts[ns++] = ':';
		}
	}
	snprintf(shorts + ns, sizeof shorts - ns, "%s", NSYS_SHORTS);
	lo[NOPTS] = (struct option){"help", no_argument, NULL, 'h'};
	lo[NOPTS + 1] = (struct option){"stats", optional_argument, NULL, 999};
	lo[NOPTS + 2] = (struct option){"report", required_argument, NULL, 998};
	lo[nsys_long_options(lo, NOPTS + 3)] = (struct option){0, 0, 0, 0};
	struct nsys_opts nsys;
	nsys_init(&nsys);
	char trace_buf[128];
	int stats = 0;
	const char *stats_list = NULL, *report = NULL;

	struct ct_config cfg;
	char err[512];
	const char **set = option_set;
	memset(option_set, 0, sizeof option_set);
	int c;
	optind = 1;
	opterr = 1;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		size_t i;
		if (c == 'h') {
			help(stdout);
			return 0;
		}
		if (c == 998) {
			report = optarg;
			if (report[0] == '-' || !report[0]) { /* `--report -- CMD`: a page named "--" */
				say_cmd("--report needs the page's file name, not '%s'", report);
				return 2;
			}
			if (cmd_out_dir(report, err, sizeof err)) { /* before CMD runs, as -o */
				say_cmd("--report %s: %s; not started", report, err);
				return 2;
			}
			continue;
		}
		if (c == 999) {
			stats = 1;
			stats_list = optarg;
			/* `--stats LIST CMD`: a list of report names before CMD; nsys's
			 * `--stats true CMD` */
			if (!optarg && optind + 1 < argc &&
			    (stats_known_reports(argv[optind]) || looks_like_list(argv[optind]) ||
			     !strcmp(argv[optind], "true") || !strcmp(argv[optind], "false")))
				stats_list = argv[optind++];
			if (stats_list && (!strcmp(stats_list, "true") || !strcmp(stats_list, "false"))) {
				stats = stats_list[0] == 't';
				stats_list = NULL;
				continue;
			}
			if (stats_list && !stats_known_reports(stats_list)) {
				say_cmd("--stats=%s: unknown report (see cuptrace stats --help)",
				        stats_list);
				return 2;
			}
			continue;
		}
		int taken = nsys_take(&nsys, c, optarg, argc, argv, &optind);
		if (taken == 2)
			return 2;
		if (!taken)
			continue;
		if (c >= 1000 && c < 1000 + (int)NOPTS)
			i = (size_t)(c - 1000);
		else {
			for (i = 0; i < NOPTS && opts[i].short_opt != c; i++)
				;
			if (i == NOPTS) {
				help(stderr);
				return 2;
			}
		}
		set[i] = optarg;
		if (!strcmp(opts[i].var, "CUPTRACE_TRACE") && !(set[i] = nsys_trace(&nsys, optarg)))
			return 2;
		if (!strcmp(opts[i].var, "CUPTRACE_OUTPUT"))
			set[i] = nsys_output(&nsys, optarg);
		if (c == 'd')
			nsys.dash_d = optarg;
	}
	if (nsys_settle(&nsys, &set[var_index("CUPTRACE_CAPTURE")],
			&set[var_index("CUPTRACE_CAPTURE_REPEAT")], getenv("CUPTRACE_CAPTURE")))
		return 2;
	/* The environment, but for what an option sets (a bad value there does
	 * not matter then), then the options. */
	if (ct_config_parse(&cfg, env_unless_option, err, sizeof err)) {
		say_error("%s", err);
		return 2;
	}
	ct_config_check_names(environ, warn_unknown);
	for (size_t i = 0; i < NOPTS; i++)
		if (set[i] && ct_config_set(&cfg, opts[i].var, set[i], err, sizeof err)) {
			say_error("%s", err);
			return 2;
		}
	if (nsys_sources(&nsys, &cfg.sources)) {
		ct_sources_str(cfg.sources, trace_buf, sizeof trace_buf);
		set[var_index("CUPTRACE_TRACE")] = trace_buf;
	}
	run_cfg = &cfg;
	ct_config_check_unused(&cfg, environ, warn_unused);
	if (optind >= argc) {
		say_cmd("no command given");
		help(stderr);
		return 2;
	}
	/* An existing directory without its '/' (-o traces) is one, as the
	 * library takes it: --stats looks for the files in it. */
	struct stat ost;
	size_t ol = strlen(cfg.output);
	if (ol && ol + 1 < sizeof cfg.output && cfg.output[ol - 1] != '/' && !strchr(cfg.output, '%') &&
	    !stat(cfg.output, &ost) && S_ISDIR(ost.st_mode)) {
		cfg.output[ol] = '/', cfg.output[ol + 1] = 0;
	}
	/* A node-local selection where the launcher gives no local rank would
	 * make every rank local rank 0: refused here, as the library would. */
	struct ct_rankinfo ri;
	ct_rank_detect(&ri, (const char *(*)(const char *))getenv);
	if (ct_ranks_decide(&cfg.ranks, &ri, err, sizeof err) < 0) {
		const char *v = NULL;
		for (size_t i = 0; i < NOPTS; i++)
			if (!strcmp(opts[i].var, "CUPTRACE_RANKS"))
				v = set[i];
		say_error("CUPTRACE_RANKS=%s: %s; not started", v ? v : getenv("CUPTRACE_RANKS"), err);
		return 2;
	}
	if (check_output(cfg.output, err, sizeof err)) {
		say_error("CUPTRACE_OUTPUT=%s: %s; not started", cfg.output, err);
		return 2;
	}
	if (warned[0])
		setenv(CT_WARNED_VAR, warned, 1);
	char lib[PATH_MAX];
	if (find_lib(lib, sizeof lib)) {
		say_error("cannot find libcuptrace.so next to this program "
		          "(expected ../lib/libcuptrace.so)");
		return 2;
	}
	for (size_t i = 0; i < NOPTS; i++)
		if (set[i])
			setenv(opts[i].var, set[i], 1);
	setenv("CUPTRACE_OUTPUT", cfg.output, 1); /* the effective one (a directory's '/' added) */
	/* A relative output is where `cuptrace run` started: CMD's children
	 * started after a chdir wrote theirs under the new directory (and
	 * --stats did not find them). */
	char cwd[PATH_MAX];
	if (cfg.output[0] != '/' && getcwd(cwd, sizeof cwd)) {
		const char *rel = !strncmp(cfg.output, "./", 2) ? cfg.output + 2 : cfg.output;
		char abs_out[sizeof cfg.output];
		if ((size_t)snprintf(abs_out, sizeof abs_out, "%s/%s", cwd, rel) < sizeof abs_out) {
			snprintf(cfg.output, sizeof cfg.output, "%s", abs_out);
			setenv("CUPTRACE_OUTPUT", cfg.output, 1);
		}
	}
	/* Appended, not prepended: a sanitizer runtime the user preloads
	 * must stay first. The mpi source's wrappers follow the library,
	 * only when asked for: without them no MPI call is intercepted. */
	preload(lib);
	if (cfg.sources & CT_SRC_MPI) {
		char mpi[PATH_MAX + 32];
		snprintf(mpi, sizeof mpi, "%.*s/libcuptrace-mpi.so",
		         (int)(strrchr(lib, '/') ? strrchr(lib, '/') - lib : 1), lib);
		if (access(mpi, R_OK)) {
			say_error("-t mpi: cannot find %s next to libcuptrace.so", mpi);
			return 2;
		}
		preload(mpi);
	}
	if (stats || report || nsys.export_sqlite)
		return run_then_stats(argv + optind, &cfg, stats, stats_list, report,
				      nsys.export_sqlite);
	execvp(argv[optind], argv + optind);
	int e = errno;
	say("%s: %s", argv[optind], strerror(e));
	return e == ENOENT ? 127 : 126;
}
