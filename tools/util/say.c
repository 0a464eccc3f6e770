// SPDX-License-Identifier: MIT
/* The tools' messages on stderr (say.h). */
#include "util/say.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static const char *command;
static int muted;
static FILE *into; /* say_into */

void say_mute(int on)
{
	muted = on;
}

void say_into(FILE *f)
{
	into = f;
}

void say_command(const char *name)
{
	command = name;
}

/* "cuptrace[ CMD]: KIND" and the message in one write where it fits in
 * buf (stderr is unbuffered: each fprintf would be a write of its own),
 * else in pieces under the stream's lock. */
static void line(int cmd, const char *kind, const char *fmt, va_list ap)
{
	if (muted && !into)
		return;
	FILE *to = into ? into : stderr;
	int saved = errno;
	const char *who = cmd && command ? command : "";
	const char *sp = *who ? " " : "";
	char buf[2048];
	va_list again;
	va_copy(again, ap);
	int n = snprintf(buf, sizeof buf, "cuptrace%s%s: %s", sp, who, kind);
	int m = n < 0 || (size_t)n >= sizeof buf
	            ? -1
	            : vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
	if (m >= 0 && (size_t)n + (size_t)m + 1 < sizeof buf) {
		buf[n + m] = '\n';
		fwrite(buf, 1, (size_t)n + (size_t)m + 1, to);
	} else {
		flockfile(to);
		fprintf(to, "cuptrace%s%s: %s", sp, who, kind);
		vfprintf(to, fmt, again);
		fputc('\n', to);
		funlockfile(to);
	}
	va_end(again);
	errno = saved;
}

#define SAY(name, cmd, kind)                                                                       \
	void name(const char *fmt, ...)                                                            \
	{                                                                                          \
		va_list ap;                                                                        \
		va_start(ap, fmt);                                                                 \
		line(cmd, kind, fmt, ap);                                                          \
		va_end(ap);                                                                        \
	}

SAY(say_cmd, 1, "")
SAY(say_cmd_warning, 1, "warning: ")
SAY(say_cmd_note, 1, "note: ")
SAY(say, 0, "")
SAY(say_warning, 0, "warning: ")
SAY(say_note, 0, "note: ")
SAY(say_error, 0, "error: ")
