#include "out/sink.h"
#include "util/tmp_guard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <zlib.h>

#define GZ_LEVEL 1 /* speed over size: .ctr is the compact format */

/* Writing is done by a thread of the sink's own, so that the workers go on
 * formatting while the kernel copies their output (a third of the time of
 * a conversion into a file). Chunks wait in a few buffers of the sink's:
 * memory stays bounded, and a worker waits only when the disk is behind. */
#define NSLOT 4

/* Blocks are allocated ahead of the output (fallocate), in steps that
 * double from PREALLOC_MIN up to PREALLOC_MAX; the file is cut to what was
 * written at the end (sink_close). Without this, ext4 reserves blocks
 * page by page as the page cache fills (delayed allocation): 700 MB in
 * 1 MB writes took 0.175 s of system time against 0.13 s into allocated
 * blocks on this project's VM (medians of 8; bench/RESULTS.md, "GPU
 * conversion into a file, issue 14"). */
#define PREALLOC_MIN (4ull << 20)
#define PREALLOC_MAX (64ull << 20)

struct slot {
	char *buf;
	size_t len, cap;
};

struct sink {
	int fd, gz, err; /* err: set by write_all (the writer thread once it runs) */
	char *path, *tmp; /* the output, and the name it is written under until complete */
	int guard;	  /* tmp_guard slot */
	int oom;	 /* a chunk could not be compressed (under lock) */
	pthread_mutex_t lock;
	pthread_cond_t ready, room; /* a chunk to write; a buffer free */
	pthread_t writer;
	struct slot slot[NSLOT];
	unsigned queue[NSLOT], head, tail; /* slots queued for writing, in order */
	unsigned spare[NSLOT], nspare;	   /* slots free to fill */
	int closing;
	uint32_t crc;	/* of everything queued so far (gzip) */
	uint64_t isize; /* uncompressed bytes */
	int prealloc;		   /* blocks are allocated ahead (a file of ours) */
	uint64_t pos, alloc, step; /* bytes written, allocated; the next step */
	uint64_t fsize_max;	   /* RLIMIT_FSIZE: allocating past it raises SIGXFSZ */
};

/* One raw-deflate stream per thread, reused for every chunk it compresses. */
static __thread z_stream *tz;
static __thread char *tzbuf;
static __thread size_t tzcap;

/* Allocates blocks for the next n bytes and more, when not done yet. A
 * filesystem that cannot (EOPNOTSUPP) or a full disk ends it; the write
 * itself says whether the bytes fit. */
static void prealloc(struct sink *s, size_t n)
{
	while (s->prealloc && s->alloc < s->pos + n) {
		uint64_t len = s->fsize_max - s->alloc < s->step ? s->fsize_max - s->alloc : s->step;
		if (!len || fallocate(s->fd, 0, (off_t)s->alloc, (off_t)len)) {
			s->prealloc = 0;
			return;
		}
		s->alloc += len;
		if (s->step < PREALLOC_MAX)
			s->step *= 2;
	}
}

static void write_all(struct sink *s, const void *p, size_t n)
{
	const char *c = p;
	if (s->prealloc)
		prealloc(s, n);
	s->pos += n; /* what the file holds at the end, unless a write fails */
	while (n && !s->err) {
		ssize_t w = write(s->fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			s->err = errno ? errno : EIO;
			return;
		}
		c += w;
		n -= (size_t)w;
	}
}

static void *writer_main(void *arg)
{
	struct sink *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (s->head == s->tail && !s->closing)
			pthread_cond_wait(&s->ready, &s->lock);
		if (s->head == s->tail)
			break;
		unsigned i = s->queue[s->head % NSLOT];
		pthread_mutex_unlock(&s->lock);
		write_all(s, s->slot[i].buf, s->slot[i].len); /* only this thread writes */
		pthread_mutex_lock(&s->lock);
		s->head++;
		s->spare[s->nspare++] = i;
		pthread_cond_signal(&s->room);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* Queues the n bytes of *buf behind everything queued before, taking the
 * buffer itself: *buf and *cap come back as a free slot's buffer (NULL, 0
 * at first), so a chunk is never copied. crc and len: what it stands for
 * uncompressed (gzip's trailer needs them in file order, which is queue
 * order). */
static void enqueue(struct sink *s, char **buf, size_t *cap, size_t n, uint32_t crc, size_t len)
{
	pthread_mutex_lock(&s->lock);
	while (!s->nspare)
		pthread_cond_wait(&s->room, &s->lock);
	struct slot *q = &s->slot[s->spare[--s->nspare]];
	char *b = q->buf;
	size_t c = q->cap;
	q->buf = *buf, q->cap = *cap, q->len = n;
	*buf = b, *cap = c;
	if (s->gz)
		s->crc = (uint32_t)crc32_combine(s->crc, crc, (z_off_t)len);
	s->isize += len;
	s->queue[s->tail++ % NSLOT] = (unsigned)(q - s->slot);
	pthread_cond_signal(&s->ready);
	pthread_mutex_unlock(&s->lock);
}

static mode_t umask_now;
static pthread_once_t umask_once = PTHREAD_ONCE_INIT;

static void read_umask(void)
{
	umask_now = umask(022);
	umask(umask_now);
}

static void free_sink(struct sink *s)
{
	free(s->path);
	free(s->tmp);
	free(s);
}

/* The output is written to ".NAME.XXXXXX.tmp" beside it and renamed onto
 * NAME once complete (sink_close): readers never see half a file, a
 * failed conversion leaves nothing behind and an older NAME as it was. */
