// SPDX-License-Identifier: MIT
#include "read/inputs.h"
#include "read/ranks.h"
#include "read/nccl_log.h"
#include "util/say.h"
#include "util/xalloc.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* Lazily opened streams. A job may have thousands of rank files and the
 * process a limit of a few hundred open files: a file's header is read at
 * start (to sort and align), then its stream is swapped for one that holds
 * no descriptor until the first read after the header (and gives it back
 * when the reader closes it). The decoder reads blocks with fread only, so
 * it does not see the difference; fileno() of such a stream is -1. */
struct lazy {
	char *path;
	int fd;
	off64_t pos;
};

static int lazy_fd(struct lazy *z)
{
	if (z->fd >= 0)
		return 0;
	z->fd = open(z->path, O_RDONLY | O_CLOEXEC);
	if (z->fd < 0 || lseek64(z->fd, z->pos, SEEK_SET) < 0) {
		say("%s: %s", z->path, strerror(errno));
		if (z->fd >= 0)
			close(z->fd);
		z->fd = -1;
		return -1;
	}
	return 0;
}

static ssize_t lazy_read(void *c, char *buf, size_t n)
{
	struct lazy *z = c;
	if (lazy_fd(z))
		return -1;
	ssize_t r;
	do
		r = read(z->fd, buf, n);
	while (r < 0 && errno == EINTR);
	if (r > 0)
		z->pos += r;
	return r;
}

static int lazy_seek(void *c, off64_t *off, int whence)
{
	struct lazy *z = c;
	if (whence == SEEK_END) {
		if (lazy_fd(z))
			return -1;
		off64_t e = lseek64(z->fd, *off, SEEK_END);
		if (e < 0)
			return -1;
		*off = z->pos = e;
		return 0;
	}
	off64_t to = whence == SEEK_SET ? *off : z->pos + *off;
	if (to < 0) {
		errno = EINVAL;
		return -1;
	}
	if (z->fd >= 0 && lseek64(z->fd, to, SEEK_SET) < 0)
		return -1;
	*off = z->pos = to;
	return 0;
}

static int lazy_close(void *c)
{
	struct lazy *z = c;
	int rc = z->fd >= 0 ? close(z->fd) : 0;
	free(z->path);
	free(z);
	return rc;
}

/* Gives back the descriptor of a file just opened (header read, no block
 * yet): the stream reopens the file at its first block when read. */
static void park(struct ct_file *f)
{
	if (!f->f || f->p)
		return;
	/* raw: without the memory the file stays open, as below */
	struct lazy *z = calloc(1, sizeof *z);
	FILE *s = NULL;
	if (z && (z->path = strdup(f->path))) {
		z->fd = -1;
		z->pos = (off64_t)f->offset;
		s = fopencookie(z, "rb",
				(cookie_io_functions_t){lazy_read, NULL, lazy_seek, lazy_close});
	}
	if (!s) { /* keep the descriptor: correct, only less frugal */
		if (z)
			free(z->path);
		free(z);
		return;
	}
	fclose(f->f);
	f->f = s;
}

/* A job of thousands of ranks needs more than the usual soft limit of
 * descriptors only where something keeps files open; raise it to the
 * hard limit anyway, it costs nothing. */
