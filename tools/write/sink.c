// SPDX-License-Identifier: MIT
#include "write/sink.h"
#include "write/sink_spill.h"
#include "util/tmp_file.h"
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

/* The sink allocates with plain malloc, not util/xalloc.h: running out of
 * memory fails the output it writes (oom, then ENOMEM from sink_close or
 * sink_open, said by the caller), and its temporary file is removed; an
 * exit there would leave the file behind (tmp_guard acts on signals). */

/* Writing is done by a thread of the sink's own, so that the workers go on
 * formatting while the kernel copies their output (a third of the time of
 * a conversion into a file). At most NSLOT chunks of the current piece
 * wait for it: memory stays bounded, and a worker waits only when the disk
 * is behind. */
#define NSLOT 4

/* Chunks of later pieces kept in memory, in all; beyond, they go to the
 * spill file. Enough for the few blocks by which workers sharing a file
 * run apart; a whole file's output of another worker goes to the spill. */
#define WAIT_MEM (4u << 20)

/* Blocks are allocated ahead of the output (fallocate), in steps that
 * double from PREALLOC_MIN up to PREALLOC_MAX; the file is cut to what was
 * written at the end (sink_close). Without this, ext4 reserves blocks
 * page by page as the page cache fills (delayed allocation): 700 MB in
 * 1 MB writes take 0.175 s of system time against 0.13 s into allocated
 * blocks on this project's VM (medians of 8; bench/JOURNAL.md, "CUPTI
 * translation and GPU conversion"). */
#define PREALLOC_MIN (4ull << 20)
#define PREALLOC_MAX (64ull << 20)

/* A chunk to write: a buffer of the sink's (buf), or bytes waiting in the
 * spill file (buf NULL, at off). crc, ulen: what it stands for
 * uncompressed (gzip's trailer needs them in file order). */
struct item {
	struct item *next;
	char *buf;
	size_t len, cap, ulen;
	uint64_t off;
	uint32_t crc;
	int src, has_src; /* from a file of its own (sink_put_fd): its first len bytes */
};

/* A piece that is not the current one yet: its chunks so far. */
struct piece {
	struct piece *next; /* the waiting pieces, in key order */
	uint64_t key;
	int done, last;
	struct item *head, *tail;
};

