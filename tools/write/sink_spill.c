// SPDX-License-Identifier: MIT
#include "write/sink_spill.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <unistd.h>

#define BOUNCE (1u << 20)

#define SWITCH (32ull << 20) /* a file's bytes before new chunks go to the other */
#define STEP (16ull << 20)  /* blocks allocated at once */
#define GEN(off) ((unsigned)((off) >> 63))
#define POS(off) ((off) & ~(1ull << 63))

void spill_init(struct sink_spill *sp)
{
	memset(sp, 0, sizeof *sp);
	sp->f[0].fd = sp->f[1].fd = -1;
	struct rlimit rl;
	sp->fsize_max = UINT64_MAX;
	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY)
		sp->fsize_max = rl.rlim_cur;
}

/* An unlinked file in dir: O_TMPFILE, else a named one removed at once. */
static int make_file(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	char *name; /* raw: without a spill file the pieces wait in memory */
	if (asprintf(&name, "%s/.cuptrace-spill.XXXXXX", dir) < 0)
		return -1;
	fd = mkostemp(name, O_CLOEXEC);
	if (fd >= 0)
		unlink(name);
	free(name);
	return fd;
}

/* Beside the output: its directory (the part of beside up to its last
 * slash, "." without one); $TMPDIR or /tmp for stdout. */
static int open_spill(const char *beside)
{
	if (!beside) {
		const char *t = getenv("TMPDIR");
		return make_file(t && *t ? t : "/tmp");
	}
	const char *slash = strrchr(beside, '/');
	if (!slash)
		return make_file(".");
	/* raw: without a spill file the pieces wait in memory */
	char *dir = strndup(beside, slash == beside ? 1 : (size_t)(slash - beside));
	int fd = dir ? make_file(dir) : -1;
	free(dir);
	return fd;
}

int spill_reserve(struct sink_spill *sp, const char *beside, size_t n, uint64_t *off)
{
	struct spill_file *o = &sp->f[!sp->active];
	if (sp->f[sp->active].end + n > SWITCH && !o->live) {
		sp->active = !sp->active; /* the other's chunks are all out */
		o->end = 0;
	}
	struct spill_file *f = &sp->f[sp->active];
	if (f->fd == -1) {
		f->fd = open_spill(beside);
		if (f->fd < 0)
			f->fd = -2;
		f->prealloc = f->fd >= 0;
	}
	if (f->fd < 0 || f->end + n + STEP > sp->fsize_max)
		return 0; /* kept in memory rather than raise SIGXFSZ */
	while (f->prealloc && f->alloc < f->end + n) {
		if (fallocate(f->fd, 0, (off_t)f->alloc, (off_t)STEP))
			f->prealloc = 0; /* the writes say whether there is room */
		else
			f->alloc += STEP;
	}
	*off = (uint64_t)sp->active << 63 | f->end;
	f->end += n;
	f->live += n;
	return 1;
}

int spill_write(struct sink_spill *sp, const void *buf, size_t n, uint64_t off)
{
	int fd = sp->f[GEN(off)].fd;
	const char *c = buf;
	off = POS(off);
	while (n) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w, off += (uint64_t)w, n -= (size_t)w;
	}
	return 0;
}

/* Through the process: the last resort (an output that takes neither
 * copy_file_range nor sendfile). */
static ssize_t bounce(struct sink_spill *sp, int from, int fd, off_t *in, size_t n)
{
	/* raw: a copy that fails fails the output (ENOMEM), temporary file removed */
	if (!sp->bounce && !(sp->bounce = malloc(BOUNCE)))
		return -1;
	ssize_t r = pread(from, sp->bounce, n < BOUNCE ? n : BOUNCE, *in);
	if (r <= 0)
		return r;
	for (ssize_t done = 0; done < r;) {
		ssize_t w = write(fd, sp->bounce + done, (size_t)(r - done));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		done += w;
	}
	*in += r;
	return r;
}

int spill_copy(struct sink_spill *sp, int fd, uint64_t off, size_t n)
{
	return spill_copy_from(sp, sp->f[GEN(off)].fd, (off_t)POS(off), fd, n);
}

int spill_copy_from(struct sink_spill *sp, int from, off_t in, int fd, size_t n)
{
	while (n) {
		ssize_t w = sp->how == 0   ? copy_file_range(from, &in, fd, NULL, n, 0)
			    : sp->how == 1 ? sendfile(fd, from, &in, n)
					   : bounce(sp, from, fd, &in, n);
		if (w < 0 && errno == EINTR)
			continue;
		/* not between these files (another filesystem, a pipe,
		 * O_APPEND): the next way */
		if (w < 0 && sp->how < 2 &&
		    (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
		     errno == EBADF)) {
			sp->how++;
			continue;
		}
		if (w <= 0) {
			if (!w)
				errno = EIO;
			return -1;
		}
		n -= (size_t)w;
	}
	return 0;
}

void spill_copied(struct sink_spill *sp, uint64_t off, size_t n)
{
	sp->f[GEN(off)].live -= n;
	struct spill_file *f = &sp->f[sp->active];
	if (!f->live)
		f->end = 0; /* nothing waits in it: written over from its start */
}

void spill_close(struct sink_spill *sp)
{
	for (int i = 0; i < 2; i++)
		if (sp->f[i].fd >= 0)
			close(sp->f[i].fd);
	free(sp->bounce);
	spill_init(sp);
}
