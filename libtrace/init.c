/* Process start: configuration, rank selection, and the environment that
 * makes one LD_PRELOAD enough (NVTX_INJECTION64_PATH points back here). */
#include "capture.h"
#include "clock.h"
#include "common/config.h"
#include "log.h"
#include "ring.h"
#include "lifecycle.h"
#include "trace.h"
#include "writer.h"

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

static void read_cmdline(void)
{
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
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

static void init_once(void)
{
	char err[512];
	ct.pid = (int)getpid();
	if (ct_config_parse(&ct.cfg, env, err, sizeof err)) {
		ct_log_error("%s; this process is not traced", err);
		return;
	}
	ct_log_level = ct.cfg.log;
	ct_config_check_names(environ, warn_unknown);
	ct_rank_detect(&ct.rank, env);
	if (!ct_rankset_has(&ct.cfg.ranks, ct.rank.rank < 0 ? 0 : ct.rank.rank,
			    ct.rank.local_rank < 0 ? 0 : ct.rank.local_rank)) {
		ct_info("rank %ld is not in CUPTRACE_RANKS; not traced", ct.rank.rank);
		return;
	}
	if (gethostname(ct.host, sizeof ct.host - 1))
		snprintf(ct.host, sizeof ct.host, "unknown");
	find_self();
	read_cmdline();
	ct_clock_anchor(&ct.rt_anchor, &ct.mono_anchor);
	if (ct_pool_init((size_t)ct.cfg.buffer_mb << 20)) {
		ct_log_error("cannot reserve CUPTRACE_BUFFER_MB=%lu MB; this process is not traced",
			     ct.cfg.buffer_mb);
		return;
	}
	ct.active = 1;
	ct_capture_init();
	ct_fork_install();
	if (ct_capture_has_timer())
		ct_writer_ensure();
}

static pthread_once_t once = PTHREAD_ONCE_INIT;

void ct_init(void)
{
	pthread_once(&once, init_once);
}

static void point_at_self(const char *var, const char *what)
{
	const char *cur = getenv(var);
	if (!cur)
		setenv(var, ct.self_path, 0);
	else if (strcmp(cur, ct.self_path))
		ct_info("%s is set to %s; %s go there", var, cur, what);
}

/* Point the loaders of NVTX, CUDA and NCCL at this library, unless the
 * user chose otherwise. The CUDA driver then calls InitializeInjection when
 * the program initialises CUDA (cupti.c); NCCL loads the profiler plugin. */
static void wire_environment(void)
{
	if (!ct.self_path[0])
		return;
	if (ct.cfg.sources & CT_SRC_NVTX)
		point_at_self("NVTX_INJECTION64_PATH", "NVTX ranges");
	if (ct.cfg.sources & (CT_SRC_CUDA | CT_SRC_MEMORY))
		point_at_self("CUDA_INJECTION64_PATH", "GPU activity");
	/* NCCL reads it when its first communicator is created. */
	if (ct.cfg.sources & CT_SRC_NCCL)
		point_at_self("NCCL_PROFILER_PLUGIN", "NCCL collectives");
}

__attribute__((constructor)) static void on_load(void)
{
	ct_init();
	if (ct.active)
		wire_environment();
}

__attribute__((destructor)) static void on_unload(void)
{
	if (ct.active)
		ct_writer_finish();
}
