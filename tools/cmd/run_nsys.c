// SPDX-License-Identifier: MIT
/* `cuptrace run`'s share of `nsys profile`'s options (run_nsys.h). The
 * options and their values are those of NVIDIA's nsys CLI documentation
 * ("CLI Profile Command Switch Options"); the Linux ones a batch script
 * may carry are read, so that CMD is found where nsys finds it. */
#include "cmd/run_nsys.h"
#include "config.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* How an option takes its value: VAL, always (the next argument when not
 * after '='); BOOL, true or false, which may be left out (then true). */
enum { VAL, BOOL };

/* What an option does. SAID: nothing in cuptrace; said once, unless the
 * value is one of quiet. The others are taken by nsys_take. */
enum { SAID, RANGE, RANGE_END, NVTX_CAPTURE, MEMORY, EXPORT, ENV, KILL, NCCL, REFUSED };

/* --capture-range-end's kinds */
enum { END_NONE, END_STOP, END_STOP_SHUTDOWN, END_REPEAT, END_REPEAT_SHUTDOWN };

#define NO_SAMPLES "cuptrace takes no CPU samples"
#define NO_OSRT    "cuptrace does not trace OS runtime calls"
#define NO_METRICS "cuptrace samples no GPU metrics"
#define NO_EVENTS  "cuptrace samples no CPU events"
#define NO_IB      "cuptrace collects no InfiniBand data"

