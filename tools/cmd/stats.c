// SPDX-License-Identifier: MIT
/* cuptrace stats: summary reports over one or many trace files. */
#include "cmd/cmd.h"
#include "stats/stats.h"
#include "stats/collect.h"
#include "job/clocks.h"
#include "read/nccl_log.h"
#include "util/tmp_file.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct report *const reports[] = {
	&report_nvtx_sum,
	&report_nvtx_gpu_proj_sum,
	&report_cuda_gpu_kern_sum,
	&report_cuda_gpu_mem_time_sum,
	&report_cuda_gpu_mem_size_sum,
	&report_cuda_api_sum,
	&report_breakdown,
	&report_gpu_gaps,
	&report_launch,
	&report_nccl_sum,
	&report_nccl_sizes,
	&report_nccl_calls,
	&report_nccl_ranks,
	&report_steps,
	&report_nccl_skew,
	&report_nccl_hang,
	&report_mpi_sum,
	&report_mpi_skew,
	&report_mpi_hang,
	&report_torch_op_sum,
	&report_torch_mem,
};

#define NREPORTS (sizeof reports / sizeof *reports)

/* nsys's names of reports cuptrace has under another: its older names, from
 * before nsys renamed its reports (gpukernsum is now cuda_gpu_kern_sum),
 * and mpi_event_sum (mpi_sum). */
static const struct {
	const char *nsys, *ours;
} renamed[] = {
    {"nvtxsum", "nvtx_sum"},
    {"cudaapisum", "cuda_api_sum"},
    {"gpukernsum", "cuda_gpu_kern_sum"},
    {"gpumemtimesum", "cuda_gpu_mem_time_sum"},
    {"gpumemsizesum", "cuda_gpu_mem_size_sum"},
    {"mpi_event_sum", "mpi_sum"},
};

#define EVENTS "its rows are single events: cuptrace events lists every event"
#define UM     "cuptrace records no unified memory activity"

/* nsys's reports cuptrace has not (new names and old), and why. */
static const struct {
	const char *name, *why;
} lacking[] = {
    {"cuda_api_trace", EVENTS},
    {"cudaapitrace", EVENTS},
    {"cuda_gpu_trace", EVENTS},
    {"gputrace", EVENTS},
    {"cuda_kern_exec_trace", EVENTS},
    {"kernexectrace", EVENTS},
    {"nvtx_pushpop_trace", EVENTS},
    {"nvtxpptrace", EVENTS},
    {"nvtx_gpu_proj_trace", EVENTS},
    {"mpi_event_trace", EVENTS},
    {"nvtx_pushpop_sum", "nvtx_sum sums push/pop and start/end ranges together"},
    {"nvtxppsum", "nvtx_sum sums push/pop and start/end ranges together"},
    {"nvtx_startend_sum", "nvtx_sum sums push/pop and start/end ranges together"},
    {"nvtx_kern_sum", "nvtx_gpu_proj_sum gives the GPU time of each range's work"},
    {"nvtxkernsum", "nvtx_gpu_proj_sum gives the GPU time of each range's work"},
    {"cuda_gpu_sum", "cuda_gpu_kern_sum and cuda_gpu_mem_time_sum hold its rows"},
    {"gpusum", "cuda_gpu_kern_sum and cuda_gpu_mem_time_sum hold its rows"},
    {"cuda_api_gpu_sum", "cuda_api_sum and cuda_gpu_kern_sum hold its figures"},
    {"cuda_gpu_kern_gb_sum", "cuda_gpu_kern_sum sums each kernel over its launch shapes"},
    {"cuda_kern_exec_sum", "launch gives each kernel's launch latency"},
    {"kernexecsum", "launch gives each kernel's launch latency"},
    {"osrt_sum", "cuptrace does not trace OS runtime calls"},
    {"osrtsum", "cuptrace does not trace OS runtime calls"},
    {"syscall_sum", "cuptrace does not trace system calls"},
    {"um_sum", UM},
    {"unifiedmemory", UM},
    {"um_total_sum", UM},
    {"unifiedmemorytotals", UM},
    {"um_cpu_page_faults_sum", UM},
    {"umcpupagefaults", UM},
    {"openmp_sum", "cuptrace does not trace OpenMP"},
    {"openmpevtsum", "cuptrace does not trace OpenMP"},
    {"openacc_sum", "cuptrace does not trace OpenACC"},
    {"openaccsum", "cuptrace does not trace OpenACC"},
    {"opengl_khr_range_sum", "cuptrace does not trace OpenGL"},
    {"khrdebugsum", "cuptrace does not trace OpenGL"},
    {"opengl_khr_gpu_range_sum", "cuptrace does not trace OpenGL"},
    {"khrdebuggpusum", "cuptrace does not trace OpenGL"},
    {"vulkan_marker_sum", "cuptrace does not trace Vulkan"},
    {"vulkanmarkerssum", "cuptrace does not trace Vulkan"},
    {"vulkan_gpu_marker_sum", "cuptrace does not trace Vulkan"},
    {"vulkangpumarkersum", "cuptrace does not trace Vulkan"},
    {"dx11_pix_sum", "cuptrace does not trace DirectX"},
    {"dx11pixsum", "cuptrace does not trace DirectX"},
    {"dx12_gpu_marker_sum", "cuptrace does not trace DirectX"},
    {"dx12gpumarkersum", "cuptrace does not trace DirectX"},
    {"dx12_pix_sum", "cuptrace does not trace DirectX"},
    {"dx12pixsum", "cuptrace does not trace DirectX"},
    {"wddm_queue_sum", "cuptrace does not trace WDDM"},
    {"wddmqueuesdetails", "cuptrace does not trace WDDM"},
};

