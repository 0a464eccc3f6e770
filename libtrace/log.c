#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int ct_log_level = CT_LOG_WARN;

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
	ssize_t w = write(STDERR_FILENO, buf, (size_t)n);
	(void)w;
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