static const struct nsys_opt {
	const char *name;
	char short_opt; /* 'c' and 'b' are cuptrace's too: the value tells */
	char takes;
	char does;
	const char *quiet; /* values taken without a word: "a,b"; "x*" any
	                    * beginning with x; "*" any */
	const char *why;   /* what cuptrace does instead */
} nopts[] = {
    {"capture-range", 'c', VAL, RANGE, NULL, NULL},
    {"capture-range-end", 0, VAL, RANGE_END, NULL, NULL},
    {"nvtx-capture", 'p', VAL, NVTX_CAPTURE, NULL, NULL},
    {"cuda-memory-usage", 0, BOOL, MEMORY, NULL, NULL},
    {"export", 0, VAL, EXPORT, NULL, NULL},
    {"env-var", 'e', VAL, ENV, NULL, NULL},
    {"kill", 0, VAL, KILL, NULL, NULL},
    {"nccl-trace", 0, VAL, NCCL, NULL, NULL},
    {"command-file", 0, VAL, REFUSED, NULL, NULL},
    {"force-overwrite", 'f', BOOL, SAID, "false",
     "cuptrace never overwrites a trace: a name in use gets .1, .2, ... before .ctr, with a "
     "warning"},
    {"stop-on-exit", 'x', BOOL, SAID, "true", "capture ends when CMD ends, or after --duration"},
    {"show-output", 'w', BOOL, SAID, "true",
     "CMD's output goes where it goes untraced; the trace keeps no copy"},
    {"sample", 's', VAL, SAID, "none", NO_SAMPLES},
    {"cpuctxsw", 0, VAL, SAID, "none", "cuptrace does not trace thread scheduling"},
    {"backtrace", 'b', VAL, SAID, "none", NO_SAMPLES},
    {"samples-per-backtrace", 0, VAL, SAID, NULL, NO_SAMPLES},
    {"sampling-frequency", 0, VAL, SAID, NULL, NO_SAMPLES},
    {"sampling-period", 0, VAL, SAID, NULL, NO_SAMPLES},
    {"sampling-trigger", 0, VAL, SAID, NULL, NO_SAMPLES},
    {"cudabacktrace", 0, VAL, SAID, "none", "cuptrace records no backtraces of CUDA calls"},
    {"python-backtrace", 0, VAL, SAID, "none", "cuptrace records no backtraces"},
    {"python-sampling", 0, BOOL, SAID, "false", "cuptrace takes no Python samples"},
    {"python-sampling-frequency", 0, VAL, SAID, NULL, "cuptrace takes no Python samples"},
    {"python-functions-trace", 0, VAL, SAID, NULL,
     "cuptrace adds no ranges to Python functions (its Python package adds torch's: "
     "python_shim/README.md)"},
    {"pytorch", 0, VAL, SAID, "none",
     "cuptrace's Python package adds torch's ranges: python_shim/README.md"},
    {"dask", 0, VAL, SAID, "none", "cuptrace adds no ranges to Dask functions"},
    {"osrt-threshold", 0, VAL, SAID, NULL, NO_OSRT},
    {"osrt-backtrace-depth", 0, VAL, SAID, NULL, NO_OSRT},
    {"osrt-backtrace-stack-size", 0, VAL, SAID, NULL, NO_OSRT},
    {"osrt-backtrace-threshold", 0, VAL, SAID, NULL, NO_OSRT},
    {"osrt-file-access", 0, BOOL, SAID, "false", NO_OSRT},
    {"mpi-impl", 0, VAL, SAID, "openmpi,mpich",
     "cuptrace tells the MPI implementation at run time (-t mpi)"},
    /* forked children are traced anyway, each into its own file */
    {"trace-fork-before-exec", 0, BOOL, SAID, "*", NULL},
    {"wait", 0, VAL, SAID, "primary",
     "cuptrace run ends with CMD; processes CMD leaves running write their own files when they "
     "end"},
    {"session-new", 0, VAL, SAID, NULL, "cuptrace has no sessions"},
    {"session", 0, VAL, SAID, NULL, "cuptrace has no sessions"},
    {"gpu-metrics-device", 0, VAL, SAID, "none", NO_METRICS},
    {"gpu-metrics-devices", 0, VAL, SAID, "none", NO_METRICS},
    {"gpu-metrics-frequency", 0, VAL, SAID, NULL, NO_METRICS},
    {"gpu-metrics-set", 0, VAL, SAID, NULL, NO_METRICS},
    {"gpuctxsw", 0, BOOL, SAID, "false", "cuptrace does not trace GPU context switches"},
    {"cuda-graph-trace", 0, VAL, SAID, "node*",
     "cuptrace records each kernel of a CUDA graph, as node does"},
    {"cuda-trace-all-apis", 0, BOOL, SAID, "false",
     "cuptrace records the CUDA calls docs/recording.md lists"},
    {"cuda-trace-scope", 0, VAL, SAID, "process-tree", "cuptrace traces CMD and its children"},
    {"cuda-um-cpu-page-faults", 0, BOOL, SAID, "false",
     "cuptrace records no unified memory page faults"},
    {"cuda-um-gpu-page-faults", 0, BOOL, SAID, "false",
     "cuptrace records no unified memory page faults"},
    {"cuda-event-trace", 0, VAL, SAID, "false,auto",
     "cuptrace records event records and waits (sync), not their completion on the GPU"},
    {"cuda-flush-interval", 0, VAL, SAID, NULL,
     "cuptrace flushes CUPTI's buffers every 500 ms and when capture stops"},
    /* cuptrace flushes when capture stops */
    {"flush-on-cudaprofilerstop", 0, BOOL, SAID, "*", NULL},
    {"start-later", 'Y', BOOL, SAID, "false",
     "cuptrace has no nsys start: capture starts as without it"},
    {"duration-frames", 0, VAL, SAID, NULL, "cuptrace counts no frames"},
    {"start-frame-index", 0, VAL, SAID, NULL, "cuptrace counts no frames"},
    {"hotkey-capture", 0, VAL, SAID, NULL, "cuptrace takes no hotkeys"},
    {"inherit-environment", 'n', BOOL, SAID, "true", "CMD gets this environment"},
    /* cuptrace keeps no environment */
    {"discard-environment", 0, BOOL, SAID, "*", NULL},
    {"run-as", 0, VAL, SAID, NULL, "CMD runs as the user who runs cuptrace"},
    {"debug-symbols", 0, VAL, SAID, NULL, "cuptrace resolves no symbols"},
    {"resolve-symbols", 0, BOOL, SAID, "*", NULL},
    {"show-source-info", 0, BOOL, SAID, "*", NULL},
    {"event-sample", 0, VAL, SAID, "none", NO_EVENTS},
    {"event-sampling-interval", 0, VAL, SAID, NULL, NO_EVENTS},
    {"event-sampling-frequency", 0, VAL, SAID, NULL, NO_EVENTS},
    {"event-sampling-multiplex-interval", 0, VAL, SAID, NULL, NO_EVENTS},
    {"cpu-core-events", 0, VAL, SAID, "none", NO_EVENTS},
    {"cpu-core-metrics", 0, VAL, SAID, "none", NO_EVENTS},
    {"cpu-socket-events", 0, VAL, SAID, "none", NO_EVENTS},
    {"cpu-socket-metrics", 0, VAL, SAID, "none", NO_EVENTS},
    {"cpu-cluster-events", 0, VAL, SAID, "none", NO_EVENTS},
    {"cpu-metrics", 0, VAL, SAID, "none", NO_EVENTS},
    {"os-events", 0, VAL, SAID, "none", NO_EVENTS},
    {"ftrace", 0, VAL, SAID, NULL, "cuptrace collects no ftrace events"},
    {"ftrace-keep-user-config", 0, BOOL, SAID, "false", "cuptrace collects no ftrace events"},
    {"gds-metrics", 0, BOOL, SAID, "false", "cuptrace collects no GPUDirect Storage metrics"},
    {"gds-libs-path", 0, VAL, SAID, NULL, "cuptrace collects no GPUDirect Storage metrics"},
    {"nic-metrics", 0, VAL, SAID, "none", "cuptrace collects no NIC metrics"},
    {"ib-switch-metrics-devices", 0, VAL, SAID, "none", NO_IB},
    {"ib-switch-metrics-nic-device", 0, VAL, SAID, NULL, NO_IB},
    {"ib-switch-congestion-devices", 0, VAL, SAID, "none", NO_IB},
    {"ib-switch-congestion-nic-device", 0, VAL, SAID, NULL, NO_IB},
    {"ib-switch-congestion-percent", 0, VAL, SAID, NULL, NO_IB},
    {"ib-switch-congestion-threshold-high", 0, VAL, SAID, NULL, NO_IB},
    {"ib-net-info-devices", 0, VAL, SAID, "none", NO_IB},
    {"ib-net-info-files", 0, VAL, SAID, "none", NO_IB},
    {"ib-net-info-output", 0, VAL, SAID, "none", NO_IB},
    {"gpu-video-devices", 0, VAL, SAID, "none", "cuptrace does not trace video devices"},
    {"nvtx-domain-include", 0, VAL, SAID, NULL, "cuptrace records every NVTX domain"},
    {"nvtx-domain-exclude", 0, VAL, SAID, NULL, "cuptrace records every NVTX domain"},
    {"syscall", 0, VAL, SAID, "none", "cuptrace does not trace system calls"},
    {"enable", 0, VAL, SAID, NULL, "cuptrace has no nsys plugins"},
    {"auto-report-name", 0, BOOL, SAID, "false", "cuptrace names its files by -o"},
    {"accelerator-trace", 0, VAL, SAID, "none", "cuptrace traces no other accelerators"},
};
#define NNOPTS (sizeof nopts / sizeof *nopts)