#define ARRAY_N(a) (sizeof(a) / sizeof *(a))

/* The report named (len bytes at name: cuptrace's name or nsys's older
 * one); NULL when cuptrace has none of that name, then *why says why when
 * it is an nsys report cuptrace has not. */
static const struct report *find_report(const char *name, size_t len, const char **why)
{
	*why = NULL;
	for (size_t i = 0; i < ARRAY_N(renamed); i++)
		if (strlen(renamed[i].nsys) == len && !memcmp(renamed[i].nsys, name, len)) {
			name = renamed[i].ours;
			len = strlen(name);
		}
	for (size_t i = 0; i < NREPORTS; i++)
		if (strlen(reports[i]->name) == len && !memcmp(reports[i]->name, name, len))
			return reports[i];
	for (size_t i = 0; i < ARRAY_N(lacking); i++)
		if (strlen(lacking[i].name) == len && !memcmp(lacking[i].name, name, len))
			*why = lacking[i].why;
	return NULL;
}

struct print {
	enum table_fmt fmt;
	int first;
	/* -o PREFIX: each table into PREFIX_<report>[_<k>].<txt|csv|json|tsv> */
	const char *prefix;
	const struct timeunit *unit; /* --timeunit; NULL: ns as collected */
	const struct report *const *r;
	int last_rep, k, failed;
};

int stats_known_reports(const char *list)
{
	if (!*list)
		return 0;
	for (const char *p = list; p;) {
		const char *c = strchr(p, ',');
		size_t len = c ? (size_t)(c - p) : strlen(p);
		const char *why;
		if (!find_report(p, len, &why) && !why)
			return 0;
		p = c ? c + 1 : NULL;
	}
	return 1;
}

