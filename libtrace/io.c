// SPDX-License-Identifier: MIT
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int ct_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int ct_fd_high(int fd)
{
	if (fd < 0 || fd >= CT_FD_FLOOR)
		return fd;
	int saved = errno;
	int high = fcntl(fd, F_DUPFD_CLOEXEC, CT_FD_FLOOR);
	if (high < 0 && fd <= STDERR_FILENO) /* a limit under CT_FD_FLOOR */
		high = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	if (high < 0 && fd > STDERR_FILENO) {
		errno = saved;
		return fd;
	}
	close(fd);
	errno = high < 0 ? EMFILE : saved;
	return high;
}

int ct_open_high(const char *path, int flags, mode_t mode)
{
	return ct_fd_high(open(path, flags | O_CLOEXEC, mode));
}
