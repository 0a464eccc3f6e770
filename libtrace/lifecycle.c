// SPDX-License-Identifier: MIT
/* Start, threads, fork, signals and exit: the one place that drives the
 * parts of the library, in this order:
 *   start   state (ct_init: configuration, rank, pool), capture, fork
 *           handlers, the writer when capture runs on a timer
 *   thread  a thread's first event: the writer, then the signal handlers
 *   tick    the writer's timer drives capture (delay, duration)
 *   fork    prepare: capture, writer, definitions; parent: definitions,
 *           writer, capture; child: state, definitions, writer, pool,
 *           threads, capture (which follows the parent's from here)
 *   signal  flush through the writer, then the program's own handler or
 *           the default action
 *   exec    (execve and its siblings) the writer's footer, fsync; then exec
 *   _exit   (_exit, _Exit) the writer's footer, fsync, close; then _exit;
 *           cuptrace_leaving does the same where _exit is not interposed
 *   exit    the writer's last block and footer, with the status where
 *           exit() or main's return gave it
 * and the environment that makes one LD_PRELOAD enough
 * (NVTX_INJECTION64_PATH and the others point back here). */
#include "lifecycle.h"
#include "capture.h"
#include "clock.h"
#include "defs.h"
#include "log.h"
#include "ring.h"
#include "thread.h"
#include "trace.h"
#include "writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Set when ct_start found this process traced: only then is there a
 * writer to finish at exit. */
static int started;

/* Termination requests: flush, then the program's handler or the default
 * action. Every other signal whose default action ends the process, and
 * the fatal ones: best effort, only where the program left the default
 * action (a program that handles SIGSEGV or SIGUSR1 itself keeps it). The
 * real-time signals, whose default action ends the process too, are added
 * in install_all. */