static void help(FILE *f)
{
	fputs("usage: cuptrace stats [-r|--report LIST] [-f|--format table|csv|tsv|json]\n"
	      "                     [-s|--steps A-B] [--log-step-pattern REGEX]\n"
	      "                     [--by step,time] [--min-gap TIME]\n"
	      "                     [--flops-per-step N]\n"
	      "                     [--align none|collectives] [-j N] [-o PREFIX] [--strict] [-v]\n"
	      "                     [--timeunit nsec|usec|msec|sec]\n"
	      "                     INPUT...\n\n"
	      "Reports (comma-separated LIST; default: all that apply):\n",
	      f);
	for (size_t i = 0; i < NREPORTS; i++)
		fprintf(f, "  %-12s %s\n", reports[i]->name, reports[i]->desc);
	fputs("nsys's older names are taken too (gpukernsum, cudaapisum, gpumemtimesum,\n"
	      "gpumemsizesum, nvtxsum); an nsys report cuptrace has not is said and left out.\n"
	      "\nTimes are in nanoseconds; --timeunit prints them in another unit (the\n"
	      "columns' names say which; usec with 3 decimals, msec 3, sec 6). INPUT is\n"
	      "a .ctr file, a directory of them, or an NCCL_DEBUG=INFO log\n"
	      "(NCCL_DEBUG_SUBSYS=COLL; for the nccl_* reports); all inputs are summed\n"
	      "together. --steps A-B keeps steps A to B only (B may be\n"
	      "A; steps are marked by cuptrace_step(), CUPTRACE_STEP_RANGE picks which\n"
	      "are recorded): NCCL operations issued in them, and ranges, kernels, copies\n"
	      "and calls that start between the start of step A and the start of the\n"
	      "step after B. In an NCCL log, a line matching --log-step-pattern REGEX\n"
	      "(POSIX extended; default: \"iteration N\", \"iter N\", \"step N\",\n"
	      "\"step: N\", \"step=N\" outside NCCL's lines) begins step N (the number\n"
	      "of REGEX's first group that matched digits, else the step before + 1;\n"
	      "step 0 runs from the log's start): the calls from it to the next such\n"
	      "line are that step's (docs/jobs.md). --strict: an unusable input is an\n"
	      "error (default: skipped with a warning). --by step: breakdown and steps\n"
	      "per step too (steps: every rank's every step); --by time: breakdown's\n"
	      "busy time of each GPU per time bucket (at most 200 of 1us x 2^k).\n"
	      "--min-gap TIME: the shortest gap gpu_gaps lists (ns, or with a unit:\n"
	      "500us, 1ms, 2s; default 1ms).\n"
	      "--flops-per-step N: floating-point operations of one step on one\n"
	      "GPU; the steps report adds achieved TFLOP/s (N / step time). --align:\n"
	      "clocks of several hosts, as cuptrace convert (default: collectives with\n"
	      "more than one host; a first table gives each host's offset).\n"
	      "-j, --jobs N: worker threads reading the files (default: all CPUs, at\n"
	      "most one per file); the tables are the same for any N.\n"
	      "Under mpiexec (N ranks of a launcher), the ranks share the files out and\n"
	      "rank 0 prints the same tables, once (docs/parallel-tools.md).\n"
	      "-o, --output PREFIX: each table into a file of its own (as nsys stats\n"
	      "--output): PREFIX_<report>.<txt|csv|json|tsv>, a report's second table\n"
	      "PREFIX_<report>_2...; CSV and TSV without the title and note lines (notes\n"
	      "go to stderr), JSON the table's array. - (the default): stdout.\n"
	      "-f, --format: table (also nsys's name column: aligned columns), csv, tsv\n"
	      "(tab-separated), json.\n"
	      "-v, --verbose: how the reports ran, on stderr (nccl_skew: collectives\n"
	      "matched, the most its matcher held at once; --steps on a log: its step\n"
	      "marks, the calls kept).\n"
	      "docs/ANALYSIS.md defines every figure.\n",
	      f);
}

/* A duration: ns, or a number with ns, us, ms or s. */
static int parse_time(const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return -1;
	double mul = !*end || !strcmp(end, "ns") ? 1
	             : !strcmp(end, "us")        ? 1e3
	             : !strcmp(end, "ms")        ? 1e6
	             : !strcmp(end, "s")         ? 1e9
	                                         : -1;
	if (mul < 0 || v * mul > 1e18)
		return -1;
	*ns = (uint64_t)(v * mul + 0.5);
	return 0;
}

/* A table into a file of its own (nsys stats --output's way): the k-th
 * table of a report gets _k after the report's name. */
