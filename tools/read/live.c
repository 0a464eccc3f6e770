// SPDX-License-Identifier: MIT
/* Whether the process that writes a trace file is still running. */
#include "read/live.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

int trace_process_alive(const char *host, uint64_t pid)
{
	char me[256] = "";
	gethostname(me, sizeof me - 1);
	if (!host || strcmp(host, me) || !pid || pid > (uint64_t)INT32_MAX)
		return -1;
	return !(kill((pid_t)pid, 0) && errno == ESRCH);
}

const char *tfile_err(struct tfile *t)
{
	static const char was[] = CT_DEC_NOT_CLEAN;
	char *at = strstr(t->f.err, was);
	if (t->f.status != CT_TRUNCATED || !at || trace_process_alive(t->f.h.host, t->f.h.pid) != 1)
		return t->f.err;
	char rest[sizeof t->f.err];
	snprintf(rest, sizeof rest, "%s", at + strlen(was));
	snprintf(at, sizeof t->f.err - (size_t)(at - t->f.err),
		 " (its process %llu is still running: the file is read up to here)%s",
		 (unsigned long long)t->f.h.pid, rest);
	return t->f.err;
}
