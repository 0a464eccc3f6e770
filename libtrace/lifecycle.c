#include "lifecycle.h"
#include "capture.h"
#include "defs.h"
#include "log.h"
#include "thread.h"
#include "trace.h"
#include "writer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

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

void ct_signals_install(void)
{
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

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void fork_install_once(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void ct_fork_install(void)
{
	pthread_once(&fork_once, fork_install_once);
}