static void table_file(struct print *p, int rep, struct table *t)
{
	p->k = rep == p->last_rep ? p->k + 1 : 1;
	p->last_rep = rep;
	static const char *const ext[] = {"txt", "csv", "json", "tsv"};
	char path[4096], k[16] = "";
	if (p->k > 1)
		snprintf(k, sizeof k, "_%d", p->k);
	snprintf(path, sizeof path, "%s_%s%s.%s", p->prefix, rep < 0 ? "clocks" : p->r[rep]->name, k,
		 ext[p->fmt]);
	struct tmp_file tf;
	FILE *f = tmp_file_open(&tf, path);
	if (f) {
		table_print_as(t, f, p->fmt, 1, 1);
		if (tmp_file_close(&tf, f, 0))
			f = NULL;
	}
	if (!f) {
		say_cmd("%s: %s", path, strerror(errno));
		p->failed = 1;
	} else {
		say_cmd("wrote %s", path);
		if (p->fmt != FMT_TABLE && table_get_note(t))
			say_cmd("%s: note: %s", path, table_get_note(t));
	}
}

/* --timeunit, by nsys stats' names (and the short ones); decimals keep
 * the nanosecond in us, the microsecond in ms and s. */
struct timeunit {
	const char *name, *alias, *label;
	uint64_t ns;
	int decimals;
};
static const struct timeunit units[] = {{"nsec", "ns", "ns", 1, 0},
					{"usec", "us", "us", 1000, 3},
					{"msec", "ms", "ms", 1000000, 3},
					{"sec", "s", "s", 1000000000, 6}};

static const struct timeunit *find_unit(const char *s)
{
	for (size_t i = 0; i < sizeof units / sizeof *units; i++)
		if (!strcmp(s, units[i].name) || !strcmp(s, units[i].alias))
			return &units[i];
	return NULL;
}

/* An SQLite database among the inputs (nsys stats reads the .sqlite of
 * nsys export; `cuptrace export` writes one, which cuptrace does not read
 * back): said, with the trace to give instead; 1 then. */
static int sqlite_input(char **args, int n)
{
	for (int i = 0; i < n; i++) {
		char magic[16] = "";
		FILE *f = fopen(args[i], "rb");
		if (!f)
			continue; /* the inputs' own check says why */
		size_t got = fread(magic, 1, sizeof magic, f);
		fclose(f);
		if (got != sizeof magic || memcmp(magic, "SQLite format 3", 16))
			continue;
		char ctr[4096];
		size_t len = strlen(args[i]);
		snprintf(ctr, sizeof ctr, "%.*s.ctr",
			 (int)(len > 7 && !strcmp(args[i] + len - 7, ".sqlite") ? len - 7 : len), args[i]);
		FILE *t = fopen(ctr, "rb");
		if (t)
			fclose(t);
		say_cmd("%s is an SQLite database (nsys stats reads those); cuptrace stats reads "
			"the trace it was exported from: %s", args[i], t ? ctr : "the .ctr file");
		return 1;
	}
	return 0;
}

/* Prints a table of the reports. */
static void print_table(void *ctx, int rep, struct table *t)
{
	struct print *p = ctx;
	if (p->unit && p->unit->ns > 1)
		table_timeunit(t, p->unit->label, p->unit->ns, p->unit->decimals);
	if (p->prefix)
		table_file(p, rep, t);
	else
		table_print(t, stdout, p->fmt, p->first);
	p->first = 0;
	table_free(t);
}