static void raise_nofile(void)
{
	struct rlimit rl;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

struct name {
	char *path;
	dev_t dev;
	ino_t ino;
	size_t order; /* position on the command line, directories expanded */
};

struct names {
	struct name *v;
	size_t n, cap;
};

static void add_name(struct names *nm, const char *path, const struct stat *st)
{
	if (nm->n == nm->cap) {
		nm->cap = nm->cap ? nm->cap * 2 : 16;
		nm->v = xrealloc(nm->v, nm->cap * sizeof *nm->v);
	}
	nm->v[nm->n] = (struct name){xstrdup(path), st->st_dev, st->st_ino, nm->n};
	nm->n++;
}

/* The unusable inputs met so far: "PATH: why" each. */
struct problems {
	char **v;
	size_t n, cap;
};

static void problem(struct problems *pb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void problem(struct problems *pb, const char *fmt, ...)
{
	if (pb->n == pb->cap) {
		pb->cap = pb->cap ? pb->cap * 2 : 8;
		pb->v = xrealloc(pb->v, pb->cap * sizeof *pb->v);
	}
	va_list ap;
	va_start(ap, fmt);
	if (vasprintf(&pb->v[pb->n], fmt, ap) < 0)
		xoom();
	va_end(ap);
	pb->n++;
}

/* What a file holds, by its first bytes: a trace (magic), an NCCL log
 * (text with NCCL's log markers), or neither. */
enum content { C_OTHER, C_TRACE, C_LOG };

static enum content content_of(const char *path)
{
	static char buf[64 << 10];
	FILE *f = fopen(path, "rb");
	if (!f)
		return C_OTHER;
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	if (n >= 8 && !memcmp(buf, CT_MAGIC, 8))
		return C_TRACE;
	return nccl_log_sniff(buf, n) ? C_LOG : C_OTHER;
}

/* Directories walked so far, by device and inode: a symbolic link back up
 * the tree (ln -s . d/self) made the walk revisit d down to its depth
 * limit, once per link at every level (five such links: 488,280 copies). */
struct dirs_seen {
	dev_t *dev;
	ino_t *ino;
	size_t n;
};

static int seen_before(struct dirs_seen *ds, const struct stat *st)
{
	for (size_t i = 0; i < ds->n; i++)
		if (ds->dev[i] == st->st_dev && ds->ino[i] == st->st_ino)
			return 1;
	ds->dev = xrealloc(ds->dev, (ds->n + 1) * sizeof *ds->dev);
	ds->ino = xrealloc(ds->ino, (ds->n + 1) * sizeof *ds->ino);
	ds->dev[ds->n] = st->st_dev, ds->ino[ds->n++] = st->st_ino;
	return 0;
}

/* Collects *.ctr files below dir (recursively, in name order, each
 * directory once), and NCCL logs when logs is set. A *.ctr entry that
 * cannot be used (a dangling link, not a regular file) is a problem. */
static void scan_dir(struct names *nm, struct names *logs, struct problems *pb, const char *dir,
		     int depth, struct dirs_seen *ds)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		problem(pb, "%s: %s", dir, strerror(errno));
		return;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		if (name[0] != '.') {
			char path[4096];
			size_t dl = strlen(dir);
			snprintf(path, sizeof path, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/",
				 name);
			struct stat st;
			int ctr = ends_with(name, ".ctr");
			if (stat(path, &st)) {
				if (ctr)
					problem(pb, "%s: %s", path, strerror(errno));
			} else if (S_ISDIR(st.st_mode) && depth < 8) {
				if (!seen_before(ds, &st))
					scan_dir(nm, logs, pb, path, depth + 1, ds);
			} else if (ctr && S_ISREG(st.st_mode)) {
				add_name(nm, path, &st);
			} else if (ctr) {
				problem(pb, "%s: not a regular file", path);
			} else if (S_ISREG(st.st_mode) && logs && content_of(path) == C_LOG) {
				add_name(logs, path, &st);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

/* Same file (device and inode: the same path twice, a hard or symbolic
 * link), then command-line order. */
static int cmp_inode(const void *a, const void *b)
{
	const struct name *x = a, *y = b;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_order(const void *a, const void *b)
{
	const struct name *x = a, *y = b;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Drops names that are the same file as an earlier one, with a warning. */
static void drop_same_files(struct names *nm)
{
	if (nm->n < 2)
		return;
	qsort(nm->v, nm->n, sizeof *nm->v, cmp_inode);
	size_t k = 0;
	for (size_t i = 0; i < nm->n; i++) {
		if (k && nm->v[i].dev == nm->v[k - 1].dev && nm->v[i].ino == nm->v[k - 1].ino) {
			say_warning("%s: duplicate of %s (the same file); ignored", nm->v[i].path,
			            nm->v[k - 1].path);
			free(nm->v[i].path);
			continue;
		}
		nm->v[k++] = nm->v[i];
	}
	nm->n = k;
	qsort(nm->v, nm->n, sizeof *nm->v, cmp_order);
}

/* The identity of the process that wrote a file, and which of its files
 * (windows after cuptrace_rotate): a copy of a rank's file has the same. index: position in in->v (command-line order). */
static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) ? 0 : st.st_size;
}

static int cmp_identity(const void *a, const void *b, void *arg)
{
	const struct tfile *v = arg;
	const struct ct_header *x = &v[*(const size_t *)a].f.h, *y = &v[*(const size_t *)b].f.h;
	int c = strcmp(x->host, y->host);
	if (c)
		return c;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->rt_anchor != y->rt_anchor)
		return x->rt_anchor < y->rt_anchor ? -1 : 1;
	if (x->mono_anchor != y->mono_anchor)
		return x->mono_anchor < y->mono_anchor ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->part != y->part) /* flight windows: the latest first, the one kept */
		return (x->part < y->part) == !(x->flight_want && y->flight_want) ? -1 : 1;
	/* copies of one file: the one kept comes first, a closed file before
	 * one cut short, then the longest (a truncated copy named first is not
	 * kept over the whole file), then command-line order */
	const struct ct_file *fx = &v[*(const size_t *)a].f, *fy = &v[*(const size_t *)b].f;
	if (fx->final_footer != fy->final_footer)
		return fx->final_footer ? -1 : 1;
	off_t sx = file_size(fx->path), sy = file_size(fy->path);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	return i < j ? -1 : i > j;
}

/* The same process's file (or flight window: two windows of one process
 * overlap, and are two moments, never one run together). */
static int same_process(const struct ct_header *x, const struct ct_header *y)
{
	return !strcmp(x->host, y->host) && x->pid == y->pid && x->rt_anchor == y->rt_anchor &&
	       x->mono_anchor == y->mono_anchor && x->rank == y->rank &&
	       (x->part == y->part || (x->flight_want && y->flight_want));
}

/* Drops files written by the same process as an earlier one (a copy of a
 * rank's file under another name), with a warning. */
static void drop_same_process(struct inputs *in)
{
	if (in->n < 2)
		return;
	size_t *ix = xmalloc(in->n * sizeof *ix);
	char *dup = xcalloc(in->n, 1);
	for (size_t i = 0; i < in->n; i++)
		ix[i] = i;
	qsort_r(ix, in->n, sizeof *ix, cmp_identity, in->v);
	for (size_t i = 1, first = 0; i < in->n; i++) {
		if (!same_process(&in->v[ix[i]].f.h, &in->v[ix[first]].f.h)) {
			first = i;
			continue;
		}
		const struct tfile *t = &in->v[ix[i]], *o = &in->v[ix[first]];
		if (t->f.h.part != o->f.h.part)
			say_note("%s: an earlier flight window of the process of %s (host %s, pid "
				 "%llu); the latest is read (name a window alone to read it)",
				 t->f.path, o->f.path, t->f.h.host, (unsigned long long)t->f.h.pid);
		else
			say_warning("%s: duplicate of %s (the same process: host %s, pid %llu); "
				    "ignored", t->f.path, o->f.path, t->f.h.host,
				    (unsigned long long)t->f.h.pid);
		dup[ix[i]] = 1;
	}
	size_t k = 0;
	for (size_t i = 0; i < in->n; i++) {
		if (dup[i]) {
			ct_file_close(&in->v[i].f);
			continue;
		}
		if (k != i)
			in->v[k] = in->v[i];
		k++;
	}
	in->n = k;
	free(ix);
	free(dup);
}

/* Says what became of the unusable inputs. 0: go on with the rest; -1:
 * stop (nothing usable, or --strict). */
static int report_problems(const struct problems *pb, size_t usable, int strict)
{
	size_t total = usable + pb->n;
	if (!pb->n)
		return 0;
	if (strict || !usable) {
		for (size_t i = 0; i < pb->n; i++)
			say("%s", pb->v[i]);
		if (strict && usable)
			say("%zu of %zu inputs unusable (--strict); nothing done", pb->n, total);
		else if (pb->n > 1)
			say("no usable input (%zu unusable)", pb->n);
		return -1;
	}
	for (size_t i = 0; i < pb->n; i++)
		say_warning("%s (skipped)", pb->v[i]);
	say_warning("%zu of %zu input files skipped as unusable; the rest are used "
	            "(--strict makes this an error)",
	            pb->n, total);
	return 0;
}

static int open_inputs(struct inputs *in, char **args, int nargs, int with_logs, int strict)
{
	memset(in, 0, sizeof *in);
	raise_nofile();
	struct names nm = {0}, logs = {0};
	struct problems pb = {0};
	struct dirs_seen ds = {0};
	for (int i = 0; i < nargs; i++) {
		struct stat st;
		if (stat(args[i], &st)) {
			problem(&pb, "%s: %s", args[i], strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			size_t before = nm.n + logs.n, pbefore = pb.n;
			seen_before(&ds, &st); /* given twice: read twice, said once per file */
			scan_dir(&nm, with_logs ? &logs : NULL, &pb, args[i], 0, &ds);
			if (nm.n + logs.n == before && pb.n == pbefore)
				problem(&pb, "%s: no .ctr trace files in this directory", args[i]);
		} else if (!S_ISREG(st.st_mode)) {
			problem(&pb, "%s: not a regular file", args[i]);
		} else if (with_logs && content_of(args[i]) == C_LOG) {
			add_name(&logs, args[i], &st);
		} else {
			add_name(&nm, args[i], &st);
		}
	}
	free(ds.dev), free(ds.ino);
	drop_same_files(&nm);
	drop_same_files(&logs); /* a log given twice counts once */
	if (nm.n)
		in->v = xcalloc(nm.n, sizeof *in->v);
	for (size_t i = 0; i < nm.n; i++) {
		struct tfile *t = &in->v[in->n];
		if (ct_file_open(&t->f, nm.v[i].path)) {
			problem(&pb, "%s", t->f.err);
			continue;
		}
		park(&t->f);
		t->rank = t->f.h.rank;
		in->n++;
	}
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i].path);
	free(nm.v);
	in->logs = xmalloc(logs.n * sizeof *in->logs);
	for (size_t i = 0; i < logs.n; i++)
		in->logs[i] = logs.v[i].path;
	in->nlogs = logs.n;
	free(logs.v);
	drop_same_process(in);
	int rc = report_problems(&pb, in->n + in->nlogs, strict);
	if (!rc && !in->n && !in->nlogs) {
		say("no input files");
		rc = -1;
	}
	for (size_t i = 0; i < pb.n; i++)
		free(pb.v[i]);
	free(pb.v);
	if (rc) {
		inputs_close(in);
		return -1;
	}
	inputs_rank(in);
	in->base_ns = UINT64_MAX;
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].f.h.rt_anchor < in->base_ns)
			in->base_ns = in->v[i].f.h.rt_anchor;
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		const struct ct_header *h = &t->f.h;
		t->off_ns = (int64_t)(h->rt_anchor - in->base_ns) - (int64_t)h->mono_anchor;
		t->pid = (uint64_t)(i + 1) * 1000000u;
	}
	return 0;
}

