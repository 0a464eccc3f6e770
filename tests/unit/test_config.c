// SPDX-License-Identifier: MIT
/* CUPTRACE_* settings (libtrace/config/config.c) and rank detection from
 * launcher variables (libtrace/config/rankenv.c). */
#include "check.h"
#include "config.h"
#include "rankenv.h"

#include <signal.h>
#include <string.h>

static const char *const *env_tab;

static const char *fake_getenv(const char *name)
{
	size_t n = strlen(name);
	for (const char *const *e = env_tab; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static struct ct_config cfg;
static char err[512];

static void set_ok(const char *name, const char *value)
{
	err[0] = 0;
	if (ct_config_set(&cfg, name, value, err, sizeof err)) {
		fprintf(stderr, "%s=%s refused: %s\n", name, value, err);
		exit(1);
	}
	CHECK_STR(err, "");
}

/* Refused, with exactly "NAME=value: why" (why non-empty, one line) and
 * why containing `says`. Values are cut to 200 bytes in the message. */
static void set_bad(const char *name, const char *value, const char *says)
{
	char prefix[512];
	snprintf(prefix, sizeof prefix, "%s=%.200s: ", name, value);
	err[0] = 0;
	if (ct_config_set(&cfg, name, value, err, sizeof err) != -1) {
		fprintf(stderr, "%s=%s accepted\n", name, value);
		exit(1);
	}
	if (strncmp(err, prefix, strlen(prefix)) || strlen(err) == strlen(prefix) || strchr(err, '\n') ||
	    !strstr(err + strlen(prefix), says)) {
		fprintf(stderr, "%s=%s: bad message \"%s\" (want \"%s...%s...\")\n", name, value, err,
			prefix, says);
		exit(1);
	}
}

static void test_defaults(void)
{
	static const char *const none[] = {"PATH=/bin", "CUPTRACE=1", NULL};
	env_tab = none;
	CHECK_EQ(ct_config_parse(&cfg, fake_getenv, err, sizeof err), 0);
	CHECK_STR(cfg.output, CT_DEFAULT_OUTPUT);
	CHECK_EQ(cfg.sources, CT_SRC_CUDA | CT_SRC_NVTX | CT_SRC_NCCL);
	CHECK(cfg.ranks.all);
	CHECK(cfg.delay == 0 && cfg.duration == 0);
	CHECK_EQ(cfg.capture, CT_CAPTURE_ALWAYS);
	CHECK_EQ(cfg.capture_repeat, 1);
	CHECK(!cfg.steps.on);
	CHECK_STR(cfg.step_range, "");
	CHECK_EQ(cfg.buffer_mb, 64);
	CHECK_EQ(cfg.log, CT_LOG_WARN);
}

static void test_parse_env(void)
{
	static const char *const env[] = {
		"CUPTRACE_OUTPUT=o/%r.ctr", "CUPTRACE_TRACE=nvtx", "CUPTRACE_RANKS=0,3",
		"CUPTRACE_DELAY=2.5",	    "CUPTRACE_DURATION=10", "CUPTRACE_CAPTURE=nvtx:train@pt",
		"CUPTRACE_CAPTURE_REPEAT=0", "CUPTRACE_STEPS=wait=1,active=2",
		"CUPTRACE_STEP_RANGE=iter", "CUPTRACE_BUFFER_MB=8", "CUPTRACE_LOG=debug", NULL,
	};
	env_tab = env;
	CHECK_EQ(ct_config_parse(&cfg, fake_getenv, err, sizeof err), 0);
	CHECK_STR(cfg.output, "o/%r.ctr");
	CHECK_EQ(cfg.sources, CT_SRC_NVTX);
	CHECK(!cfg.ranks.all && cfg.ranks.n == 2);
	CHECK(cfg.delay == 2.5 && cfg.duration == 10);
	CHECK_EQ(cfg.capture, CT_CAPTURE_NVTX);
	CHECK_STR(cfg.capture_name, "train");
	CHECK_STR(cfg.capture_domain, "pt");
	CHECK_EQ(cfg.capture_repeat, 0);
	CHECK(cfg.steps.on && cfg.steps.wait == 1 && cfg.steps.active == 2);
	CHECK_STR(cfg.step_range, "iter");
	CHECK_EQ(cfg.buffer_mb, 8);
	CHECK_EQ(cfg.log, CT_LOG_DEBUG);

	/* A bad value: -1 and the message names it. CUPTRACE_LOG is read
	 * first, so its error wins over a later one. */
	static const char *const bad[] = {"CUPTRACE_TRACE=gpu", "CUPTRACE_BUFFER_MB=0", NULL};
	env_tab = bad;
	CHECK_EQ(ct_config_parse(&cfg, fake_getenv, err, sizeof err), -1);
	CHECK(!strncmp(err, "CUPTRACE_TRACE=gpu: ", 20));
	static const char *const bad2[] = {"CUPTRACE_TRACE=gpu", "CUPTRACE_LOG=loud", NULL};
	env_tab = bad2;
	CHECK_EQ(ct_config_parse(&cfg, fake_getenv, err, sizeof err), -1);
	CHECK(!strncmp(err, "CUPTRACE_LOG=loud: ", 19));
}

static void test_sources(void)
{
	static const struct {
		const char *name;
		unsigned mask;
	} one[] = {
		{"kernel", CT_SRC_KERNEL}, {"memcpy", CT_SRC_MEMCPY}, {"api", CT_SRC_API},
		{"sync", CT_SRC_SYNC},	   {"memory", CT_SRC_MEMORY}, {"nvtx", CT_SRC_NVTX},
		{"nccl", CT_SRC_NCCL},	   {"torch", CT_SRC_TORCH},   {"none", 0},
		{"mpi", CT_SRC_MPI},
		{"cuda", CT_SRC_KERNEL | CT_SRC_MEMCPY | CT_SRC_API | CT_SRC_SYNC},
	};
	for (size_t i = 0; i < sizeof one / sizeof *one; i++) {
		set_ok("CUPTRACE_TRACE", one[i].name);
		CHECK_EQ(cfg.sources, one[i].mask);
	}
	set_ok("CUPTRACE_TRACE", "cuda,nvtx,nccl");
	CHECK_EQ(cfg.sources, CT_SRC_CUDA | CT_SRC_NVTX | CT_SRC_NCCL);
	set_ok("CUPTRACE_TRACE", "nvtx,nvtx,memory");
	CHECK_EQ(cfg.sources, CT_SRC_NVTX | CT_SRC_MEMORY);
	set_bad("CUPTRACE_TRACE", "kernels", "unknown source 'kernels'");
	set_bad("CUPTRACE_TRACE", "nvtx,gpu", "unknown source 'gpu'");
	set_bad("CUPTRACE_TRACE", "nvtx,", "unknown source ''");
	set_bad("CUPTRACE_TRACE", "", "unknown source ''");
	set_bad("CUPTRACE_TRACE", "NVTX", "unknown source 'NVTX'");
	set_bad("CUPTRACE_TRACE", "none,nvtx", "unknown source 'none'");
	/* A refused value leaves the previous setting. */
	CHECK_EQ(cfg.sources, CT_SRC_NVTX | CT_SRC_MEMORY);

	/* Every mask prints as a list that parses back to it. */
	for (unsigned m = 0; m < 512; m++) { /* every source's bit, mpi's (8) too */
		char buf[128];
		ct_sources_str(m, buf, sizeof buf);
		set_ok("CUPTRACE_TRACE", buf);
		CHECK_EQ(cfg.sources, m);
	}
	/* mpi is not in the default set */
	struct ct_config d;
	ct_config_defaults(&d);
	CHECK(!(d.sources & CT_SRC_MPI));
}

/* CUPTRACE_TORCH: shapes, memory, stack in any order, or none; not a
 * source of its own (the torch source is not among the defaults). */
static void test_torch(void)
{
	ct_config_defaults(&cfg);
	CHECK_EQ(cfg.torch, 0);
	CHECK(!(cfg.sources & CT_SRC_TORCH));
	set_ok("CUPTRACE_TORCH", "shapes");
	CHECK_EQ(cfg.torch, CT_TORCH_SHAPES);
	set_ok("CUPTRACE_TORCH", "stack,memory");
	CHECK_EQ(cfg.torch, CT_TORCH_STACK | CT_TORCH_MEMORY);
	set_ok("CUPTRACE_TORCH", "shapes,memory,stack,shapes");
	CHECK_EQ(cfg.torch, CT_TORCH_SHAPES | CT_TORCH_MEMORY | CT_TORCH_STACK);
	set_ok("CUPTRACE_TORCH", "none");
	CHECK_EQ(cfg.torch, 0);
	set_bad("CUPTRACE_TORCH", "shape", "unknown word 'shape'");
	set_bad("CUPTRACE_TORCH", "shapes,gpu", "unknown word 'gpu'");
	set_bad("CUPTRACE_TORCH", "", "unknown word ''");
	set_bad("CUPTRACE_TORCH", "memory,", "unknown word ''");
	set_bad("CUPTRACE_TORCH", "none,stack", "unknown word 'none'");
	set_bad("CUPTRACE_TORCH", "Shapes", "unknown word 'Shapes'");
	CHECK_EQ(cfg.torch, 0); /* refused: the previous setting stays */
	for (unsigned m = 0; m < 16; m += 2) {
		char buf[64];
		ct_torch_str(m, buf, sizeof buf);
		set_ok("CUPTRACE_TORCH", buf);
		CHECK_EQ(cfg.torch, m);
	}
}

static char unused_name[4][64], unused_why[4][256];
static int nunused;

static void on_unused(const char *name, const char *why)
{
	CHECK(nunused < 4);
	snprintf(unused_name[nunused], sizeof unused_name[0], "%s", name);
	snprintf(unused_why[nunused], sizeof unused_why[0], "%s", why);
	nunused++;
}

/* CUPTRACE_TORCH without the torch source does nothing, and is said. */
static void test_torch_unused(void)
{
	char *env[] = {"CUPTRACE_TORCH=shapes", NULL};
	ct_config_defaults(&cfg);
	set_ok("CUPTRACE_TORCH", "shapes");
	nunused = 0;
	ct_config_check_unused(&cfg, env, on_unused);
	CHECK_EQ(nunused, 1);
	CHECK_STR(unused_name[0], "CUPTRACE_TORCH");
	CHECK(strstr(unused_why[0], "has no effect") && strstr(unused_why[0], "torch source is off"));
	set_ok("CUPTRACE_TRACE", "cuda,torch");
	nunused = 0;
	ct_config_check_unused(&cfg, env, on_unused);
	CHECK_EQ(nunused, 0);
	char *warned_env[] = {"CUPTRACE_TORCH=shapes", CT_WARNED_VAR "=CUPTRACE_TORCH", NULL};
	set_ok("CUPTRACE_TRACE", "nvtx");
	ct_config_check_unused(&cfg, warned_env, on_unused);
	CHECK_EQ(nunused, 0);
}

static void test_ranks(void)
{
	set_ok("CUPTRACE_RANKS", "all");
	CHECK(ct_rankset_has(&cfg.ranks, 12345, 7));

	set_ok("CUPTRACE_RANKS", "0,2,8-15");
	CHECK(!cfg.ranks.all && !cfg.ranks.local);
	int want[20] = {[0] = 1, [2] = 1, [8] = 1, [9] = 1, [10] = 1, [11] = 1, [12] = 1, [13] = 1, [14] = 1,
			[15] = 1};
	for (long r = 0; r < 20; r++)
		CHECK_EQ(ct_rankset_has(&cfg.ranks, r, 0), want[r]);

	set_ok("CUPTRACE_RANKS", "local:0");
	CHECK(cfg.ranks.local);
	CHECK(ct_rankset_has(&cfg.ranks, 17, 0));
	CHECK(!ct_rankset_has(&cfg.ranks, 0, 1));
	set_ok("CUPTRACE_RANKS", "local:1-2,5");
	CHECK(ct_rankset_has(&cfg.ranks, 0, 2) && ct_rankset_has(&cfg.ranks, 0, 5));
	CHECK(!ct_rankset_has(&cfg.ranks, 2, 3));
	set_ok("CUPTRACE_RANKS", "7-7");
	CHECK(ct_rankset_has(&cfg.ranks, 7, 0) && !ct_rankset_has(&cfg.ranks, 6, 0));

	set_bad("CUPTRACE_RANKS", "", "expected all");
	set_bad("CUPTRACE_RANKS", "some", "expected all");
	set_bad("CUPTRACE_RANKS", "-1", "expected all");
	set_bad("CUPTRACE_RANKS", "1-", "upper bound");
	set_bad("CUPTRACE_RANKS", "5-3", "bad range 5-3");
	set_bad("CUPTRACE_RANKS", "1,,2", "expected all");
	set_bad("CUPTRACE_RANKS", "1,", "expected all");
	set_bad("CUPTRACE_RANKS", "1 2", "unexpected ' '");
	set_bad("CUPTRACE_RANKS", "1;2", "unexpected ';'");
	set_bad("CUPTRACE_RANKS", "local:", "expected all");
	set_bad("CUPTRACE_RANKS", "local:all", "expected all");
	/* said "bad range 9223372036854775807-9223372036854775807" */
	set_bad("CUPTRACE_RANKS", "99999999999999999999999", "99999999999999999999999 is too large");
	set_bad("CUPTRACE_RANKS", "1-99999999999999999999999", "99999999999999999999999 is too large");
	set_bad("CUPTRACE_RANKS", "ALL", "expected all");
	char many[512] = "0";
	for (int i = 1; i <= CT_MAX_RANGES; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), ",%d", 2 * i);
	set_bad("CUPTRACE_RANKS", many, "more than 64 ranges");

	/* A node-local set with a global cut-off: local rank 0 of the first
	 * two nodes of 4 ranks each. */
	set_ok("CUPTRACE_RANKS", "local:0@0-7");
	CHECK(cfg.ranks.local && cfg.ranks.gn == 1);
	for (long r = 0; r < 16; r++)
		CHECK_EQ(ct_rankset_has(&cfg.ranks, r, r % 4), r == 0 || r == 4);
	set_ok("CUPTRACE_RANKS", "local:0-1@8-15,20");
	CHECK(ct_rankset_has(&cfg.ranks, 9, 1) && ct_rankset_has(&cfg.ranks, 20, 0));
	CHECK(!ct_rankset_has(&cfg.ranks, 10, 2) && !ct_rankset_has(&cfg.ranks, 1, 1));
	CHECK(!ct_rankset_has(&cfg.ranks, 9, -1)); /* an unknown local rank is in no set */
	set_bad("CUPTRACE_RANKS", "local:0@", "expected all");
	set_bad("CUPTRACE_RANKS", "local:0@x", "expected all");
	set_bad("CUPTRACE_RANKS", "local:@0-7", "expected all");
	set_bad("CUPTRACE_RANKS", "0@0-7", "unexpected '@'");
	set_bad("CUPTRACE_RANKS", "local:0@0-7@9", "unexpected '@'");
	/* the file header's configuration says it as it was given */
	set_ok("CUPTRACE_RANKS", "local:0,2@0-7,12");
	char dump[4096];
	ct_config_dump(&cfg, dump, sizeof dump);
	CHECK(strstr(dump, "CUPTRACE_RANKS=local:0,2@0-7,12\n"));
}

/* Whether a process traces: an unknown local rank under a launcher is
 * never taken for 0. */
static void test_ranks_decide(void)
{
	char why[256] = "";
	struct ct_rankinfo lone = {-1, -1, -1, -1, ""}, pals = {5, -1, 12, -1, "PMI_RANK"};
	struct ct_rankinfo known = {4, 0, 12, 4, "PMI_RANK"};
	set_ok("CUPTRACE_RANKS", "local:0");
	CHECK_EQ(ct_ranks_decide(&cfg.ranks, &lone, why, sizeof why), 1); /* no launcher: rank 0 */
	CHECK_EQ(ct_ranks_decide(&cfg.ranks, &known, why, sizeof why), 1);
	CHECK_EQ(ct_ranks_decide(&cfg.ranks, &pals, why, sizeof why), -1);
	CHECK(strstr(why, "rank 5 (PMI_RANK) has no local rank here"));
	set_ok("CUPTRACE_RANKS", "0-3");
	CHECK_EQ(ct_ranks_decide(&cfg.ranks, &pals, why, sizeof why), 0);
	CHECK_EQ(ct_ranks_decide(&cfg.ranks, &lone, why, sizeof why), 1);
	set_ok("CUPTRACE_RANKS", "all");
	CHECK_EQ(ct_ranks_decide(&cfg.ranks, &pals, why, sizeof why), 1);
}

static void test_steps(void)
{
	set_ok("CUPTRACE_STEPS", "skip_first=1,wait=2,warmup=3,active=4,repeat=5");
	CHECK(cfg.steps.on);
	CHECK(cfg.steps.skip_first == 1 && cfg.steps.wait == 2 && cfg.steps.warmup == 3 &&
	      cfg.steps.active == 4 && cfg.steps.repeat == 5);
	set_ok("CUPTRACE_STEPS", "active=1");
	CHECK(cfg.steps.on && cfg.steps.active == 1 && cfg.steps.wait == 0 && cfg.steps.repeat == 0);
	set_ok("CUPTRACE_STEPS", "off");
	CHECK(!cfg.steps.on);
	set_ok("CUPTRACE_STEPS", "");
	CHECK(!cfg.steps.on);
	set_bad("CUPTRACE_STEPS", "wait=1", "active=N (N >= 1) is required");
	set_bad("CUPTRACE_STEPS", "active=0", "active=N (N >= 1) is required");
	set_bad("CUPTRACE_STEPS", "active=x", "active=x is not a whole number");
	set_bad("CUPTRACE_STEPS", "active=-1", "not a whole number");
	set_bad("CUPTRACE_STEPS", "active=", "active needs a number");
	set_bad("CUPTRACE_STEPS", "active", "expected key=value");
	set_bad("CUPTRACE_STEPS", "active=1,every=2", "unknown key 'every'");
	set_bad("CUPTRACE_STEPS", "on", "expected key=value");
	set_bad("CUPTRACE_STEPS", "active=99999999999999999999999", "not a whole number");
}

static void test_capture(void)
{
	set_ok("CUPTRACE_CAPTURE", "api");
	CHECK_EQ(cfg.capture, CT_CAPTURE_API);
	set_ok("CUPTRACE_CAPTURE", "nvtx:step");
	CHECK_EQ(cfg.capture, CT_CAPTURE_NVTX);
	CHECK_STR(cfg.capture_name, "step");
	CHECK_STR(cfg.capture_domain, "");
	set_ok("CUPTRACE_CAPTURE", "nvtx:fwd pass@PyTorch");
	CHECK_STR(cfg.capture_name, "fwd pass");
	CHECK_STR(cfg.capture_domain, "PyTorch");
	/* The domain follows the last '@'. */
	set_ok("CUPTRACE_CAPTURE", "nvtx:a@b@c");
	CHECK_STR(cfg.capture_name, "a@b");
	CHECK_STR(cfg.capture_domain, "c");
	set_ok("CUPTRACE_CAPTURE", "always");
	CHECK_EQ(cfg.capture, CT_CAPTURE_ALWAYS);

	set_bad("CUPTRACE_CAPTURE", "nvtx:", "expected nvtx:NAME or nvtx:NAME@DOMAIN");
	set_bad("CUPTRACE_CAPTURE", "nvtx:@dom", "expected nvtx:NAME");
	set_bad("CUPTRACE_CAPTURE", "nvtx:name@", "expected nvtx:NAME");
	set_bad("CUPTRACE_CAPTURE", "nvtx", "expected always, api or nvtx:NAME[@DOMAIN]");
	set_bad("CUPTRACE_CAPTURE", "", "expected always, api");
	set_bad("CUPTRACE_CAPTURE", "Always", "expected always, api");
	char longname[300] = "nvtx:";
	memset(longname + 5, 'n', 280);
	set_bad("CUPTRACE_CAPTURE", longname, "");
	CHECK(strstr(err, "expected nvtx:NAME"));

	set_ok("CUPTRACE_CAPTURE_REPEAT", "0");
	CHECK_EQ(cfg.capture_repeat, 0);
	set_ok("CUPTRACE_CAPTURE_REPEAT", "12");
	CHECK_EQ(cfg.capture_repeat, 12);
	set_bad("CUPTRACE_CAPTURE_REPEAT", "-1", "whole number");
	set_bad("CUPTRACE_CAPTURE_REPEAT", "2x", "whole number");
	set_bad("CUPTRACE_CAPTURE_REPEAT", "", "whole number");
	set_bad("CUPTRACE_CAPTURE_REPEAT", " 1", "whole number");
}

static void test_numbers(void)
{
	set_ok("CUPTRACE_DELAY", "0");
	CHECK(cfg.delay == 0);
	set_ok("CUPTRACE_DELAY", "1.5");
	CHECK(cfg.delay == 1.5);
	set_ok("CUPTRACE_DELAY", ".25");
	CHECK(cfg.delay == 0.25);
	set_ok("CUPTRACE_DELAY", "1e3");
	CHECK(cfg.delay == 1000);
	set_ok("CUPTRACE_DURATION", "30");
	CHECK(cfg.duration == 30);
	static const char *const bad_secs[] = {"-1", "abc", "5s", "", "inf", "nan", " 1", "."};
	for (size_t i = 0; i < sizeof bad_secs / sizeof *bad_secs; i++) {
		set_bad("CUPTRACE_DELAY", bad_secs[i], "expected seconds >= 0");
		set_bad("CUPTRACE_DURATION", bad_secs[i], "expected seconds > 0");
	}
	set_bad("CUPTRACE_DURATION", "0", "expected seconds > 0");
	/* Above the limit, the message says the limit (it said "expected
	 * seconds >= 0"). */
	static const char *const big_secs[] = {"1e999", "1e15", "1000000000.5"};
	for (size_t i = 0; i < sizeof big_secs / sizeof *big_secs; i++) {
		set_bad("CUPTRACE_DELAY", big_secs[i], "too large: at most 1000000000 seconds");
		set_bad("CUPTRACE_DURATION", big_secs[i], "too large: at most 1000000000 seconds");
		set_bad("CUPTRACE_HANG_TIMEOUT", big_secs[i], "too large: at most 1000000000 seconds");
	}
	set_ok("CUPTRACE_DURATION", "1e9");
	CHECK(cfg.duration == 1e9);
	CHECK(cfg.delay == 1000);
	/* The hang watchdog: off (0) unless given at least 0.1 s. */
	CHECK(cfg.hang_timeout == 0);
	set_ok("CUPTRACE_HANG_TIMEOUT", "1.5");
	CHECK(cfg.hang_timeout == 1.5);
	for (size_t i = 0; i < sizeof bad_secs / sizeof *bad_secs; i++)
		set_bad("CUPTRACE_HANG_TIMEOUT", bad_secs[i], "expected seconds >= 0.1");
	static const char *const short_secs[] = {"0", "0.000001", "1e-300", "1e-320", "0.0999"};
	for (size_t i = 0; i < sizeof short_secs / sizeof *short_secs; i++)
		set_bad("CUPTRACE_HANG_TIMEOUT", short_secs[i], "expected seconds >= 0.1");
	CHECK(cfg.hang_timeout == 1.5);
	set_ok("CUPTRACE_HANG_TIMEOUT", "0.1");
	CHECK(cfg.hang_timeout == 0.1);
	/* A value too small for a double underflows (ERANGE): still a number. */
	set_ok("CUPTRACE_DELAY", "1e-320");
	CHECK(cfg.delay >= 0 && cfg.delay < 1e-300);
	/* The record clock: auto unless told. */
	CHECK_EQ(cfg.clock, CT_CLOCK_AUTO);
	set_ok("CUPTRACE_CLOCK", "tsc");
	CHECK_EQ(cfg.clock, CT_CLOCK_TSC);
	set_ok("CUPTRACE_CLOCK", "monotonic");
	CHECK_EQ(cfg.clock, CT_CLOCK_MONOTONIC);
	static const char *const bad_clk[] = {"", "TSC", "realtime", "tsc ", "mono"};
	for (size_t i = 0; i < sizeof bad_clk / sizeof *bad_clk; i++)
		set_bad("CUPTRACE_CLOCK", bad_clk[i], "expected auto, tsc or monotonic");
	CHECK_EQ(cfg.clock, CT_CLOCK_MONOTONIC);
	set_ok("CUPTRACE_CLOCK", "auto");
	CHECK_EQ(cfg.clock, CT_CLOCK_AUTO);

	set_ok("CUPTRACE_BUFFER_MB", "1");
	CHECK_EQ(cfg.buffer_mb, 1);
	set_ok("CUPTRACE_BUFFER_MB", "1048576");
	CHECK_EQ(cfg.buffer_mb, 1048576);
	static const char *const bad_mb[] = {"0", "1048577", "64MB", "", "-5", "1.5"};
	for (size_t i = 0; i < sizeof bad_mb / sizeof *bad_mb; i++)
		set_bad("CUPTRACE_BUFFER_MB", bad_mb[i], "expected megabytes from 1 to 1048576");
	CHECK_EQ(cfg.buffer_mb, 1048576);

	static const char *const levels[] = {"quiet", "warn", "info", "debug"};
	for (int i = 0; i < 4; i++) {
		set_ok("CUPTRACE_LOG", levels[i]);
		CHECK_EQ(cfg.log, i);
	}
	set_bad("CUPTRACE_LOG", "verbose", "expected quiet, warn, info or debug");
	set_bad("CUPTRACE_LOG", "", "expected quiet");
}

static void test_strings(void)
{
	set_ok("CUPTRACE_OUTPUT", "traces/%q{SLURM_JOB_ID}/rank%r.ctr");
	CHECK_STR(cfg.output, "traces/%q{SLURM_JOB_ID}/rank%r.ctr");
	set_bad("CUPTRACE_OUTPUT", "", "empty pattern");
	set_bad("CUPTRACE_OUTPUT", "out/%x", "unknown token %x");
	set_bad("CUPTRACE_OUTPUT", "out/%q{", "unclosed %q{");
	static char huge[5000];
	memset(huge, 'a', sizeof huge - 1);
	char prefix[300];
	CHECK_EQ(ct_config_set(&cfg, "CUPTRACE_OUTPUT", huge, err, sizeof err), -1);
	/* Long values are cut in the message, which stays one line. */
	snprintf(prefix, sizeof prefix, "CUPTRACE_OUTPUT=%.200s: ", huge);
	CHECK(!strncmp(err, prefix, strlen(prefix)) && strstr(err, "too long"));
	CHECK_STR(cfg.output, "traces/%q{SLURM_JOB_ID}/rank%r.ctr");

	set_ok("CUPTRACE_STEP_RANGE", "train_step");
	CHECK_STR(cfg.step_range, "train_step");
	set_bad("CUPTRACE_STEP_RANGE", "", "expected a range name");
	set_bad("CUPTRACE_NOPE", "1", "unknown variable");
}

/* The header's config text holds lines that parse back to the same
 * settings. */
static void test_dump(void)
{
	ct_config_defaults(&cfg);
	set_ok("CUPTRACE_OUTPUT", "o/%r.ctr");
	set_ok("CUPTRACE_TRACE", "kernel,nvtx");
	set_ok("CUPTRACE_CAPTURE", "nvtx:step@dom");
	set_ok("CUPTRACE_CAPTURE_REPEAT", "3");
	set_ok("CUPTRACE_DELAY", "1.5");
	set_ok("CUPTRACE_DURATION", "20");
	set_ok("CUPTRACE_BUFFER_MB", "32");
	set_ok("CUPTRACE_LOG", "info");
	set_ok("CUPTRACE_STEPS", "wait=1,warmup=2,active=3,repeat=4");
	set_ok("CUPTRACE_STEP_RANGE", "iter");
	set_ok("CUPTRACE_CLOCK", "tsc");
	set_ok("CUPTRACE_TORCH", "memory,shapes");
	char a[4096], b[4096];
	size_t n = ct_config_dump(&cfg, a, sizeof a);
	CHECK_EQ(n, strlen(a));
	struct ct_config saved = cfg;
	ct_config_defaults(&cfg);
	char *line = a, *save = NULL;
	int lines = 0;
	char copy[4096];
	snprintf(copy, sizeof copy, "%s", a);
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(line, '=');
		CHECK(eq != NULL);
		*eq = 0;
		set_ok(line, eq + 1);
		lines++;
	}
	CHECK_EQ(lines, 12);
	CHECK(strstr(a, "\nCUPTRACE_TORCH=shapes,memory\n") != NULL);
	CHECK_EQ(ct_config_dump(&cfg, b, sizeof b), n);
	CHECK_STR(a, b);
	CHECK(cfg.sources == saved.sources && cfg.capture == saved.capture &&
	      cfg.buffer_mb == saved.buffer_mb && cfg.steps.repeat == saved.steps.repeat &&
	      cfg.clock == CT_CLOCK_TSC && cfg.torch == (CT_TORCH_SHAPES | CT_TORCH_MEMORY));
	/* A short buffer: cut, never overrun, the return value within it. */
	char small[40];
	memset(small, 'Z', sizeof small);
	n = ct_config_dump(&cfg, small, 20);
	CHECK(n <= 20);
	for (size_t i = 20; i < sizeof small; i++)
		CHECK_EQ(small[i], 'Z');
}

