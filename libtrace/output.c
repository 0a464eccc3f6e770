// SPDX-License-Identifier: MIT
#include "output.h"
#include "config.h"
#include "cuptrace/format.h"
#include "enc.h"
#include "io.h"
#include "log.h"
#include "pattern.h"
#include "peek.h"
#include "rankenv.h"
#include "trace.h"
#include "varint.h"

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
	return ct_open_high(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
}

/* An output that is itself a device or a pipe (CUPTRACE_OUTPUT=/dev/null
 * to throw the trace away) is written as it is: numbering made
 * /dev/null.1 as root. Only the name itself: lstat and O_NOFOLLOW, and the
 * file opened must be the one lstat saw, so a symlink to a device or a
 * pipe, or a name swapped meanwhile, is never opened. -2 when path is no
 * such file (a numbered name is used, as for any taken name); -1 and errno
 * when it is one and cannot be opened. */
static int open_device(const char *path)
{
	struct stat st, got;
	if (lstat(path, &st) || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))
		return -2;
	int fd = ct_open_high(path, O_WRONLY | O_NOFOLLOW, 0);
	if (fd < 0)
		return errno == ELOOP ? -2 : -1;
	if (fstat(fd, &got) || got.st_dev != st.st_dev || got.st_ino != st.st_ino) {
		close(fd);
		return -2;
	}
	return fd;
}

/* Whether path holds a trace of this very process (host and pid), written
 * by its image before an exec: an exec chain is expected to number its
 * files, a name taken by another process is worth a warning. */