static const int term_sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static const int default_sigs[] = {SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU, SIGXFSZ,
				   SIGVTALRM, SIGPROF, SIGSTKFLT, SIGPWR, SIGSYS, SIGTRAP,
				   SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

static struct sigaction prev[NSIG];
/* Per thread: a flush from a handler that interrupted this thread's own
 * flush would wait on itself. Other threads' handlers flush on their own:
 * the writer serves every request (ct_writer_flush). */
static __thread int in_handler __attribute__((tls_model("initial-exec")));

/* How long a handler waits for the writer. */
#define SIGNAL_FLUSH_MS 3000
/* ... and before that, for sources that hold records (ct_leaving_hook):
 * short, so that the writer's flush still fits into the second Open MPI
 * allows between SIGTERM and SIGKILL. */
#define SOURCES_FLUSH_MS 300

void (*_Atomic ct_leaving_hook)(int timeout_ms);

static void flush_sources(void)
{
	void (*hook)(int) = atomic_load(&ct_leaving_hook);
	if (hook)
		hook(SOURCES_FLUSH_MS);
}

/* At most one block a second for signals the program handles. */
static int handled_flush_due(void)
{
	static _Atomic uint64_t last;
	uint64_t now = ct_now(), was = atomic_load(&last);
	return now - was >= 1000000000ull && atomic_compare_exchange_strong(&last, &was, now);
}

static void handler(int sig, siginfo_t *info, void *uc)
{
	int saved = errno;
	struct sigaction *p = &prev[sig];
	int dies = !(p->sa_flags & SA_SIGINFO) && p->sa_handler == SIG_DFL;
	/* In a vfork child (the parent's memory): not ours to flush. */
	if (!in_handler && syscall(SYS_getpid) == ct.pid) {
		in_handler = 1;
		if (dies) {
			flush_sources();
			ct_writer_flush(CT_FLUSH_FOOTER, CT_END_SIGNAL, (uint32_t)sig,
					SIGNAL_FLUSH_MS);
		} else if (handled_flush_due()) {
			/* The program's handler may end the process in a way
			 * nothing sees: what is recorded goes to the file, asked
			 * for without waiting and at most once a second (a block
			 * per signal made 2000 SIGHUPs 15x slower, and waiting
			 * held a handler that calls exit() for 3 s) */
			ct_writer_flush(CT_FLUSH_BLOCK, CT_END_SIGNAL, (uint32_t)sig, 0);
		}
		in_handler = 0;
	}
	if (dies) {
		/* Default action: re-deliver once this handler returns. */
		signal(sig, SIG_DFL);
		raise(sig);
	} else {
		/* The kernel applied the previous handler's mask and flags to
		 * ours (install); SA_RESETHAND is done here, as the kernel
		 * would have done it on entry. */
		struct sigaction call = *p;
		if (call.sa_flags & SA_RESETHAND) {
			signal(sig, SIG_DFL);
			p->sa_handler = SIG_DFL, p->sa_flags = 0;
		}
		if (call.sa_flags & SA_SIGINFO)
			call.sa_sigaction(sig, info, uc);
		else if (call.sa_handler != SIG_IGN && call.sa_handler != SIG_DFL)
			call.sa_handler(sig);
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
	if (is_default) {
		sa.sa_flags = SA_SIGINFO | SA_RESTART | (old.sa_flags & SA_ONSTACK);
		sigemptyset(&sa.sa_mask);
	} else {
		/* The program's handler runs inside ours: with its own mask,
		 * and its restart, nodefer and stack choices. */
		sa.sa_flags = SA_SIGINFO | (old.sa_flags & (SA_ONSTACK | SA_RESTART | SA_NODEFER));
		sa.sa_mask = old.sa_mask;
	}
	sigaction(sig, &sa, NULL);
}

static void install_all(void)
{
	int fs = ct_writer_flight_signal(); /* CUPTRACE_FLIGHT_SIGNAL's: ours alone */
	for (size_t i = 0; i < sizeof term_sigs / sizeof *term_sigs; i++)
		if (term_sigs[i] != fs)
			install(term_sigs[i], 0);
	for (size_t i = 0; i < sizeof default_sigs / sizeof *default_sigs; i++)
		if (default_sigs[i] != fs)
			install(default_sigs[i], 1);
	/* glibc keeps the first few for itself; SIGRTMIN is past them. */
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		install(sig, 1);
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

void ct_source_started(void)
{
	if (started && ct.active)
		on_thread_registered();
}

/* Signals stay blocked from prepare to parent/child: a handler that ran in
 * between would wait for a writer that waits on the locks this thread
 * holds (and, in the child, for a writer that does not exist). */
static __thread sigset_t fork_mask __attribute__((tls_model("initial-exec")));

static void fork_prepare(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &fork_mask);
	/* Capture first: a switch (under its lock) may start the writer. */
	ct_capture_fork_prepare();
	ct_writer_fork_prepare();
	ct_defs_fork_prepare();
}

static void fork_parent(void)
{
	ct_defs_fork_parent();
	ct_writer_fork_parent();
	ct_capture_fork_parent();
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

static void fork_child(void)
{
	/* The child keeps tracing into a file of its own; the parent's rings
	 * and file stay the parent's. */
	ct.forked_from = ct.pid; /* the parent's, as the child inherited it */
	ct.pid = (int)getpid();
	ct_defs_fork_child();
	ct_writer_fork_child();
	ct_pool_reset();
	ct_threads_fork_child();
	ct_capture_fork_child();
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

/* ---- exec and _exit: the process leaves without running its exit
 * handlers, so the file gets its footer (and fsync) here. Interposed where
 * the library is preloaded; the real functions are looked up at start,
 * since _exit may be called from a signal handler, where dlsym may not. */
#define LEAVE_FLUSH_MS 5000

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);
typedef void (*exit_fn)(int);
typedef int (*kill_fn)(pid_t, int);

static struct {
	execve_fn execve, execvpe;
	execv_fn execv, execvp;
	fexecve_fn fexecve;
	execveat_fn execveat;
	exit_fn exit_now, exit_now2, exit;
	kill_fn kill;
} real;

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static void resolve_real(void)
{
	real.execve = (execve_fn)next_sym("execve");
	real.execvpe = (execve_fn)next_sym("execvpe");
	real.execv = (execv_fn)next_sym("execv");
	real.execvp = (execv_fn)next_sym("execvp");
	real.fexecve = (fexecve_fn)next_sym("fexecve");
	real.execveat = (execveat_fn)next_sym("execveat");
	real.exit_now = (exit_fn)next_sym("_exit");
	real.exit_now2 = (exit_fn)next_sym("_Exit");
	real.exit = (exit_fn)next_sym("exit");
	real.kill = (kill_fn)next_sym("kill");
}

/* Only the process that owns the writer flushes: not a vfork child, which
 * runs in its parent's memory (Python's subprocess execs from one). */
static int owns_writer(void)
{
	return started && ct.active && syscall(SYS_getpid) == ct.pid;
}

static void before_exec(void)
{
	/* The file stays open (O_CLOEXEC closes it): a failed exec goes on
	 * recording into it, and a later footer says how it ended after all. */
	if (owns_writer()) {
		flush_sources();
		ct_writer_flush(CT_FLUSH_SYNC, CT_END_EXEC, 0, LEAVE_FLUSH_MS);
	}
}

#define CALL_REAL(fn, ...)                                                                         \
	do {                                                                                       \
		if (!real.fn)                                                                      \
			real.fn = next_sym(#fn);                                                   \
		if (!real.fn) {                                                                    \
			errno = ENOSYS;                                                            \
			return -1;                                                                 \
		}                                                                                  \
		before_exec();                                                                     \
		return real.fn(__VA_ARGS__);                                                       \
	} while (0)

CT_API int execve(const char *path, char *const argv[], char *const envp[])
{
	CALL_REAL(execve, path, argv, envp);
}

CT_API int execvpe(const char *file, char *const argv[], char *const envp[])
{
	CALL_REAL(execvpe, file, argv, envp);
}

CT_API int execv(const char *path, char *const argv[])
{
	CALL_REAL(execv, path, argv);
}

CT_API int execvp(const char *file, char *const argv[])
{
	CALL_REAL(execvp, file, argv);
}

CT_API int fexecve(int fd, char *const argv[], char *const envp[])
{
	CALL_REAL(fexecve, fd, argv, envp);
}

CT_API int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags)
{
	CALL_REAL(execveat, dirfd, path, argv, envp, flags);
}

/* execl, execlp, execle: the arguments into an array, then the v form. */
#define COLLECT_ARGS(argv, arg, last)                                                              \
	size_t n_ = 1;                                                                             \
	va_list ap_;                                                                               \
	va_start(ap_, last);                                                                       \
	while (va_arg(ap_, char *))                                                                \
		n_++;                                                                              \
	va_end(ap_);                                                                               \
	char *argv[n_ + 1];                                                                        \
	argv[0] = (char *)(arg);                                                                   \
	va_start(ap_, last);                                                                       \
	for (size_t i_ = 1; i_ <= n_; i_++)                                                        \
		argv[i_] = va_arg(ap_, char *);

CT_API int execl(const char *path, const char *arg, ...)
{
	COLLECT_ARGS(argv, arg, arg)
	va_end(ap_);
	return execv(path, argv);
}

CT_API int execlp(const char *file, const char *arg, ...)
{
	COLLECT_ARGS(argv, arg, arg)
	va_end(ap_);
	return execvp(file, argv);
}

CT_API int execle(const char *path, const char *arg, ...)
{
	COLLECT_ARGS(argv, arg, arg)
	char *const *envp = va_arg(ap_, char *const *);
	va_end(ap_);
	return execve(path, argv, envp);
}

static _Noreturn void leave_now(exit_fn fn, int status)
{
	if (owns_writer()) {
		flush_sources();
		ct_writer_flush(CT_FLUSH_CLOSE, CT_END_EXIT_NOW, (uint32_t)status & 0xff,
				LEAVE_FLUSH_MS);
	}
	if (fn)
		fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

CT_API void _exit(int status)
{
	leave_now(real.exit_now, status);
}

/* Whether the process's _exit is this library's (preloaded, or linked
 * before libc): loaded with dlopen, it is libc's, and nothing of ours runs
 * when the process leaves by it. */
static int exit_is_ours(void)
{
	Dl_info mine, theirs;
	void *fn = dlsym(RTLD_DEFAULT, "_exit");
	return fn && dladdr(&started, &mine) && dladdr(fn, &theirs) &&
	       mine.dli_fbase == theirs.dli_fbase;
}

void ct_leaving(int status)
{
	if (owns_writer() && !exit_is_ours()) {
		flush_sources();
		ct_writer_flush(CT_FLUSH_CLOSE, CT_END_EXIT_NOW, (uint32_t)status & 0xff,
				LEAVE_FLUSH_MS);
	}
}

/* ---- a process that signals itself to its end: Python, leaving on an
 * uncaught KeyboardInterrupt, sets SIGINT back to the default action (over
 * our handler) and kills itself, so that its parent sees it die of SIGINT;
 * without this, nothing of ours would run and the file would have no
 * footer (it would read as cut short). The footer is written first when
 * the signal's action is the default one and ends the process. */
static int ends_process(int sig)
{
	int listed = 0;
	for (size_t i = 0; i < sizeof term_sigs / sizeof *term_sigs; i++)
		listed |= term_sigs[i] == sig;
	for (size_t i = 0; i < sizeof default_sigs / sizeof *default_sigs; i++)
		listed |= default_sigs[i] == sig;
	struct sigaction cur;
	return (listed || (sig >= SIGRTMIN && sig <= SIGRTMAX)) && !sigaction(sig, NULL, &cur) &&
	       !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
}

CT_API int kill(pid_t pid, int sig)
{
	if (pid > 0 && pid == ct.pid && owns_writer() && ends_process(sig)) {
		flush_sources();
		ct_writer_flush(CT_FLUSH_FOOTER, CT_END_SIGNAL, (uint32_t)sig, SIGNAL_FLUSH_MS);
	}
	if (!real.kill)
		return (int)syscall(SYS_kill, pid, sig);
	return real.kill(pid, sig);
}

CT_API void _Exit(int status)
{
	leave_now(real.exit_now2, status);
}

/* ---- exit and main's return: the status for the footer. Interposed where
 * the library is preloaded (a program's own call to exit, and main through
 * __libc_start_main); elsewhere, and for exits inside libc, the footer
 * says exit with the status unknown. Only the status is noted here: the
 * writer finishes in the destructor, after the program's exit handlers. */
static _Atomic uint32_t exit_detail;

static void note_status(int status)
{
	atomic_store(&exit_detail, CT_EXIT_STATUS_KNOWN | ((uint32_t)status & 0xff));
}

CT_API _Noreturn void exit(int status)
{
	note_status(status);
	exit_fn fn = real.exit ? real.exit : (exit_fn)next_sym("exit"); /* before our start */
	if (fn)
		fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

/* quick_exit: glibc's leaves by its own _exit, which nothing interposes;
 * the program's at_quick_exit handlers run, then ours (registered first,
 * so run last) finishes the file as _exit does, with the status noted. */
CT_API _Noreturn void quick_exit(int status)
{
	note_status(status);
	exit_fn fn = (exit_fn)next_sym("quick_exit");
	if (fn)
		fn(status);
	for (;;)
		syscall(SYS_exit_group, status);
}

static void on_quick_exit(void)
{
	if (owns_writer()) {
		flush_sources();
		ct_writer_flush(CT_FLUSH_CLOSE, CT_END_EXIT, atomic_load(&exit_detail), LEAVE_FLUSH_MS);
	}
}

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void), void (*)(void),
                             void (*)(void), void *);
static main_fn program_main;

static int main_noted(int argc, char **argv, char **envp)
{
	int r = program_main(argc, argv, envp);
	note_status(r);
	return r;
}

CT_API int __libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                             void (*fini)(void), void (*rtld_fini)(void), void *stack_end)
{
	start_main_fn real_start = (start_main_fn)next_sym("__libc_start_main");
	if (!real_start) /* not glibc's loader: nothing can start the program */
		for (;;)
			syscall(SYS_exit_group, 127);
	program_main = main;
	return real_start(main_noted, argc, argv, init, fini, rtld_fini, stack_end);
}

/* The program's threads are all gone (main by pthread_exit): what glibc's
 * last thread would do. */
static void orphaned(void)
{
	exit(0);
}

static void start_once(void)
{
	resolve_real();
	/* The hooks first: a thread may record as soon as ct_init made the
	 * process active. */
	atomic_store(&ct_thread_hook, on_thread_registered);
	atomic_store(&ct_writer_tick_hook, ct_capture_tick);
	atomic_store(&ct_writer_orphan_hook, orphaned);
	ct_init();
	if (!ct.active)
		return;
	started = 1;
	ct_capture_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
	at_quick_exit(on_quick_exit);
}

static pthread_once_t start_ctl = PTHREAD_ONCE_INIT;

void ct_start(void)
{
	pthread_once(&start_ctl, start_once);
}

void ct_enter(void)
{
	ct_start();
	ct_capture_follow();
	/* Capture on a timer: the writer runs it, from the first entry on.
	 * Not at load: every process under LD_PRELOAD would have a thread, which
	 * single-threaded calls refuse (unshare(CLONE_NEWUSER): bwrap,
	 * Apptainer). */
	if (ct.active && ct_capture_has_timer())
		ct_writer_ensure();
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
	if (ct.active) {
		wire_environment();
		/* The user's signal for dumps (CUPTRACE_FLIGHT_SIGNAL) is ours from
		 * the start: sent before the first event, it must not end the
		 * program by its default action. */
		ct_writer_flight_signal();
	}
}

/* Whether this process shares the traced process's memory: a vfork child
 * (kcmp's KCMP_VM; 0 where kcmp is not available). */
static int shares_our_memory(void)
{
	return syscall(SYS_kcmp, (pid_t)syscall(SYS_getpid), (pid_t)ct.pid, 1 /* KCMP_VM */, 0,
		       0) == 0;
}

/* Not in a child made without fork handlers (_Fork, a raw clone): the
 * writer is the parent's, and joining it there would hang the child. A
 * vfork child that calls exit() (not _exit, as POSIX asks) runs the
 * parent's exit handlers and destructors in the parent's memory, so that
 * they never run in the parent: the file is finished here, then. */
__attribute__((destructor)) static void on_unload(void)
{
	if (owns_writer() || (started && ct.active && shares_our_memory()))
		ct_writer_finish(atomic_load(&exit_detail));
}