/* ---- unknown variable names */

static char warned[8][64], closest[8][64];
static int nwarned;

static void on_warn(const char *name, const char *best)
{
	CHECK(nwarned < 8);
	snprintf(warned[nwarned], sizeof warned[0], "%s", name);
	snprintf(closest[nwarned], sizeof closest[0], "%s", best ? best : "(none)");
	nwarned++;
}

static void test_check_names(void)
{
	char *env[] = {
		"CUPTRACE_OUTPT=x",	   "CUPTRACE_OUTPUT=y",	      "PATH=/bin",
		"CUPTRACE_BUFER_MB=4",	   "CUPTRACE_CAPTURE_REPEATS=2", "CUPTRACE_STEP=3",
		"CUPTRACE_trace=nvtx",	   "CUPTRACE_LOG=warn",	      "MY_CUPTRACE_OUTPUT=1",
		"CUPTRACE_DELAY",	   NULL,
	};
	ct_config_check_names(env, on_warn);
	static const char *const want[][2] = {
		{"CUPTRACE_OUTPT", "CUPTRACE_OUTPUT"},
		{"CUPTRACE_BUFER_MB", "CUPTRACE_BUFFER_MB"},
		{"CUPTRACE_CAPTURE_REPEATS", "CUPTRACE_CAPTURE_REPEAT"},
		{"CUPTRACE_STEP", "CUPTRACE_STEPS"},
		{"CUPTRACE_trace", "CUPTRACE_TRACE"},
	};
	CHECK_EQ(nwarned, 5);
	for (int i = 0; i < 5; i++) {
		CHECK_STR(warned[i], want[i][0]);
		CHECK_STR(closest[i], want[i][1]);
	}
	/* Every known name passes. */
	nwarned = 0;
	char known[24][64];
	char *kenv[25] = {0};
	int n = 0;
	for (; ct_config_vars[n]; n++) {
		snprintf(known[n], sizeof known[n], "%s=1", ct_config_vars[n]);
		kenv[n] = known[n];
	}
	CHECK_EQ(n, 19);
	ct_config_check_names(kenv, on_warn);
	CHECK_EQ(nwarned, 0);
	/* The Python package's own variable is known too, not a close miss. */
	char *penv[] = {"CUPTRACE_TORCH_CACHE=/tmp/c", "CUPTRACE_TORCH_CACH=1", NULL};
	ct_config_check_names(penv, on_warn);
	CHECK_EQ(nwarned, 1);
	CHECK_STR(warned[0], "CUPTRACE_TORCH_CACH");
	nwarned = 0;
	ct_config_check_names(NULL, on_warn);
	CHECK_EQ(nwarned, 0);
	/* Names the launcher warned about (CT_WARNED_VAR) are not warned again;
	 * others still are, and a prefix of a listed name is not listed. */
	char *lenv[] = {"CUPTRACE_OUTPT=x", "CUPTRACE_BUFER_MB=4", "CUPTRACE_OUT=1",
			CT_WARNED_VAR "=CUPTRACE_BUFER_MB,CUPTRACE_OUTPT", NULL};
	ct_config_check_names(lenv, on_warn);
	CHECK_EQ(nwarned, 1);
	CHECK_STR(warned[0], "CUPTRACE_OUT");
}

