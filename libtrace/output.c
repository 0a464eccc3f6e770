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

static int open_new(const char *path)
{
	return open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
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
	if (make_dirs(path)) {
		ct_log_error("cannot create the directory of %s: %s", path, strerror(errno));
		return -1;
	}
	int fd = open_new(path);
	if (fd >= 0 || errno != EEXIST)
		goto done;
	/* Name taken: out/r0.ctr -> out/r0.1.ctr, out/r0.2.ctr, ... */
	char base[PATH_MAX];
	snprintf(base, sizeof base, "%s", path);
	const char *ext = "";
	char *dot = strrchr(base, '.');
	if (dot && !strchr(dot, '/')) {
		ext = path + (dot - base);
		*dot = 0;
	}
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
