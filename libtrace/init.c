// SPDX-License-Identifier: MIT
/* The process state `ct` (trace.h), at the bottom of the library's order:
 * every part reads it, it calls none of them. ct_init fills it once:
 * configuration, rank selection, host, command line, clock anchors and the
 * ring pool; lifecycle.c calls it first thing. (Unit tests link
 * tests/unit/unit_init.c in its place.) */
#include "clock.h"
#include "config.h"
#include "io.h"
#include "log.h"
#include "ring.h"
#include "trace.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

struct ct_state ct;

void ct_clock_anchor(uint64_t *rt, uint64_t *mono)
{
	uint64_t best = ~0ull;
	for (int i = 0; i < 5; i++) {
		uint64_t a = ct_now(), r = ct_realtime(), b = ct_now();
		if (b - a < best) {
			best = b - a;
			*rt = r;
			*mono = a + (b - a) / 2;
		}
	}
}

static const char *env(const char *name)
{
	return secure_getenv(name);
}

static void warn_unknown(const char *name, const char *closest)
{
	ct_warn("unknown variable %s (did you mean %s?)", name, closest);
}

static void warn_unused(const char *name, const char *why)
{
	ct_warn("%s=%s %s", name, secure_getenv(name) ? secure_getenv(name) : "", why);
}

static void read_cmdline(void)
{
	int fd = ct_open_high("/proc/self/cmdline", O_RDONLY, 0);
	if (fd < 0)
		return;
	size_t cap = 65536;
	char *buf = malloc(cap);
	ssize_t n = buf ? read(fd, buf, cap - 1) : -1;
	close(fd);
	if (n <= 0) {
		free(buf);
		return;
	}
	while (n > 0 && buf[n - 1] == 0)
		n--;
	buf[n] = 0;
	ct.cmdline = buf;
	ct.cmdline_len = (size_t)n;
}

static void find_self(void)
{
	Dl_info info;
	if (dladdr((void *)&ct_init, &info) && info.dli_fname &&
	    !realpath(info.dli_fname, ct.self_path))
		snprintf(ct.self_path, sizeof ct.self_path, "%s", info.dli_fname);
}

/* A relative CUPTRACE_OUTPUT is taken from where the process started: the
 * file is created at its first block, after a program may have changed
 * directory (its trace would go elsewhere, and `cuptrace run --stats`
 * would find nothing). */
static void absolute_output(void)
{
	char cwd[4096];
	size_t n = strlen(ct.cfg.output);
	if (ct.cfg.output[0] == '/' || !getcwd(cwd, sizeof cwd))
		return;
	size_t c = strlen(cwd);
	const char *rel = !strncmp(ct.cfg.output, "./", 2) ? ct.cfg.output + 2 : ct.cfg.output;
	if (c + 1 + n + 1 > sizeof ct.cfg.output)
		return;
	memmove(ct.cfg.output + c + 1, rel, strlen(rel) + 1);
	memcpy(ct.cfg.output, cwd, c);
	ct.cfg.output[c] = '/';
}

static void init_once(void)
{
	ct_log_open();
	char err[512];
	ct.pid = (int)getpid();
	if (ct_config_parse(&ct.cfg, env, err, sizeof err)) {
		ct_log_error("%s; this process is not traced", err);
		return;
	}
	ct_log_level = ct.cfg.log;
	absolute_output();
	ct_config_check_names(environ, warn_unknown);
	ct_config_check_unused(&ct.cfg, environ, warn_unused);
	ct_rank_detect(&ct.rank, env);
	char why[256];
	int traced = ct_ranks_decide(&ct.cfg.ranks, &ct.rank, why, sizeof why);
	if (traced < 0) {
		ct_log_error("CUPTRACE_RANKS=%s: %s; this process is not traced",
			     env("CUPTRACE_RANKS") ? env("CUPTRACE_RANKS") : "", why);
		return;
	}
	if (!traced) {
		ct_info("rank %ld is not in CUPTRACE_RANKS; not traced", ct.rank.rank);
		return;
	}
	if (gethostname(ct.host, sizeof ct.host - 1))
		snprintf(ct.host, sizeof ct.host, "unknown");
	find_self();
	read_cmdline();
	ct_clock_anchor(&ct.rt_anchor, &ct.mono_anchor);
	/* Before the first record; the mode it took goes into the header. */
	ct.cfg.clock = (enum ct_clock_mode)ct_clock_setup(ct.cfg.clock);
	if (ct_pool_init((size_t)ct.cfg.buffer_mb << 20)) {
		ct_log_error("cannot reserve CUPTRACE_BUFFER_MB=%lu MB; this process is not traced",
			     ct.cfg.buffer_mb);
		return;
	}
	ct.active = 1;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

void ct_init(void)
{
	pthread_once(&once, init_once);
}
