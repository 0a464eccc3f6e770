/* Start, threads, fork, signals and exit: the one place that drives the
 * parts of the library, in this order:
 *   start   state (ct_init: configuration, rank, pool), capture, fork
 *           handlers, the writer when capture runs on a timer
 *   thread  a thread's first event: the writer, then the signal handlers
 *   tick    the writer's timer drives capture (delay, duration)
 *   fork    prepare: writer, definitions; parent: definitions, writer;
 *           child: state, definitions, writer, pool, threads, capture
 *   signal  flush through the writer, then the program's own handler or
 *           the default action
 *   exit    the writer's last block and footer
 * and the environment that makes one LD_PRELOAD enough
 * (NVTX_INJECTION64_PATH and the others point back here). */
#include "lifecycle.h"
#include "capture.h"
#include "defs.h"
#include "log.h"
#include "ring.h"
#include "thread.h"
#include "trace.h"
#include "writer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Set when ct_start found this process traced: only then is there a
 * writer to finish at exit. */
static int started;

/* Termination requests: flush, then the program's handler or the default
 * action. Fatal signals: best effort, only where the program left the
 * default action (a program that handles SIGSEGV itself keeps it). */
static const int term_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static const int fatal_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static struct sigaction prev[NSIG];
static volatile sig_atomic_t in_handler;

static void handler(int sig, siginfo_t *info, void *uc)
{
	int saved = errno;
	const struct sigaction *p = &prev[sig];
	int dies = !(p->sa_flags & SA_SIGINFO) && p->sa_handler == SIG_DFL;
	if (!in_handler) {
		in_handler = 1;
		ct_writer_flush_from_signal(dies, 3000);
		in_handler = 0;
	}
	if (dies) {
		/* Default action: re-deliver once this handler returns. */
		signal(sig, SIG_DFL);
		raise(sig);
	} else if (p->sa_flags & SA_SIGINFO) {
		p->sa_sigaction(sig, info, uc);
	} else if (p->sa_handler != SIG_IGN) {
		p->sa_handler(sig);
	}
	errno = saved;
}

static void install(int sig, int only_if_default)
{
	struct sigaction old, sa;
	if (sigaction(sig, NULL, &old))
		return;
	int is_default = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL;
	int is_ignored = !(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN;
	if (is_ignored || (only_if_default && !is_default))
		return;
	prev[sig] = old;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | (old.sa_flags & SA_ONSTACK);
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

static void install_all(void)
{
	for (size_t i = 0; i < sizeof term_sigs / sizeof *term_sigs; i++)
		install(term_sigs[i], 0);
	for (size_t i = 0; i < sizeof fatal_sigs / sizeof *fatal_sigs; i++)
		install(fatal_sigs[i], 1);
}

static pthread_once_t sig_once = PTHREAD_ONCE_INIT;

/* A thread's first event (thread.c's hook). */
static void on_thread_registered(void)
{
	ct_writer_ensure();
	/* Signal handlers only now: a program that looks at its dispositions
	 * at start-up (Python installs KeyboardInterrupt only over SIG_DFL)
	 * must find them as it left them. */
	pthread_once(&sig_once, install_all);
}

static void fork_prepare(void)
{
	ct_writer_fork_prepare();
	ct_defs_fork_prepare();
}

static void fork_parent(void)
{
	ct_defs_fork_parent();
	ct_writer_fork_parent();
}

static void fork_child(void)
{
	/* The child keeps tracing into a file of its own; the parent's rings
	 * and file stay the parent's. */
	ct.pid = (int)getpid();
	ct_defs_fork_child();
	ct_writer_fork_child();
	ct_pool_reset();
	ct_threads_fork_child();
	ct_capture_fork_child();
}

static void start_once(void)
{
	/* The hooks first: a thread may record as soon as ct_init made the
	 * process active. */
	atomic_store(&ct_thread_hook, on_thread_registered);
	atomic_store(&ct_writer_tick_hook, ct_capture_tick);
	ct_init();
	if (!ct.active)
		return;
	started = 1;
	ct_capture_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	if (ct_capture_has_timer())
		ct_writer_ensure();
}

static pthread_once_t start_ctl = PTHREAD_ONCE_INIT;

void ct_start(void)
{
	pthread_once(&start_ctl, start_once);
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
	ct_start();
	if (ct.active)
		wire_environment();
}

__attribute__((destructor)) static void on_unload(void)
{
	if (started && ct.active)
		ct_writer_finish();
}