/* ---- rank detection */

static struct ct_rankinfo detect(const char *const *env)
{
	struct ct_rankinfo ri;
	env_tab = env;
	ct_rank_detect(&ri, fake_getenv);
	return ri;
}

static void check_rank(const char *const *env, long rank, long local, long size, long lsize,
		       const char *source)
{
	struct ct_rankinfo ri = detect(env);
	if (ri.rank != rank || ri.local_rank != local || ri.world_size != size ||
	    ri.local_size != lsize || strcmp(ri.source, source)) {
		fprintf(stderr, "%s...: got %ld %ld %ld %ld from \"%s\", expected %ld %ld %ld %ld from \"%s\"\n",
			env[0] ? env[0] : "(empty)", ri.rank, ri.local_rank, ri.world_size, ri.local_size,
			ri.source, rank, local, size, lsize, source);
		exit(1);
	}
}

static void test_rank_detect(void)
{
	static const char *const nothing[] = {"HOME=/root", NULL};
	check_rank(nothing, -1, -1, -1, -1, "");

	static const char *const ompi[] = {
		"OMPI_COMM_WORLD_RANK=5", "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_SIZE=8",
		"OMPI_COMM_WORLD_LOCAL_SIZE=4",
		/* Open MPI also sets PMIx variables; its own family wins. */
		"PMIX_RANK=99", NULL,
	};
	check_rank(ompi, 5, 1, 8, 4, "OMPI_COMM_WORLD_RANK");

	static const char *const pmix[] = {"PMIX_RANK=3", "PMIX_LOCAL_RANK=3", "PMIX_SIZE=4", NULL};
	check_rank(pmix, 3, 3, 4, -1, "PMIX_RANK");

	static const char *const pmi[] = {
		"PMI_RANK=6", "MPI_LOCALRANKID=2", "PMI_SIZE=12", "MPI_LOCALNRANKS=4", NULL,
	};
	check_rank(pmi, 6, 2, 12, 4, "PMI_RANK");

	static const char *const slurm[] = {
		"SLURM_PROCID=9", "SLURM_LOCALID=1", "SLURM_NTASKS=16", "SLURM_NTASKS_PER_NODE=4(x4)",
		"RANK=0", /* a stray RANK without torchrun: Slurm wins */ NULL,
	};
	check_rank(slurm, 9, 1, 16, 4, "SLURM_PROCID");

	/* torchrun inside srun: the workers' own RANK wins. */
	static const char *const torch[] = {
		"SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NTASKS=2", "TORCHELASTIC_RUN_ID=abc",
		"RANK=7", "LOCAL_RANK=3", "WORLD_SIZE=16", "LOCAL_WORLD_SIZE=8", NULL,
	};
	check_rank(torch, 7, 3, 16, 8, "RANK");
	/* TORCHELASTIC_RUN_ID without a usable RANK: back to the launcher. */
	static const char *const torch_norank[] = {
		"SLURM_PROCID=4", "TORCHELASTIC_RUN_ID=abc", "RANK=x", NULL,
	};
	check_rank(torch_norank, 4, -1, -1, -1, "SLURM_PROCID");

	static const char *const plain_torch[] = {"RANK=1", "WORLD_SIZE=2", NULL};
	check_rank(plain_torch, 1, -1, 2, -1, "RANK");

	static const char *const pals[] = {"PALS_RANKID=11", "PALS_LOCAL_RANKID=3", NULL};
	check_rank(pals, 11, 3, -1, -1, "PALS_RANKID");
	/* Cray MPICH under PALS: PMI_RANK comes first, with no MPI_LOCALRANKID;
	 * the local rank is PALS's, whose rank agrees. */
	static const char *const cray[] = {
		"PMI_RANK=5", "PMI_SIZE=12", "PALS_RANKID=5", "PALS_LOCAL_RANKID=1", "PALS_NODEID=1", NULL,
	};
	check_rank(cray, 5, 1, 12, -1, "PMI_RANK");
	/* Cray PMI's own local rank and size. */
	static const char *const cray_pmi[] = {
		"PMI_RANK=6", "PMI_LOCAL_RANK=2", "PMI_SIZE=12", "PMI_LOCAL_SIZE=4", NULL,
	};
	check_rank(cray_pmi, 6, 2, 12, 4, "PMI_RANK");
	/* Families that disagree on the rank are never mixed. */
	static const char *const disagree[] = {
		"PMI_RANK=5", "PMI_SIZE=12", "PALS_RANKID=6", "PALS_LOCAL_RANKID=2", NULL,
	};
	check_rank(disagree, 5, -1, 12, -1, "PMI_RANK");
	/* mpirun inside a Slurm allocation: Open MPI's own variables. */
	static const char *const ompi_slurm[] = {
		"SLURM_PROCID=0", "SLURM_LOCALID=0", "SLURM_NTASKS=1", "OMPI_COMM_WORLD_RANK=3",
		"OMPI_COMM_WORLD_LOCAL_RANK=3", "OMPI_COMM_WORLD_SIZE=4", NULL,
	};
	check_rank(ompi_slurm, 3, 3, 4, -1, "OMPI_COMM_WORLD_RANK");
	static const char *const mv2_full[] = {
		"MV2_COMM_WORLD_RANK=7", "MV2_COMM_WORLD_LOCAL_RANK=3", "MV2_COMM_WORLD_SIZE=8",
		"MV2_COMM_WORLD_LOCAL_SIZE=4", NULL,
	};
	check_rank(mv2_full, 7, 3, 8, 4, "MV2_COMM_WORLD_RANK");
	static const char *const mv2[] = {"MV2_COMM_WORLD_RANK=2", "MV2_COMM_WORLD_SIZE=3", NULL};
	check_rank(mv2, 2, -1, 3, -1, "MV2_COMM_WORLD_RANK");

	/* A rank that is not a number is ignored; the next family counts. */
	static const char *const junk[] = {
		"OMPI_COMM_WORLD_RANK=", "PMIX_RANK=1x", "PMI_RANK=-2", "SLURM_PROCID=3", NULL,
	};
	check_rank(junk, 3, -1, -1, -1, "SLURM_PROCID");
	/* Bad companions are unknown, not garbage. */
	static const char *const half[] = {"OMPI_COMM_WORLD_RANK=0", "OMPI_COMM_WORLD_SIZE=lots", NULL};
	check_rank(half, 0, -1, -1, -1, "OMPI_COMM_WORLD_RANK");
}