_Static_assert(NNOPTS <= NSYS_MAX, "run_nsys.h's NSYS_MAX holds every option");

void nsys_init(struct nsys_opts *o)
{
	memset(o, 0, sizeof *o);
	o->memory = o->nccl = o->kill = -1;
}

size_t nsys_long_options(struct option *lo, size_t n)
{
	for (size_t i = 0; i < NNOPTS; i++)
		lo[n++] = (struct option){
		    nopts[i].name, nopts[i].takes == BOOL ? optional_argument : required_argument,
		    NULL, NSYS_CODE + (int)i};
	return n;
}

/* Whether v is one of list's values ("a,b"; "x*": any beginning with x;
 * "*": any). */
static int listed(const char *list, const char *v)
{
	if (!list)
		return 0;
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		if (n && p[n - 1] == '*' ? !strncmp(v, p, n - 1)
		                         : strlen(v) == n && !strncmp(v, p, n))
			return 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* 1 the first time option i is to be said, 0 after. */
static int first_time(struct nsys_opts *o, size_t i)
{
	if (o->said[i])
		return 0;
	o->said[i] = 1;
	return 1;
}

static int bad(const char *name, const char *v, const char *expected)
{
	say_cmd("--%s=%s: expected %s", name, v, expected);
	return 2;
}

/* "repeat[:N][:mode]", "repeat-shutdown:N[:mode]" and the others into
 * o->end_kind and o->end_repeat; -1 when v is none of them. */
static int parse_end(struct nsys_opts *o, const char *v)
{
	static const char *const plain[] = {"none", "stop", "stop-shutdown"};
	for (int k = 0; k < 3; k++)
		if (!strcmp(v, plain[k])) {
			o->end_kind = k;
			o->end_repeat = k == END_NONE ? 0 : 1;
			return 0;
		}
	const char *p;
	if (!strncmp(v, "repeat-shutdown", 15)) {
		o->end_kind = END_REPEAT_SHUTDOWN;
		p = v + 15;
	} else if (!strncmp(v, "repeat", 6)) {
		o->end_kind = END_REPEAT;
		p = v + 6;
	} else {
		return -1;
	}
	o->end_repeat = 0;
	int have_n = 0, have_mode = 0;
	while (*p) {
		if (*p++ != ':')
			return -1;
		size_t n = strcspn(p, ":");
		if (n && strspn(p, "0123456789") == n && !have_n && !have_mode) {
			char *end;
			o->end_repeat = strtoul(p, &end, 10);
			if (!o->end_repeat || o->end_repeat > 1000000000ul)
				return -1;
			have_n = 1;
		} else if ((n == 5 && !strncmp(p, "defer", 5)) ||
		           (n == 4 && !strncmp(p, "sync", 4)) ||
		           (n == 5 && !strncmp(p, "async", 5))) {
			if (have_mode)
				return -1;
			have_mode =
			    1; /* when nsys writes its result files: cuptrace writes as it goes */
		} else {
			return -1;
		}
		p += n;
	}
	return o->end_kind == END_REPEAT_SHUTDOWN && !have_n ? -1 : 0;
}

/* -e A=B,C=D: each into the environment CMD gets (a comma begins a new
 * variable only where NAME= follows it). */
static int take_env(const char *v)
{
	char *copy = xstrdup(v), *p = copy;
	int rc = 0;
	while (*p) {
		size_t name =
		    strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		if (!name || isdigit((unsigned char)*p) || p[name] != '=') {
			rc = bad("env-var", v, "NAME=VALUE[,NAME=VALUE...]");
			break;
		}
		char *val = p + name + 1, *end = val;
		for (;;) { /* the value runs to the comma before the next NAME= */
			end += strcspn(end, ",");
			if (!*end)
				break;
			size_t m = strspn(
			    end + 1,
			    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
			if (m && !isdigit((unsigned char)end[1]) && end[1 + m] == '=')
				break;
			end++;
		}
		char *next = *end ? end + 1 : end;
		*end = 0;
		p[name] = 0;
		setenv(p, val, 1);
		p = next;
	}
	free(copy);
	return rc;
}

static int take_export(struct nsys_opts *o, size_t i, const char *v)
{
	static const char *const others = "arrow,arrowdir,hdf,jsonlines,parquetdir,text";
	char left[256] = "";
	for (const char *p = v;;) {
		size_t n = strcspn(p, ",");
		char one[64];
		snprintf(one, sizeof one, "%.*s", (int)(n < 63 ? n : 63), p);
		if (!strcmp(one, "sqlite"))
			o->export_sqlite = 1;
		else if (!strcmp(one, "none"))
			o->export_sqlite = 0;
		else if (listed(others, one))
			snprintf(left + strlen(left), sizeof left - strlen(left), "%s%s",
			         *left ? "," : "", one);
		else
			return bad("export", v,
			           "sqlite, none, or nsys's arrow, arrowdir, hdf, jsonlines, "
			           "parquetdir, text");
		if (!p[n])
			break;
		p += n + 1;
	}
	if (*left && first_time(o, i))
		say_cmd_note("--export=%s: %s left out (cuptrace writes SQLite, beside each trace: "
		             "--export=sqlite)",
		             v, left);
	return 0;
}

/* An option whose value may be left out: the next argument when it is
 * true or false. */
static const char *bool_value(const char *arg, int argc, char **argv, int *optind)
{
	if (arg)
		return arg;
	if (*optind < argc && (!strcmp(argv[*optind], "true") || !strcmp(argv[*optind], "false")))
		return argv[(*optind)++];
	return "true";
}

int nsys_take(struct nsys_opts *o, int c, const char *arg, int argc, char **argv, int *optind)
{
	size_t i;
	if (c >= NSYS_CODE && c < NSYS_CODE + (int)NNOPTS) {
		i = (size_t)(c - NSYS_CODE);
	} else {
		for (i = 0; i < NNOPTS && nopts[i].short_opt != c; i++)
			;
		if (i == NNOPTS)
			return 1;
		/* -c and -b: cuptrace's --capture and --buffer-mb unless the
		 * value is one of nsys's */
		if (c == 'c' && !listed("none,cudaProfilerApi,nvtx,hotkey", arg))
			return 1;
		if (c == 'b' && !listed("auto,fp,lbr,dwarf,none", arg))
			return 1;
	}
	const struct nsys_opt *n = &nopts[i];
	const char *v = n->takes == BOOL ? bool_value(arg, argc, argv, optind) : arg;
	if (n->takes == BOOL && strcmp(v, "true") && strcmp(v, "false"))
		return bad(n->name, v, "true or false");
	switch (n->does) {
	case RANGE:
		if (!listed("none,cudaProfilerApi,nvtx,hotkey", v))
			return bad(n->name, v, "none, cudaProfilerApi, nvtx or hotkey");
		o->range = v;
		break;
	case RANGE_END:
		if (parse_end(o, v))
			return bad(n->name, v,
			           "none, stop, stop-shutdown, repeat[:N][:mode] or "
			           "repeat-shutdown:N[:mode]");
		o->range_end = v;
		break;
	case NVTX_CAPTURE:
		if (!*v || *v == '@')
			return bad(n->name, v, "RANGE, RANGE@DOMAIN or RANGE@*");
		o->nvtx_capture = v;
		break;
	case MEMORY:
		o->memory = !strcmp(v, "true");
		break;
	case EXPORT:
		return take_export(o, i, v);
	case ENV:
		return take_env(v);
	case KILL:
		if (strcmp(v, "none") && strncmp(v, "sig", 3) &&
		    strspn(v, "0123456789") != strlen(v))
			return bad(n->name, v, "none, sigterm, sigkill or a signal number");
		o->kill = !!strcmp(v, "none");
		if (o->kill && first_time(o, i))
			say_cmd_note("--kill=%s: ignored (cuptrace sends CMD no signal: CMD runs "
			             "to its own end after capture stops)",
			             v);
		break;
	case NCCL:
		o->nccl = !!strcmp(v, "none");
		if (o->nccl && first_time(o, i))
			say_cmd_note("--nccl-trace=%s: taken as -t nccl (cuptrace records the "
			             "operations NCCL's profiler plugin reports)",
			             v);
		break;
	case REFUSED:
		say_cmd("--%s: cuptrace takes its options on the command line only", n->name);
		return 2;
	default:
		if (!listed(n->quiet, v) && first_time(o, i))
			say_cmd_note("--%s=%s: ignored (%s)", n->name, v, n->why);
	}
	return 0;
}

/* nsys's tracer names; as: the cuptrace source that stands for it (NULL:
 * none). The libraries over CUDA turn CUDA tracing on in nsys too. */
static const struct {
	const char *name, *as;
} tracers[] = {
    {"cuda-sw", "cuda"},
    {"cublas", "cuda"},
    {"cublas-verbose", "cuda"},
    {"cudnn", "cuda"},
    {"cusolver", "cuda"},
    {"cusolver-verbose", "cuda"},
    {"cusparse", "cuda"},
    {"cusparse-verbose", "cuda"},
    {"cudla", "cuda"},
    {"cudla-verbose", "cuda"},
    {"openacc", "cuda"},
    {"osrt", NULL},
    {"ucx", NULL},
    {"oshmem", NULL},
    {"openmp", NULL},
    {"opengl", NULL},
    {"opengl-annotations", NULL},
    {"vulkan", NULL},
    {"vulkan-annotations", NULL},
    {"dx11", NULL},
    {"dx11-annotations", NULL},
    {"dx12", NULL},
    {"dx12-annotations", NULL},
    {"openxr", NULL},
    {"openxr-annotations", NULL},
    {"wddm", NULL},
    {"nvvideo", NULL},
    {"nvmedia", NULL},
    {"python-gil", NULL},
    {"gds", NULL},
    {"s3", NULL},
    {"s3-verbose", NULL},
    {"tegra-accelerators", NULL},
};
_Static_assert(sizeof tracers / sizeof *tracers <= 64, "said_trace has a bit for each");

const char *nsys_trace(struct nsys_opts *o, const char *v)
{
	static const char *const ours = "kernel,memcpy,api,sync,memory,nvtx,nccl,torch,mpi,cuda";
	char out[sizeof o->trace] = "", none[256] = "", libs[256] = "";
	int n_none = 0;
	for (const char *p = v;;) {
		size_t n = strcspn(p, ",");
		char one[64];
		snprintf(one, sizeof one, "%.*s", (int)(n < 63 ? n : 63), p);
		size_t t;
		for (t = 0; t < sizeof tracers / sizeof *tracers && strcmp(tracers[t].name, one);
		     t++)
			;
		const char *as = NULL;
		if (n && n < 63 && listed(ours, one)) {
			as = one;
		} else if (!strcmp(one, "none")) {
			n_none++;
		} else if (t < sizeof tracers / sizeof *tracers) {
			as = tracers[t].as;
			char *to = as ? libs : none;
			if ((as && !strcmp(one, "cuda-sw")) || (o->said_trace >> t & 1))
				to = NULL; /* CUDA traced, by CUPTI's way; or said already */
			o->said_trace |= 1ull << t;
			if (to)
				snprintf(to + strlen(to), sizeof none - strlen(to), "%s%s",
				         *to ? ", " : "", one);
		} else {
			say_error("CUPTRACE_TRACE=%s: unknown source '%s' (kernel, memcpy, api, "
			          "sync, memory, nvtx, nccl, torch, mpi, cuda, none; or an nsys "
			          "tracer: osrt, cublas, ...)",
			          v, one);
			return NULL;
		}
		if (as && strlen(out) + strlen(as) + 2 < sizeof out)
			snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s",
			         *out ? "," : "", as);
		if (!p[n])
			break;
		p += n + 1;
	}
	if (n_none && (n_none > 1 || strchr(v, ','))) {
		say_error("CUPTRACE_TRACE=%s: none traces nothing: it goes alone", v);
		return NULL;
	}
	if (*none)
		say_cmd_note("--trace=%s: %s left out (tracers cuptrace has not)", v, none);
	if (*libs)
		say_cmd_note(
		    "--trace=%s: %s: their CUDA work is traced (cuda), not their own calls", v,
		    libs);
	snprintf(o->trace, sizeof o->trace, "%s", *out ? out : "none");
	return o->trace;
}

static int ends_with(const char *s, size_t n, const char *tail)
{
	size_t t = strlen(tail);
	return n >= t && !memcmp(s + n - t, tail, t);
}

const char *nsys_output(struct nsys_opts *o, const char *v)
{
	size_t n = strlen(v);
	struct stat st;
	if (!n || v[n - 1] == '/' || ends_with(v, n, ".ctr") ||
	    (!strchr(v, '%') && !stat(v, &st) && !S_ISREG(st.st_mode)))
		return v; /* a directory, a device, or a name with .ctr */
	if (ends_with(v, n, ".nsys-rep"))
		n -= 9;
	else if (ends_with(v, n, ".qdrep"))
		n -= 6;
	if (n + 5 > sizeof o->output)
		return v; /* too long: the check of the pattern says so */
	snprintf(o->output, sizeof o->output, "%.*s.ctr", (int)n, v);
	return o->output;
}

int nsys_settle(struct nsys_opts *o, const char **capture, const char **repeat,
                const char *env_capture)
{
	const char *cap = NULL;
	if (o->range && !strcmp(o->range, "none")) {
		cap = "always";
	} else if (o->range && !strcmp(o->range, "cudaProfilerApi")) {
		cap = "api";
	} else if (o->range && !strcmp(o->range, "nvtx")) {
		const char *p = o->nvtx_capture;
		if (!p) {
			say_cmd("--capture-range=nvtx needs -p/--nvtx-capture RANGE[@DOMAIN]");
			return 2;
		}
		size_t n = strlen(p);
		if (ends_with(p, n, "@*")) /* any domain: cuptrace's nvtx:NAME */
			n -= 2;
		else if (!strchr(p, '@'))
			say_cmd_note("-p %s: a range %s in any NVTX domain opens capture (nsys: in "
			             "the default domain only; -p %s@DOMAIN names one)",
			             p, p, p);
		snprintf(o->capture, sizeof o->capture, "nvtx:%.*s", (int)n, p);
		cap = o->capture;
	} else if (o->range) { /* hotkey */
		say_cmd_note("--capture-range=%s: ignored (cuptrace takes no hotkeys: capture as "
		             "without it)",
		             o->range);
	}
	if (o->nvtx_capture && (!o->range || strcmp(o->range, "nvtx")))
		say_cmd_note("-p %s: ignored (it names the range of --capture-range=nvtx)",
		             o->nvtx_capture);
	if (cap && *capture)
		say_cmd_note(
		    "--capture-range=%s: -c/--capture %s is taken (cuptrace's own option wins)",
		    o->range, *capture);
	else if (cap)
		*capture = cap;
	if (o->range_end) {
		const char *mode = *capture ? *capture : env_capture;
		if (!mode || (strcmp(mode, "api") && strncmp(mode, "nvtx:", 5))) {
			say_cmd_note("--capture-range-end=%s: ignored (it applies to "
			             "--capture-range=cudaProfilerApi or nvtx)",
			             o->range_end);
		} else if (*repeat) {
			say_cmd_note("--capture-range-end=%s: --capture-repeat %s is taken "
			             "(cuptrace's own option wins)",
			             o->range_end, *repeat);
		} else {
			snprintf(o->repeat, sizeof o->repeat, "%lu", o->end_repeat);
			*repeat = o->repeat;
			if (o->end_kind == END_NONE)
				say_cmd_note("--capture-range-end=none: capture stops at each "
				             "range's end, and every range is recorded (nsys "
				             "records from the first range on)");
			/* the shutdowns end CMD only with --kill, said by --kill */
		}
	}
	if (o->dash_d && o->kill == -1) /* a --kill given says it */
		say_cmd_note("-d %s: capture stops after %s s and CMD runs on to its own end (nsys "
		             "ends it then, unless --kill none)",
		             o->dash_d, o->dash_d);
	return 0;
}

int nsys_sources(struct nsys_opts *o, unsigned *sources)
{
	unsigned was = *sources;
	if (o->memory == 1) {
		if (*sources & CT_SRC_CUDA)
			*sources |= CT_SRC_MEMORY;
		else
			say_cmd_note("--cuda-memory-usage=true: ignored (it applies with CUDA "
			             "tracing: -t cuda)");
	}
	if (o->nccl == 0)
		*sources &= ~(unsigned)CT_SRC_NCCL;
	else if (o->nccl == 1)
		*sources |= CT_SRC_NCCL;
	return *sources != was;
}
