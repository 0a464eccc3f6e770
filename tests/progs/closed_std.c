// SPDX-License-Identifier: MIT
/* A program run with stdout (and maybe stderr) closed: it records, has the
 * library open its trace file (cuptrace_flush), records more, then writes
 * to the closed descriptors. Those writes must fail with EBADF as they do
 * untraced: a library that took the lowest free descriptor for its file
 * would take the program's output into the trace.
 * usage: closed_std         run with fd 1 (and 2) closed
 * exit: 0 when every write to a closed descriptor failed with EBADF, 3 when
 * one succeeded, 4 when it failed otherwise, 2 on a usage error. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

static void ranges(const char *name, int n)
{
	for (int i = 0; i < n; i++) {
		nvtxRangePushA(name);
		nvtxRangePop();
	}
}

/* 0 when fd is closed and a write to it fails with EBADF. */
static int closed_write(int fd)
{
	if (write(fd, "program output\n", 15) >= 0)
		return 3;
	return errno == EBADF ? 0 : 4;
}

int main(void)
{
	const char *(*flush)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "cuptrace_flush");
	int closed[3];
	for (int fd = 0; fd < 3; fd++)
		closed[fd] = fcntl(fd, F_GETFD) < 0;
	if (!closed[1])
		return 2;
	ranges("before", 100);
	if (flush)
		flush(); /* the trace file is open now */
	ranges("after", 100);
	if (flush)
		flush();
	for (int fd = 1; fd < 3; fd++) {
		if (!closed[fd])
			continue;
		int r = closed_write(fd);
		if (r)
			return r;
	}
	return 0;
}
