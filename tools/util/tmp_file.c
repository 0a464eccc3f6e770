// SPDX-License-Identifier: MIT
#include "util/tmp_file.h"
#include "util/tmp_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static mode_t umask_now;
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;

/* umask() can only be read by setting it: once, before threads use it. */
static void read_umask(void)
{
	umask_now = umask(022);
	umask(umask_now);
}

int tmp_file_create(const char *path, char **tmp, int *guard)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	if (asprintf(tmp, "%.*s.%s.XXXXXX.tmp", (int)dirlen, path, path + dirlen) < 0) {
		*tmp = NULL;
		errno = ENOMEM;
		return -1;
	}
	int fd = mkostemps(*tmp, 4, O_CLOEXEC);
	if (fd < 0)
		return -1;
	*guard = tmp_guard(*tmp);
	pthread_once(&umask_once, read_umask);
	if (fchmod(fd, 0666 & ~umask_now)) {
		int e = errno;
		close(fd);
		tmp_unguard(*guard);
		unlink(*tmp);
		errno = e;
		return -1;
	}
	return fd;
}

FILE *tmp_file_open(struct tmp_file *t, const char *path)
{
	t->path = strdup(path); /* raw: a failure is this output's (ENOMEM), said by the caller */
	if (!t->path) {
		errno = ENOMEM;
		return NULL;
	}
	int fd = tmp_file_create(path, &t->tmp, &t->guard);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (f)
		return f;
	int e = errno;
	if (fd >= 0) {
		close(fd);
		tmp_unguard(t->guard);
		unlink(t->tmp);
	}
	free(t->tmp);
	free(t->path);
	errno = e;
	return NULL;
}

int tmp_file_close(struct tmp_file *t, FILE *f, int failed)
{
	int err = failed ? EIO : 0;
	if ((fflush(f) || ferror(f)) && !err)
		err = errno ? errno : EIO;
	if (fclose(f) && !err)
		err = errno;
	tmp_unguard(t->guard);
	if (!err && rename(t->tmp, t->path))
		err = errno;
	if (err)
		unlink(t->tmp);
	free(t->tmp);
	free(t->path);
	errno = err;
	return err ? -1 : 0;
}
