#include "output.h"
#include "common/config.h"
#include "common/enc.h"
#include "common/io.h"
#include "common/pattern.h"
#include "common/varint.h"
#include "cuptrace/format.h"
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

int ct_output_header(int fd, unsigned part, uint64_t *written)
{
	size_t cap = 4096 + ct.cmdline_len + 8192;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return -1;
	uint8_t *p = buf + 16;
	char cfg[4096];
	size_t cfglen = ct_config_dump(&ct.cfg, cfg, sizeof cfg);
	p = ct_tlv_str(p, CT_H_TRACER_VERSION, CT_VERSION, strlen(CT_VERSION));
	p = ct_tlv_str(p, CT_H_HOST, ct.host, strlen(ct.host));
	p = ct_tlv_u(p, CT_H_PID, (uint64_t)ct.pid);
	p = ct_tlv_u(p, CT_H_PPID, (uint64_t)getppid());
	p = ct_tlv_u(p, CT_H_RANK, ct_zigzag(ct.rank.rank));
	p = ct_tlv_u(p, CT_H_LOCAL_RANK, ct_zigzag(ct.rank.local_rank));
	p = ct_tlv_u(p, CT_H_WORLD_SIZE, ct_zigzag(ct.rank.world_size));
	p = ct_tlv_u(p, CT_H_LOCAL_SIZE, ct_zigzag(ct.rank.local_size));
	p = ct_tlv_str(p, CT_H_RANK_SOURCE, ct.rank.source, strlen(ct.rank.source));
	p = ct_tlv_str(p, CT_H_CMDLINE, ct.cmdline ? ct.cmdline : "", ct.cmdline_len);
	p = ct_tlv_u(p, CT_H_RT_ANCHOR, ct.rt_anchor);
	p = ct_tlv_u(p, CT_H_MONO_ANCHOR, ct.mono_anchor);
	p = ct_tlv_str(p, CT_H_CONFIG, cfg, cfglen);
	/* the job, where a launcher names it: the tools warn when files of
	 * several jobs are read as one */
	static const char *const job_vars[] = {"SLURM_JOB_ID", "PBS_JOBID", "FLUX_JOB_ID",
	                                       "PMIX_NAMESPACE", "TORCHELASTIC_RUN_ID"};
	const char *job = NULL;
	for (size_t i = 0; i < sizeof job_vars / sizeof *job_vars && !job; i++)
		job = secure_getenv(job_vars[i]);
	if (job)
		p = ct_tlv_str(p, CT_H_JOB_ID, job, strnlen(job, 256));
	if (ct.forked_from) /* the tools show it under its parent's rank */
		p = ct_tlv_u(p, CT_H_FORKED_FROM, (uint64_t)ct.forked_from);
	if (part > 1) /* a window after a rotation: the tools keep it apart */
		p = ct_tlv_u(p, CT_H_PART, part);
	size_t len = ct_header_seal(buf, p);
	int rc = ct_write_all(fd, buf, len);
	*written = len;
	free(buf);
	return rc;
}

int ct_output_trailer(int fd, uint64_t footer_at)
{
	uint32_t t[2] = {CT_TRAILER_MAGIC, 0};
	uint8_t buf[CT_TRAILER_SIZE];
	memcpy(buf, t, 8);
	memcpy(buf + 8, &footer_at, 8);
	return ct_write_all(fd, buf, sizeof buf);
}

/* Parallel file systems report write errors late: at fsync or close. */
void ct_output_sync(int fd, const char *path)
{
	if (fd >= 0 && fsync(fd) && errno != EINVAL && errno != EROFS)
		ct_log_error("writing %s: %s; the trace may be incomplete", path, strerror(errno));
}

void ct_output_close(int fd, const char *path)
{
	if (fd >= 0 && close(fd) && errno != EINTR)
		ct_log_error("writing %s: %s; the trace may be incomplete", path, strerror(errno));
}

int ct_output_identify(int fd, struct ct_out_id *id)
{
	struct stat st;
	if (fstat(fd, &st))
		return -1;
	id->dev = (uint64_t)st.st_dev, id->ino = (uint64_t)st.st_ino;
	return 0;
}

int ct_output_is(int fd, const struct ct_out_id *id)
{
	struct ct_out_id now;
	return fd >= 0 && !ct_output_identify(fd, &now) && now.dev == id->dev && now.ino == id->ino;
}

int ct_output_own(int *fd, const char *path, const struct ct_out_id *id, uint64_t off)
{
	if (*fd < 0)
		return 0;
	if (ct_output_is(*fd, id))
		return 1;
	int nfd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (nfd >= 0 && ct_output_is(nfd, id) && lseek(nfd, (off_t)off, SEEK_SET) == (off_t)off) {
		ct_info("the program closed the descriptor of %s; reopened", path);
		*fd = nfd;
		return 1;
	}
	if (nfd >= 0)
		close(nfd);
	ct_log_error("writing %s: the program closed its descriptor and the file cannot be "
	             "reopened; tracing stops", path);
	*fd = -2;
	return 0;
}