/* The flight recorder's variables: values, the watchdog's default in
 * flight mode, and the unused-setting warnings. */
static void test_flight(void)
{
	static const char *const env[] = {"CUPTRACE_FLIGHT=60", "CUPTRACE_FLIGHT_MB=16",
					  "CUPTRACE_FLIGHT_SIGNAL=SIGUSR2",
					  "CUPTRACE_FLIGHT_SLOW=3.5", "CUPTRACE_FLIGHT_EXIT=always", NULL};
	env_tab = env;
	CHECK_EQ(ct_config_parse(&cfg, fake_getenv, err, sizeof err), 0);
	CHECK(cfg.flight == 60 && cfg.flight_mb == 16 && cfg.flight_slow == 3.5);
	CHECK_EQ(cfg.flight_signal, SIGUSR2);
	CHECK_EQ(cfg.flight_exit, 1);
	CHECK(cfg.hang_timeout == CT_FLIGHT_HANG_DEFAULT && cfg.hang_default);
	char dump[4096];
	ct_config_dump(&cfg, dump, sizeof dump);
	CHECK(strstr(dump, "CUPTRACE_FLIGHT=60\nCUPTRACE_FLIGHT_MB=16\nCUPTRACE_FLIGHT_EXIT=always\n"));
	CHECK(strstr(dump, "CUPTRACE_FLIGHT_SIGNAL=USR2\n") && strstr(dump, "CUPTRACE_FLIGHT_SLOW=3.5\n"));
	/* The watchdog's default: not a setting of the user's, so no warning
	 * without the nccl source; the variable wins. */
	char *fenv[] = {"CUPTRACE_FLIGHT=60", NULL};
	nunused = 0;
	ct_config_check_unused(&cfg, fenv, on_unused);
	CHECK_EQ(nunused, 0);
	static const char *const env2[] = {"CUPTRACE_FLIGHT=1", "CUPTRACE_HANG_TIMEOUT=2", NULL};
	env_tab = env2;
	CHECK_EQ(ct_config_parse(&cfg, fake_getenv, err, sizeof err), 0);
	CHECK(cfg.hang_timeout == 2 && !cfg.hang_default && cfg.flight_mb == CT_FLIGHT_MB_DEFAULT);
	static const char *const env3[] = {"CUPTRACE_FLIGHT_MB=4", NULL}; /* flight off */
	env_tab = env3;
	CHECK_EQ(ct_config_parse(&cfg, fake_getenv, err, sizeof err), 0);
	CHECK(cfg.hang_timeout == 0 && cfg.flight == 0);
	char *uenv[] = {"CUPTRACE_FLIGHT_MB=4", NULL};
	nunused = 0;
	ct_config_check_unused(&cfg, uenv, on_unused);
	CHECK_EQ(nunused, 1);
	CHECK_STR(unused_name[0], "CUPTRACE_FLIGHT_MB");
	CHECK(strstr(unused_why[0], "the flight recorder is off"));
	ct_config_defaults(&cfg);
	set_bad("CUPTRACE_FLIGHT", "0.05", "expected seconds >= 0.1");
	set_bad("CUPTRACE_FLIGHT", "x", "expected seconds >= 0.1");
	set_bad("CUPTRACE_FLIGHT_MB", "0", "expected megabytes");
	set_bad("CUPTRACE_FLIGHT_SIGNAL", "KILL", "expected USR1, USR2");
	set_bad("CUPTRACE_FLIGHT_SLOW", "1", "expected a factor above 1");
	set_bad("CUPTRACE_FLIGHT_EXIT", "never", "expected error or always");
	set_bad("CUPTRACE_FLIGHTS", "1", "unknown variable");
}

int main(void)
{
	test_defaults();
	test_flight();
	test_parse_env();
	ct_config_defaults(&cfg);
	test_sources();
	test_torch();
	test_torch_unused();
	test_ranks();
	test_steps();
	test_capture();
	test_numbers();
	test_strings();
	test_dump();
	test_check_names();
	test_rank_detect();
	test_ranks_decide();
	return 0;
}
