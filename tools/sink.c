#include "sink.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define GZ_LEVEL 1 /* speed over size: .ctr is the compact format */

struct sink {
	int fd, gz, err;
	pthread_mutex_t lock;
	uint32_t crc;	/* of everything written so far (gzip) */
	uint64_t isize; /* uncompressed bytes */
};

/* One raw-deflate stream per thread, reused for every chunk it compresses. */
static __thread z_stream *tz;
static __thread unsigned char *tzbuf;
static __thread size_t tzcap;

static void write_all(struct sink *s, const void *p, size_t n)
{
	const char *c = p;
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

struct sink *sink_open(const char *path)
{
	struct sink *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	size_t n = strlen(path);
	if (!strcmp(path, "-")) {
		s->fd = STDOUT_FILENO;
	} else {
		s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (s->fd < 0) {
			int e = errno;
			free(s);
			errno = e;
			return NULL;
		}
		s->gz = n > 3 && !strcmp(path + n - 3, ".gz");
	}
	if (s->gz) {
		/* gzip header: deflate, no name, no mtime, OS unknown */
		static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
		write_all(s, hdr, sizeof hdr);
		s->crc = (uint32_t)crc32(0L, Z_NULL, 0);
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
		unsigned char *b = realloc(tzbuf, need);
		if (!b)
			return -1;
		tzbuf = b, tzcap = need;
	}
	tz->next_in = (unsigned char *)buf;
	tz->avail_in = (uInt)len;
	tz->next_out = tzbuf;
	tz->avail_out = (uInt)tzcap;
	if (deflate(tz, Z_FULL_FLUSH) != Z_OK || tz->avail_in)
		return -1;
	*out = tzcap - tz->avail_out;
	return 0;
}

void sink_write(struct sink *s, const char *buf, size_t len)
{
	if (!len)
		return;
	if (!s->gz) {
		pthread_mutex_lock(&s->lock);
		write_all(s, buf, len);
		s->isize += len;
		pthread_mutex_unlock(&s->lock);
		return;
	}
	size_t zn;
	uint32_t crc = (uint32_t)crc32(0L, (const Bytef *)buf, (uInt)len);
	int rc = compress_chunk(buf, len, &zn);
	pthread_mutex_lock(&s->lock);
	if (rc)
		s->err = ENOMEM;
	else
		write_all(s, tzbuf, zn);
	s->crc = (uint32_t)crc32_combine(s->crc, crc, (z_off_t)len);
	s->isize += len;
	pthread_mutex_unlock(&s->lock);
}

uint64_t sink_bytes(const struct sink *s)
{
	return s->isize;
}

int sink_close(struct sink *s)
{
	if (s->gz) {
		/* An empty final block, then CRC-32 and size, little endian. */
		unsigned char t[10] = {0x03, 0x00};
		for (int i = 0; i < 4; i++) {
			t[2 + i] = (unsigned char)(s->crc >> (8 * i));
			t[6 + i] = (unsigned char)(s->isize >> (8 * i));
		}
		write_all(s, t, sizeof t);
	}
	int err = s->err;
	if (s->fd > STDERR_FILENO && close(s->fd) && !err)
		err = errno;
	pthread_mutex_destroy(&s->lock);
	free(s);
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
