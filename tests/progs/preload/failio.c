// SPDX-License-Identifier: MIT
/* Preloaded ahead of the library in tests: fsync and close of a .ctr file
 * fail with EIO, as a parallel file system reports a lost write late.
 * CT_FAIL=fsync or CT_FAIL=close picks which; CT_FAIL=write: every write
 * to one fails with ENOSPC. */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int is_trace(int fd)
{
	char link[64], path[4096];
	snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof path - 1);
	if (n < 4)
		return 0;
	path[n] = 0;
	return !strcmp(path + n - 4, ".ctr");
}

static int failing(const char *what, int fd)
{
	const char *f = getenv("CT_FAIL");
	return f && !strcmp(f, what) && is_trace(fd);
}

int fsync(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	if (failing("fsync", fd)) {
		errno = EIO;
		return -1;
	}
	return real(fd);
}

int close(int fd)
{
	int (*real)(int) = (int (*)(int))dlsym(RTLD_NEXT, "close");
	if (failing("close", fd)) {
		real(fd);
		errno = EIO;
		return -1;
	}
	return real(fd);
}

/* CT_FAIL=write: the disk is full for .ctr files. */
ssize_t write(int fd, const void *buf, size_t n)
{
	ssize_t (*real)(int, const void *, size_t) =
	    (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (failing("write", fd)) {
		errno = ENOSPC;
		return -1;
	}
	return real(fd, buf, n);
}