static void free_esc(struct tfile *t)
{
	strcache_free(&t->esc);
}

int inputs_open(struct inputs *in, char **args, int nargs, int strict)
{
	return open_inputs(in, args, nargs, 0, strict);
}

int inputs_open_logs(struct inputs *in, char **args, int nargs, int strict)
{
	return open_inputs(in, args, nargs, 1, strict);
}

void inputs_close(struct inputs *in)
{
	for (size_t i = 0; i < in->nlogs; i++)
		free(in->logs[i]);
	free(in->logs);
	for (size_t i = 0; i < in->n; i++) {
		ct_file_close(&in->v[i].f);
		free_esc(&in->v[i]);
	}
	free(in->v);
	memset(in, 0, sizeof *in);
}

void tfile_release(struct tfile *t)
{
	ct_file_release(&t->f);
	free_esc(t);
}

int inputs_rewind(struct inputs *in, size_t i)
{
	struct tfile *t = &in->v[i];
	char path[4096];
	snprintf(path, sizeof path, "%s", t->f.path);
	ct_file_close(&t->f);
	free_esc(t);
	if (ct_file_open(&t->f, path)) {
		say("%s", t->f.err);
		return -1;
	}
	park(&t->f);
	return 0;
}

const char *tfile_esc(struct tfile *t, uint64_t sid, const char *s, uint32_t len, uint32_t *outlen)
{
	return strcache_get(&t->esc, sid, s, len, NULL, outlen);
}