static int earlier_image(const char *path)
{
	uint8_t buf[512];
	int fd = ct_open_high(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf);
	close(fd);
	char host[256];
	uint64_t pid;
	return n > 0 && !ct_header_peek(buf, (size_t)n, host, sizeof host, &pid) &&
	       pid == (uint64_t)ct.pid && !strcmp(host, ct.host);
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
	fd = open_device(path);
	if (fd != -2)
		goto done;
	errno = EEXIST; /* the name is taken: a numbered one */
	char base[PATH_MAX];
	const char *ext = split_ext(path, base, sizeof base);
	char cand[PATH_MAX + 32];
	for (int i = 1; i < 1000 && fd < 0 && errno == EEXIST; i++) {
		snprintf(cand, sizeof cand, "%s.%d%s", base, i, ext);
		fd = open_new(cand);
	}
	if (fd >= 0) {
		if (earlier_image(path))
			ct_info("%s holds this process's trace before exec; writing %s", path, cand);
		else
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
	char unset[256];
	v.unset = unset, v.unset_len = sizeof unset;
	if (ct_pattern_expand(ct.cfg.output, &v, path, len - 48)) {
		ct_log_error("CUPTRACE_OUTPUT=%s: expands to a path that is too long", ct.cfg.output);
		return -1;
	}
	if (unset[0]) /* %q{PMI_RANK} under Open MPI: every rank would get one name */
		ct_warn("CUPTRACE_OUTPUT=%s: %%q{%s} is not set in this process's environment and "
			"expands to nothing", ct.cfg.output, unset);
	/* An existing directory named without its '/' (-o traces) is one:
	 * the files go in it, not beside it as traces.1. */
	struct stat st; /* stat: a link to a directory (traces -> /scratch/...) is one too */
	size_t ol = strlen(ct.cfg.output);
	int in_dir = ol && ct.cfg.output[ol - 1] == '/'; /* named DIR/<host>-<pid>.ctr: no clash */
	if (!in_dir && !stat(path, &st) && S_ISDIR(st.st_mode)) {
		in_dir = 1;
		char dir[PATH_MAX + 2];
		snprintf(dir, sizeof dir, "%s/", ct.cfg.output);
		if (ct_pattern_expand(dir, &v, path, len - 48)) {
			ct_log_error("CUPTRACE_OUTPUT=%s: expands to a path that is too long", dir);
			return -1;
		}
	}
	/* A forked child (a DataLoader worker) of a pattern without %p
	 * (traces/r%r.ctr) would take its parent's name, or the parent its:
	 * whoever wrote first got r0.ctr, the other r0.1.ctr and a warning,
	 * 8 of them a run. The child's name has its pid: r0.<pid>.ctr. */
	if (ct.forked_from && !strstr(ct.cfg.output, "%p") && !in_dir) {
		char base[PATH_MAX];
		const char *ext = split_ext(path, base, sizeof base);
		char tail[64];
		snprintf(tail, sizeof tail, "%s", ext);
		snprintf(path, len, "%s.%d%s", base, ct.pid, tail);
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

/* The file's header (format.h): this process, its configuration, and
 * part when it is the part-th file (part >= 2). */
static int header(int fd, unsigned part, const struct ct_fl_info *fi, uint64_t *written)
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
	const char *job = ct_job_id(env);
	if (job)
		p = ct_tlv_str(p, CT_H_JOB_ID, job, strnlen(job, 256));
	if (ct.forked_from) /* the tools show it under its parent's rank */
		p = ct_tlv_u(p, CT_H_FORKED_FROM, (uint64_t)ct.forked_from);
	if (part > 1) /* a window after a rotation: the tools keep it apart */
		p = ct_tlv_u(p, CT_H_PART, part);
	if (fi) { /* a flight recorder's window (1.5) */
		p = ct_tlv_u(p, CT_H_FLIGHT_WANT, fi->want_ns);
		p = ct_tlv_u(p, CT_H_FLIGHT_FROM, fi->from);
		p = ct_tlv_u(p, CT_H_FLIGHT_TO, fi->to);
		p = ct_tlv_str(p, CT_H_FLIGHT_CAUSE, fi->cause, strnlen(fi->cause, sizeof fi->cause));
		p = ct_tlv_u(p, CT_H_FLIGHT_BUDGET, fi->budget);
		p = ct_tlv_u(p, CT_H_FLIGHT_HELD, fi->held);
		if (fi->short_ns)
			p = ct_tlv_u(p, CT_H_FLIGHT_SHORT, fi->short_ns);
	}
	size_t len = ct_header_seal(buf, p);
	int rc = ct_write_all(fd, buf, len);
	*written = len;
	free(buf);
	return rc;
}

static int is_ours(const struct ct_out_file *o, int fd)
{
	struct stat st;
	return fd >= 0 && !fstat(fd, &st) && (uint64_t)st.st_dev == o->dev &&
	       (uint64_t)st.st_ino == o->ino;
}

int ct_output_begin(struct ct_out_file *o, unsigned part)
{
	return ct_output_begin_flight(o, part, NULL);
}

int ct_output_begin_flight(struct ct_out_file *o, unsigned part, const struct ct_fl_info *fi)
{
	struct stat st;
	if (o->fd < 0)
		return -1;
	int got = !fstat(o->fd, &st);
	if (!got || header(o->fd, part, fi, &o->off)) {
		ct_log_error("writing %s: %s; tracing stops", o->path, strerror(errno));
		close(o->fd);
		if (got && S_ISREG(st.st_mode))
			unlink(o->path); /* ours (O_EXCL), without even a header */
		o->fd = -2;
		return -1;
	}
	o->dev = (uint64_t)st.st_dev, o->ino = (uint64_t)st.st_ino;
	return 0;
}

/* 1 when o->fd is our file, or was taken away and the file could be
 * reopened by its path at o->off; else 0 (said), and fd is -2. */
static int own(struct ct_out_file *o)
{
	if (o->fd < 0)
		return 0;
	if (is_ours(o, o->fd))
		return 1;
	int nfd = ct_open_high(o->path, O_WRONLY | O_NOFOLLOW, 0);
	if (is_ours(o, nfd) && lseek(nfd, (off_t)o->off, SEEK_SET) == (off_t)o->off) {
		ct_info("the program closed the descriptor of %s; reopened", o->path);
		o->fd = nfd;
		return 1;
	}
	if (nfd >= 0)
		close(nfd);
	ct_log_error("writing %s: the program closed its descriptor and the file cannot be "
	             "reopened; tracing stops", o->path);
	o->fd = -2;
	return 0;
}

int ct_output_write(struct ct_out_file *o, const void *buf, size_t n)
{
	if (!own(o))
		return -1;
	if (ct_write_all(o->fd, buf, n)) {
		ct_log_error("writing %s: %s; tracing stops", o->path, strerror(errno));
		if (is_ours(o, o->fd))
			close(o->fd);
		o->fd = -2;
		return -1;
	}
	o->off += n;
	return 0;
}

int ct_output_trailer(struct ct_out_file *o, uint64_t footer_at)
{
	uint32_t t[2] = {CT_TRAILER_MAGIC, 0};
	uint8_t buf[CT_TRAILER_SIZE];
	memcpy(buf, t, 8);
	memcpy(buf + 8, &footer_at, 8);
	return ct_output_write(o, buf, sizeof buf);
}

void ct_output_sync(const struct ct_out_file *o)
{
	if (is_ours(o, o->fd) && fsync(o->fd) && errno != EINVAL && errno != EROFS)
		ct_log_error("writing %s: %s; the trace may be incomplete", o->path, strerror(errno));
}

void ct_output_close(struct ct_out_file *o)
{
	if (is_ours(o, o->fd) && close(o->fd) && errno != EINTR)
		ct_log_error("writing %s: %s; the trace may be incomplete", o->path, strerror(errno));
	o->fd = -2;
}

void ct_output_drop(struct ct_out_file *o)
{
	if (is_ours(o, o->fd))
		close(o->fd);
	o->fd = -1;
}