struct sink {
	int fd, gz, err; /* err: set by write_all (the writer thread once it runs) */
	int piece;	 /* sink_open_piece: no gzip header or trailer, kept unrenamed */
	char *path, *tmp; /* the output, and the name it is written under until complete */
	int guard;	  /* tmp_guard slot */
	int oom;	 /* a chunk could not be compressed or kept (under lock) */
	int fail;	 /* sink_fail's errno (under lock) */
	pthread_mutex_t lock;
	pthread_cond_t ready, room; /* a chunk to write; room in the queue */
	pthread_t writer;
	struct item *qhead, *qtail; /* chunks to write, in file order */
	unsigned nqueued;
	char *spare[NSLOT]; /* buffers written, for the next chunks */
	size_t sparecap[NSLOT];
	unsigned nspare;
	uint64_t cur;		/* the piece being written */
	int any_order;		/* sink_any_order: every piece is current */
	struct piece *waiting;	/* later pieces, by key */
	size_t waiting_mem;	/* bytes of their chunks held in memory */
	struct sink_spill spill;
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

/* Bytes of the spill file into the output, after what was written. */
static void copy_spilled(struct sink *s, uint64_t off, size_t n)
{
	if (s->prealloc)
		prealloc(s, n);
	s->pos += n;
	if (!s->err && spill_copy(&s->spill, s->fd, off, n))
		s->err = errno ? errno : EIO;
}

/* A file's bytes (sink_put_fd) into the output; the file is closed. */
static void copy_src(struct sink *s, struct item *it)
{
	if (s->prealloc)
		prealloc(s, it->len);
	s->pos += it->len;
	if (!s->err && spill_copy_from(&s->spill, it->src, 0, s->fd, it->len))
		s->err = errno ? errno : EIO;
	close(it->src);
}

/* Keeps a written chunk's buffer for the next chunk handed over. */
static void recycle(struct sink *s, char *buf, size_t cap)
{
	if (buf && s->nspare < NSLOT) {
		s->spare[s->nspare] = buf;
		s->sparecap[s->nspare++] = cap;
	} else {
		free(buf);
	}
}

static void *writer_main(void *arg)
{
	struct sink *s = arg;
	pthread_mutex_lock(&s->lock);
	for (;;) {
		while (!s->qhead && !s->closing)
			pthread_cond_wait(&s->ready, &s->lock);
		struct item *it = s->qhead;
		if (!it)
			break;
		s->qhead = it->next;
		if (!s->qhead)
			s->qtail = NULL;
		pthread_mutex_unlock(&s->lock);
		if (it->buf) /* only this thread writes */
			write_all(s, it->buf, it->len);
		else if (it->has_src)
			copy_src(s, it);
		else
			copy_spilled(s, it->off, it->len);
		pthread_mutex_lock(&s->lock);
		if (it->buf)
			recycle(s, it->buf, it->cap);
		else if (!it->has_src)
			spill_copied(&s->spill, it->off, it->len);
		free(it);
		s->nqueued--;
		pthread_cond_broadcast(&s->room);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* it at the end of the list head..tail. */
static void append(struct item **head, struct item **tail, struct item *it)
{
	it->next = NULL;
	if (*tail)
		(*tail)->next = it;
	else
		*head = it;
	*tail = it;
}

/* Under lock: the item goes out behind everything queued before. */
static void queue_item(struct sink *s, struct item *it)
{
	append(&s->qhead, &s->qtail, it);
	s->nqueued++;
	if (s->gz)
		s->crc = (uint32_t)crc32_combine(s->crc, it->crc, (z_off_t)it->ulen);
	s->isize += it->ulen;
	pthread_cond_signal(&s->ready);
}

static uint64_t next_key(uint64_t key, int last)
{
	return last ? SINK_KEY((key >> 32) + 1, 0) : key + 1;
}

/* Under lock: the waiting piece of that key, made when asked. */
static struct piece *waiting_piece(struct sink *s, uint64_t key, int make)
{
	struct piece **pp = &s->waiting;
	while (*pp && (*pp)->key < key)
		pp = &(*pp)->next;
	if (*pp && (*pp)->key == key)
		return *pp;
	if (!make)
		return NULL;
	struct piece *p = calloc(1, sizeof *p); /* raw: see the top */
	if (!p)
		return NULL;
	p->key = key;
	p->next = *pp;
	*pp = p;
	return p;
}

/* Under lock: the first waiting piece's chunks into the queue. */
static struct piece *release_first(struct sink *s)
{
	struct piece *p = s->waiting;
	s->waiting = p->next;
	for (struct item *it = p->head, *n; it; it = n) {
		n = it->next;
		if (it->buf)
			s->waiting_mem -= it->len;
		queue_item(s, it);
	}
	return p;
}

/* Under lock: the current piece is complete; the ones after it that
 * waited go out, up to one that is not complete (it is current now). */
static void advance(struct sink *s, int last)
{
	s->cur = next_key(s->cur, last);
	while (s->waiting && s->waiting->key == s->cur) {
		struct piece *p = release_first(s);
		int done = p->done;
		last = p->last;
		free(p);
		if (!done)
			break;
		s->cur = next_key(s->cur, last);
	}
}

/* Under lock: an item for the current piece, or for a later one. */
static void add_item(struct sink *s, uint64_t key, struct item *it)
{
	struct piece *p;
	if (key <= s->cur || s->any_order || !(p = waiting_piece(s, key, 1))) {
		queue_item(s, it); /* (no memory for a piece: out of order then) */
		return;
	}
	append(&p->head, &p->tail, it);
	if (it->buf)
		s->waiting_mem += it->len;
}

/* Under lock: the chunk's buffer is the sink's now; *buf and *cap become
 * a spare one. */
static void take_buffer(struct sink *s, struct item *it, char **buf, size_t *cap)
{
	it->buf = *buf, it->cap = *cap;
	if (s->nspare) {
		s->nspare--;
		*buf = s->spare[s->nspare], *cap = s->sparecap[s->nspare];
	} else {
		*buf = NULL, *cap = 0;
	}
}

/* Queues the n bytes of *buf as a chunk of piece key: to the writer when
 * the piece is current (waiting for room there), else among the piece's
 * waiting chunks, into the spill file once those hold WAIT_MEM bytes. */
static void enqueue(struct sink *s, uint64_t key, char **buf, size_t *cap, size_t n, uint32_t crc,
		    size_t len)
{
	struct item *it = calloc(1, sizeof *it); /* raw: see the top */
	pthread_mutex_lock(&s->lock);
	if (!it) {
		s->oom = 1;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	it->len = n, it->crc = crc, it->ulen = len;
	/* (key < cur: a piece after its unit's last, say of a share that
	 * read more blocks of a file still being written than share 0:
	 * whole events, out as they come, before the document's tail) */
	if (key <= s->cur || s->any_order) {
		while (s->nqueued >= NSLOT)
			pthread_cond_wait(&s->room, &s->lock);
	} else if (s->waiting_mem + n > WAIT_MEM && spill_reserve(&s->spill, s->tmp, n, &it->off)) {
		/* the bytes go into the space reserved, without the lock */
		pthread_mutex_unlock(&s->lock);
		int bad = spill_write(&s->spill, *buf, n, it->off);
		pthread_mutex_lock(&s->lock);
		if (!bad) {
			add_item(s, key, it);
			pthread_mutex_unlock(&s->lock);
			return;
		}
		spill_copied(&s->spill, it->off, n); /* not written: kept in memory */
	}
	take_buffer(s, it, buf, cap);
	add_item(s, key, it);
	pthread_mutex_unlock(&s->lock);
}

void sink_put_fd(struct sink *s, uint64_t key, int fd, uint64_t len, uint32_t crc, uint64_t ulen)
{
	struct item *it = calloc(1, sizeof *it); /* raw: see the top */
	pthread_mutex_lock(&s->lock);
	if (it) {
		*it = (struct item){.len = len, .ulen = ulen, .crc = crc, .src = fd, .has_src = 1};
		add_item(s, key, it);
	} else {
		s->oom = 1;
		close(fd);
	}
	pthread_mutex_unlock(&s->lock);
}

void sink_fail(struct sink *s, int err)
{
	pthread_mutex_lock(&s->lock);
	s->fail = err;
	pthread_mutex_unlock(&s->lock);
}

void sink_any_order(struct sink *s)
{
	s->any_order = 1;
}

void sink_done(struct sink *s, uint64_t key, int last)
{
	pthread_mutex_lock(&s->lock);
	if (key == s->cur) {
		advance(s, last);
		pthread_cond_broadcast(&s->room); /* a waiting worker's piece may be current */
	} else if (key > s->cur) {
		struct piece *p = waiting_piece(s, key, 1);
		if (p)
			p->done = 1, p->last = last;
		else
			s->oom = 1;
	} /* else a late piece, out already */
	pthread_mutex_unlock(&s->lock);
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
	s->path = strdup(path); /* raw: see the top */
	if (!s->path) {
		errno = ENOMEM;
		return -1;
	}
	s->fd = tmp_file_create(path, &s->tmp, &s->guard);
	return s->fd < 0 ? -1 : 0;
}

static struct sink *open_sink(const char *path, int piece);

struct sink *sink_open(const char *path)
{
	return open_sink(path, 0);
}

struct sink *sink_open_piece(const char *path)
{
	return open_sink(path, 1);
}

static struct sink *open_sink(const char *path, int piece)
{
	struct sink *s = calloc(1, sizeof *s); /* raw: see the top */
	if (!s)
		return NULL;
	s->guard = -1;
	s->piece = piece;
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
		if (!piece)
			write_all(s, hdr, sizeof hdr);
		s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
	}
	pthread_cond_init(&s->ready, NULL);
	pthread_cond_init(&s->room, NULL);
	spill_init(&s->spill);
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
		tz = calloc(1, sizeof *tz); /* raw: see the top */
		if (!tz || deflateInit2(tz, GZ_LEVEL, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return -1;
	}
	size_t need = deflateBound(tz, (uLong)len) + 64;
	if (need > tzcap) {
		char *b = realloc(tzbuf, need); /* raw: see the top */
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

void sink_put(struct sink *s, uint64_t key, char **buf, size_t *cap, size_t len)
{
	if (!len)
		return;
	if (!s->gz) {
		enqueue(s, key, buf, cap, len, 0, len);
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
	enqueue(s, key, &tzbuf, &tzcap, zn, crc, len);
}

uint64_t sink_bytes(const struct sink *s)
{
	return s->isize;
}

static int finish(struct sink *s, struct sink_piece *pc);

int sink_close(struct sink *s)
{
	return finish(s, NULL);
}

int sink_close_piece(struct sink *s, struct sink_piece *pc)
{
	memset(pc, 0, sizeof *pc);
	return finish(s, pc);
}

/* Writes what waits; the file renamed onto its name, or for a piece
 * (pc) kept under its temporary name, said in *pc. */
static int finish(struct sink *s, struct sink_piece *pc)
{
	pthread_mutex_lock(&s->lock);
	/* Every worker has finished: pieces that still wait (after one that
	 * never came, e.g. a share that could not open its file) go out in
	 * key order. */
	while (s->waiting)
		free(release_first(s));
	s->closing = 1;
	pthread_cond_signal(&s->ready);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->writer, NULL);
	for (unsigned i = 0; i < s->nspare; i++)
		free(s->spare[i]);
	spill_close(&s->spill);
	if (s->gz && !pc) {
		/* An empty final block, then CRC-32 and size, little endian. */
		unsigned char t[10] = {0x03, 0x00};
		for (int i = 0; i < 4; i++) {
			t[2 + i] = (unsigned char)(s->crc >> (8 * i));
			t[6 + i] = (unsigned char)(s->isize >> (8 * i));
		}
		write_all(s, t, sizeof t);
	}
	int err = s->err ? s->err : s->oom ? ENOMEM : s->fail;
	if (s->tmp) {
		/* cut off blocks allocated ahead (fallocate extends the size,
		 * perhaps also when it failed half way) */
		if (!err && s->step && ftruncate(s->fd, (off_t)s->pos))
			err = errno;
		if (close(s->fd) && !err)
			err = errno;
		tmp_unguard(s->guard);
		if (!err && !pc && rename(s->tmp, s->path))
			err = errno;
		if (err)
			unlink(s->tmp);
		else if (pc) /* the name is the caller's now */
			*pc = (struct sink_piece){s->tmp, s->pos, s->isize, s->crc}, s->tmp = NULL;
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