int cmd_stats(int argc, char **argv)
{
	static const struct option lo[] = {{"report", required_argument, NULL, 'r'},
					   {"format", required_argument, NULL, 'f'},
					   {"steps", required_argument, NULL, 's'},
					   {"strict", no_argument, NULL, 'S'},
					   {"by", required_argument, NULL, 'B'},
					   {"min-gap", required_argument, NULL, 'G'},
					   {"flops-per-step", required_argument, NULL, 'F'},
					   {"align", required_argument, NULL, 'A'},
					   {"jobs", required_argument, NULL, 'j'},
					   {"verbose", no_argument, NULL, 'v'},
					   {"output", required_argument, NULL, 'o'},
					   {"timeunit", required_argument, NULL, 'T'},
					   {"log-step-pattern", required_argument, NULL, 'P'},
					   {"help", no_argument, NULL, 'h'},
					   {0, 0, 0, 0}};
	const char *list = NULL, *steps_arg = NULL, *prefix = NULL;
	enum table_fmt fmt = FMT_TABLE;
	int c, strict = 0, align = ALIGN_AUTO, jobs = 0;
	const struct timeunit *unit = NULL;
	optind = 1;
	struct {
		const struct report *r[NREPORTS];
		size_t n;
		struct stats_opts opts;
	} run = {0};
	run.opts.min_gap = 1000000;
	while ((c = getopt_long(argc, argv, "r:f:s:j:o:vh", lo, NULL)) != -1) {
		if (c == 'o')
			prefix = strcmp(optarg, "-") ? optarg : NULL;
		else if (c == 'T') {
			if (!(unit = find_unit(optarg))) {
				say_cmd("--timeunit %s: expected nsec, usec, msec or sec "
				        "(or ns, us, ms, s)",
				        optarg);
				return 2;
			}
		}
		else if (c == 'v')
			run.opts.verbose = 1; /* how the reports ran (nccl_skew's window) */
		else if (c == 'r')
			list = optarg;
		else if (c == 'j') {
			if (cmd_jobs(optarg, &jobs))
				return 2;
		}
		else if (c == 'S')
			strict = 1;
		else if (c == 'A') {
			if (cmd_align(optarg, &align))
				return 2;
		} else if (c == 'B') {
			/* step, time or both (comma-separated) */
			for (const char *p = optarg; p == optarg || *p; p += *p == ',') {
				size_t n = strcspn(p, ",");
				if (n == 4 && !strncmp(p, "step", 4))
					run.opts.by_step = 1;
				else if (n == 4 && !strncmp(p, "time", 4))
					run.opts.by_time = 1;
				else if (n == 5 && !strncmp(p, "shape", 5))
					run.opts.by_shape = 1;
				else {
					say_cmd("--by %s: expected step, time, shape or a list of them",
					        optarg);
					return 2;
				}
				p += n;
			}
		} else if (c == 'G') {
			if (parse_time(optarg, &run.opts.min_gap)) {
				say_cmd("--min-gap %s: expected a time (ns, or 500us, 1ms, 2s)",
				        optarg);
				return 2;
			}
		} else if (c == 'F') {
			char *end;
			run.opts.flops_per_step = strtod(optarg, &end);
			/* finite, and small enough that N / a step's ns stays one
			 * (inf and 1e308 would give "TFLOP/s": inf, which is not JSON) */
			if (end == optarg || *end || !(run.opts.flops_per_step > 0) ||
			    !(run.opts.flops_per_step < 1e30)) {
				say_cmd("--flops-per-step %s: expected a positive number "
				        "below 1e30 (floating-point operations per step and GPU)",
				        optarg);
				return 2;
			}
		}
		else if (c == 'P') {
			run.opts.log_step_pattern = optarg;
		}
		else if (c == 's') {
			steps_arg = optarg;
			if (cmd_steps(optarg, &run.opts))
				return 2;
		}
		else if (c == 'f') {
			if (!strcmp(optarg, "table") || !strcmp(optarg, "column"))
				fmt = FMT_TABLE;
			else if (!strcmp(optarg, "csv"))
				fmt = FMT_CSV;
			else if (!strcmp(optarg, "tsv"))
				fmt = FMT_TSV;
			else if (!strcmp(optarg, "json"))
				fmt = FMT_JSON;
			else if (!strcmp(optarg, "hdoc") || !strcmp(optarg, "htable")) {
				say_cmd("-f %s: nsys's HTML formats are not cuptrace's (table or column, csv, "
					"tsv, json); cuptrace report writes an HTML page", optarg);
				return 2;
			} else {
				say_cmd("unknown format '%s' (table or column, csv, tsv, json)", optarg);
				return 2;
			}
		} else {
			return cmd_usage(c, help);
		}
	}
	if (optind >= argc)
		return cmd_usage(0, help);
	/* Checked here (a usage error); compiled again for the reading below */
	struct nccl_log_steps log_steps;
	if (run.opts.log_step_pattern) {
		char err[256];
		if (!run.opts.steps) {
			say_cmd("--log-step-pattern needs --steps A-B (the steps to keep)");
			return 2;
		}
		if (!*run.opts.log_step_pattern ||
		    nccl_log_steps_init(&log_steps, run.opts.log_step_pattern, err, sizeof err)) {
			say_cmd("--log-step-pattern %s: %s", run.opts.log_step_pattern,
			        *run.opts.log_step_pattern ? err : "an empty pattern marks every line");
			return 2;
		}
		nccl_log_steps_free(&log_steps);
	}
	if (sqlite_input(argv + optind, argc - optind))
		return 1;
	if (!list) {
		for (size_t i = 0; i < NREPORTS; i++)
			run.r[run.n++] = reports[i];
	} else {
		char *copy = xstrdup(list), *save = NULL;
		int left_out = 0;
		for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			const char *why;
			const struct report *r = find_report(tok, strlen(tok), &why);
			if (!r && why) { /* nsys's, which the script asks for with the others */
				say_cmd_note("%s is an nsys report cuptrace has not (%s); left out", tok, why);
				left_out = 1;
				continue;
			}
			if (!r) {
				char names[1024];
				size_t o = 0;
				for (size_t i = 0; i < NREPORTS && o < sizeof names; i++)
					o += (size_t)snprintf(names + o, sizeof names - o, "%s %s",
					                      i ? "," : "", reports[i]->name);
				say_cmd("unknown report '%s'; the reports:%s%s", tok, names,
				        strchr(tok, ':')
				            ? " (nsys's report:option arguments are not taken)"
				            : "");
				free(copy);
				return 2;
			}
			if (run.n < NREPORTS)
				run.r[run.n++] = r;
		}
		free(copy);
		if (!run.n) { /* --report "" printed nothing and exited 0 */
			say_cmd("--report needs %s (see --help)",
				left_out ? "a report cuptrace has" : "report names");
			return 2;
		}
		run.opts.explicit_list = 1;
	}
	struct inputs in;
	if (inputs_open_logs(&in, argv + optind, argc - optind, strict))
		return 1;
	if (in.nlogs) {
		int takes = 0;
		for (size_t i = 0; i < run.n; i++)
			takes |= run.r[i]->log != NULL;
		const char *why =
			!takes ? "only nccl_sum, nccl_sizes, nccl_calls and nccl_ranks read NCCL logs"
			       : NULL;
		if (why && !in.n) {
			say_cmd("%s: %s", in.logs[0], why);
			inputs_close(&in);
			return 2;
		}
		if (why) /* logs beside traces (NCCL_DEBUG_FILE into the trace directory) */
			cmd_drop_logs(&in, why);
		/* Logs alone, no report named: the reports that read logs only
		 * (the others would print tables of nothing). */
		if (!in.n && !run.opts.explicit_list) {
			size_t k = 0;
			for (size_t i = 0; i < run.n; i++)
				if (run.r[i]->log)
					run.r[k++] = run.r[i];
			run.n = k;
		}
	}
	if (prefix && !*prefix) {
		say_cmd("-o needs a file name prefix (or - for stdout)");
		inputs_close(&in);
		return 2;
	}
	char why[400];
	if (prefix && cmd_out_dir(prefix, why, sizeof why)) { /* one line, not one per table */
		say_cmd("-o %s: %s", prefix, why);
		inputs_close(&in);
		return 2;
	}
	if (run.opts.log_step_pattern && !in.nlogs)
		say_cmd_note("--log-step-pattern: no NCCL log among the inputs (a trace's steps come "
		             "from cuptrace_step())");
	if (run.opts.log_step_pattern &&
	    !nccl_log_steps_init(&log_steps, run.opts.log_step_pattern, NULL, 0))
		run.opts.log_steps = &log_steps;
	struct print pr = {fmt, 1, prefix, unit, run.r, -2, 0, 0};
	int rc = reports_collect(&in, run.r, run.n, &run.opts, align, jobs, steps_arg, print_table,
				 &pr);
	if (run.opts.log_steps)
		nccl_log_steps_free(&log_steps);
	if (rc < 0) { /* --steps matched nothing: no table */
		inputs_close(&in);
		return 1;
	}
	int first = pr.first;
	if (pr.failed)
		rc = 1;
	if (fmt == FMT_JSON && !prefix)
		printf("%s\n", first ? "{}" : "}");
	inputs_close(&in);
	errno = 0;
	if (fflush(stdout) || ferror(stdout)) {
		say_cmd("writing stdout: %s", strerror(errno ? errno : EIO));
		rc = 1;
	}
	return rc;
}
