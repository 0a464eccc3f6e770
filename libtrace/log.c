// SPDX-License-Identifier: MIT
#include "log.h"
#include "io.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int ct_log_level = CT_LOG_WARN;

/* The messages go to the program's stderr as it was when the library
 * started, through a copy of its descriptor: a daemon that closes fd 2
 * and opens a file there got them in its file. The copy is checked by
 * identity before each message (the program may close it and take its
 * number) and, closed or taken, is not written again. */
static int log_fd = -2; /* -2: not opened yet; -1: no stderr */
static dev_t log_dev;
static ino_t log_ino;

void ct_log_open(void)
{
	struct stat st;
	if (log_fd != -2)
		return;
	log_fd = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, CT_FD_FLOOR);
	if (log_fd >= 0 && fstat(log_fd, &st) == 0)
		log_dev = st.st_dev, log_ino = st.st_ino;
	else if (log_fd >= 0)
		close(log_fd), log_fd = -1;
}

/* A write that cannot raise SIGPIPE: a closed stderr pipe killed the
 * program (the signal is blocked around it, and one it raised taken back
 * unless one was pending already). */
static void put(const char *buf, size_t n)
{
	struct stat st;
	if (log_fd == -2)
		ct_log_open();
	if (log_fd < 0 || fstat(log_fd, &st) || st.st_dev != log_dev || st.st_ino != log_ino) {
		log_fd = -1;
		return;
	}
	sigset_t pipe_, old, pending;
	sigemptyset(&pipe_);
	sigaddset(&pipe_, SIGPIPE);
	sigpending(&pending);
	int was = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_, &old);
	int saved = errno;
	ssize_t w = write(log_fd, buf, n);
	if (w < 0 && errno == EPIPE && !was) {
		struct timespec zero = {0, 0};
		sigtimedwait(&pipe_, NULL, &zero);
	}
	errno = saved;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void emit(const char *prefix, const char *fmt, va_list ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof buf, "cuptrace: %s", prefix);
	if (n < 0)
		return;
	int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
	if (m < 0)
		return;
	n += m;
	if (n > (int)sizeof buf - 2)
		n = (int)sizeof buf - 2;
	buf[n++] = '\n';
	put(buf, (size_t)n);
}

void ct_log(enum ct_log_level level, const char *fmt, ...)
{
	if ((int)level > ct_log_level)
		return;
	static const char *prefix[] = {"", "warning: ", "", "debug: "};
	va_list ap;
	va_start(ap, fmt);
	emit(prefix[level], fmt, ap);
	va_end(ap);
}

void ct_log_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit("error: ", fmt, ap);
	va_end(ap);
}

void ct_log_notice(const char *fmt, ...)
{
	if (ct_log_level < CT_LOG_WARN)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}