void inputs_split_path(const struct inputs *in, size_t i, const char *dir, const char *ext,
                       char *buf, size_t len)
{
	const struct tfile *t = &in->v[in->v[i].lead];
	char pidpart[32] = "", partpart[32] = "";
	for (size_t j = 0; j < in->n; j++)
		if (in->v[j].lead == (int)j && in->v[j].shown_rank == t->shown_rank &&
		    in->v[j].f.h.pid != t->f.h.pid)
			snprintf(pidpart, sizeof pidpart, ".%llu", (unsigned long long)t->f.h.pid);
	if (t->f.h.part > 1)
		snprintf(partpart, sizeof partpart, ".w%llu", (unsigned long long)t->f.h.part);
	snprintf(buf, len, "%s/rank%lld%s%s%s", dir, (long long)t->shown_rank, pidpart, partpart, ext);
}

int trace_file_who(const char *path, int64_t *rank, char *host, size_t hlen, uint64_t *pid,
                   char *job, size_t jlen)
{
	struct ct_file f;
	if (ct_file_open(&f, path)) /* closed already */
		return -1;
	*rank = f.h.rank;
	snprintf(host, hlen, "%s", f.h.host ? f.h.host : "");
	*pid = f.h.pid;
	if (job)
		snprintf(job, jlen, "%s", f.h.job_id ? f.h.job_id : "");
	ct_file_close(&f);
	return 0;
}

static int same_inode(const char *a, const struct stat *sb)
{
	struct stat st;
	return !stat(a, &st) && st.st_dev == sb->st_dev && st.st_ino == sb->st_ino;
}

int inputs_hold(const struct inputs *in, const char *path)
{
	struct stat sb;
	if (!path || !strcmp(path, "-") || stat(path, &sb))
		return 0;
	const char *hit = NULL;
	for (size_t i = 0; i < in->n && !hit; i++)
		if (same_inode(in->v[i].f.path, &sb))
			hit = in->v[i].f.path;
	for (size_t i = 0; i < in->nlogs && !hit; i++)
		if (same_inode(in->logs[i], &sb))
			hit = in->logs[i];
	if (hit)
		say_cmd("the output %s is the input %s; not overwritten", path, hit);
	return hit != NULL;
}
