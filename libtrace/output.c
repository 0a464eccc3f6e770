#include "output.h"
#include "common/pattern.h"
#include "log.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *env(const char *name)
{
	return secure_getenv(name);
}

/* mkdir -p of the directory part of path. */
static int make_dirs(const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof buf, "%s", path);
	char *slash = strrchr(buf, '/');
	if (!slash || slash == buf)
		return 0;
	*slash = 0;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(buf, 0777) && errno != EEXIST)
		return -1;
	return 0;
}

/* Copies path without its extension (".ctr": the last dot of the file
 * name) into base; returns the extension ("" when none). */
static const char *split_ext(const char *path, char *base, size_t len)
{
	snprintf(base, len, "%s", path);
	char *dot = strrchr(base, '.');
	if (!dot || strchr(dot, '/'))
		return "";
	*dot = 0;
	return path + (dot - base);
}

static int open_new(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
}

/* Creates path, or when the name is taken a numbered one beside it
 * (out/r0.ctr -> out/r0.1.ctr, out/r0.2.ctr, ...), whose name then goes
 * into path. */
static int open_unique(char *path, size_t len)
{
	if (make_dirs(path)) {
		ct_log_error("cannot create the directory of %s: %s", path, strerror(errno));
		return -1;
	}
	int fd = open_new(path);
	if (fd >= 0 || errno != EEXIST)
		goto done;
	char base[PATH_MAX];
	const char *ext = split_ext(path, base, sizeof base);
	char cand[PATH_MAX + 32];
	for (int i = 1; i < 1000 && fd < 0 && errno == EEXIST; i++) {
		snprintf(cand, sizeof cand, "%s.%d%s", base, i, ext);
		fd = open_new(cand);
	}
	if (fd >= 0) {
		ct_warn("%s exists; writing %s instead", path, cand);
		snprintf(path, len, "%s", cand);
	}
done:
	if (fd < 0)
		ct_log_error("cannot create %s: %s; this process is not traced", path, strerror(errno));
	return fd;
}

int ct_output_open(char *path, size_t len)
{
	struct ct_pattern_vals v = {
		.rank = ct.rank.rank,
		.local_rank = ct.rank.local_rank,
		.world_size = ct.rank.world_size,
		.host = ct.host,
		.pid = ct.pid,
		.getenv = env,
	};
	if (ct_pattern_expand(ct.cfg.output, &v, path, len - 16)) {
		ct_log_error("CUPTRACE_OUTPUT=%s: expands to a path that is too long", ct.cfg.output);
		return -1;
	}
	return open_unique(path, len);
}

int ct_output_open_part(const char *first, unsigned part, char *path, size_t len)
{
	char base[PATH_MAX];
	const char *ext = split_ext(first, base, sizeof base);
	if ((size_t)snprintf(path, len, "%s.w%u%s", base, part, ext) >= len - 16) {
		ct_log_error("%s.w%u%s: the path is too long", base, part, ext);
		return -1;
	}
	return open_unique(path, len);
}