static int open_tmp(struct sink *s, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	s->path = strdup(path);
	if (!s->path || asprintf(&s->tmp, "%.*s.%s.XXXXXX.tmp", (int)dirlen, path, path + dirlen) < 0) {
		s->tmp = NULL;
		errno = ENOMEM;
		return -1;
	}
	s->fd = mkostemps(s->tmp, 4, O_CLOEXEC);
	if (s->fd < 0)
		return -1;
	s->guard = tmp_guard(s->tmp);
	pthread_once(&umask_once, read_umask);
	if (fchmod(s->fd, 0666 & ~umask_now)) {
		int e = errno;
		close(s->fd);
		tmp_unguard(s->guard);
		unlink(s->tmp);
		errno = e;
		return -1;
	}
	return 0;
}

struct sink *sink_open(const char *path)
{
	struct sink *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->guard = -1;
	pthread_mutex_init(&s->lock, NULL);
	size_t n = strlen(path);
	if (!strcmp(path, "-")) {
		s->fd = STDOUT_FILENO;
	} else {
		if (open_tmp(s, path)) {
			int e = errno;
			free_sink(s);
			errno = e;
			return NULL;
		}
		s->gz = n > 3 && !strcmp(path + n - 3, ".gz");
		struct rlimit rl;
		struct statfs sf;
		/* ext4 only: measured there; on tmpfs allocating would zero
		 * pages that the writes then fill, for nothing */
		s->prealloc = !fstatfs(s->fd, &sf) && sf.f_type == EXT4_SUPER_MAGIC;
		s->step = PREALLOC_MIN, s->fsize_max = UINT64_MAX;
		if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY)
			s->fsize_max = rl.rlim_cur;
	}
	if (s->gz) {
		/* gzip header: deflate, no name, no mtime, OS unknown */
		static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
		write_all(s, hdr, sizeof hdr);
		s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	}
	pthread_cond_init(&s->ready, NULL);
	pthread_cond_init(&s->room, NULL);
	for (unsigned i = 0; i < NSLOT; i++)
		s->spare[s->nspare++] = i;
	int e = pthread_create(&s->writer, NULL, writer_main, s);
	if (e) {
		if (s->tmp) {
			close(s->fd);
			tmp_unguard(s->guard);
			unlink(s->tmp);
		}
		free_sink(s);
		errno = e;
		return NULL;
	}
	return s;
}

/* Compresses buf into the thread's buffer as raw deflate that ends on a
 * full flush: byte aligned and independent of anything compressed before,
 * so it can be placed after another thread's piece. */
static int compress_chunk(const char *buf, size_t len, size_t *out)
{
	if (!tz) {
		tz = calloc(1, sizeof *tz);
		if (!tz || deflateInit2(tz, GZ_LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return -1;
	}
	size_t need = deflateBound(tz, (uLong)len) + 64;
	if (need > tzcap) {
		char *b = realloc(tzbuf, need);
		if (!b)
			return -1;
		tzbuf = b, tzcap = need;
	}
	tz->next_in = (unsigned char *)buf;
	tz->avail_in = (uInt)len;
	tz->next_out = (unsigned char *)tzbuf;
	tz->avail_out = (uInt)tzcap;
	if (deflate(tz, Z_FULL_FLUSH) != Z_OK || tz->avail_in)
		return -1;
	*out = tzcap - tz->avail_out;
	return 0;
}

void sink_put(struct sink *s, char **buf, size_t *cap, size_t len)
{
	if (!len)
		return;
	if (!s->gz) {
		enqueue(s, buf, cap, len, 0, len);
		return;
	}
	size_t zn;
	uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)*buf, (uInt)len);
	if (compress_chunk(*buf, len, &zn)) {
		pthread_mutex_lock(&s->lock);
		s->oom = 1;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	enqueue(s, &tzbuf, &tzcap, zn, crc, len);
}

uint64_t sink_bytes(const struct sink *s)
{
	return s->isize;
}

int sink_close(struct sink *s)
{
	pthread_mutex_lock(&s->lock);
	s->closing = 1;
	pthread_cond_signal(&s->ready);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->writer, NULL);
	for (unsigned i = 0; i < NSLOT; i++)
		free(s->slot[i].buf);
	if (s->gz) {
		/* An empty final block, then CRC-32 and size, little endian. */
		unsigned char t[10] = {0x03, 0x00};
		for (int i = 0; i < 4; i++) {
			t[2 + i] = (unsigned char)(s->crc >> (8 * i));
			t[6 + i] = (unsigned char)(s->isize >> (8 * i));
		}
		write_all(s, t, sizeof t);
	}
	int err = s->err ? s->err : s->oom ? ENOMEM : 0;
	if (s->tmp) {
		/* cut off blocks allocated ahead (fallocate extends the size,
		 * perhaps also when it failed half way) */
		if (!err && s->step && ftruncate(s->fd, (off_t)s->pos))
			err = errno;
		if (close(s->fd) && !err)
			err = errno;
		tmp_unguard(s->guard);
		if (!err && rename(s->tmp, s->path))
			err = errno;
		if (err)
			unlink(s->tmp);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->ready);
	pthread_cond_destroy(&s->room);
	free_sink(s);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

void sink_thread_done(void)
{
	if (tz) {
		deflateEnd(tz);
		free(tz);
		tz = NULL;
	}
	free(tzbuf);
	tzbuf = NULL;
	tzcap = 0;
}
