// SPDX-License-Identifier: MIT
#include "write/out.h"
#include "write/sink.h"
#include "util/xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#define BUF (1u << 20)
#define GZ_LEVEL 1 /* speed over size: .ctr is the compact format */

static int is_gz(const char *path)
{
	size_t n = strlen(path);
	return n > 3 && !strcmp(path + n - 3, ".gz");
}

int out_open(struct out *o, const char *path)
{
	memset(o, 0, sizeof *o);
	o->cap = BUF;
	o->buf = malloc(o->cap); /* raw: the caller says why the output failed (ENOMEM) */
	if (!o->buf)
		return -1;
	if (!strcmp(path, "-"))
		o->fd = STDOUT_FILENO;
	else
		o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0) {
		int e = errno;
		free(o->buf);
		o->buf = NULL;
		errno = e;
		return -1;
	}
	if (strcmp(path, "-") && is_gz(path)) {
		z_stream *z = calloc(1, sizeof *z); /* raw: as o->buf */
		o->zbuf = malloc(BUF);
		if (!z || !o->zbuf || deflateInit2(z, GZ_LEVEL, Z_DEFLATED, 15 + 16, 8,
						   Z_DEFAULT_STRATEGY) != Z_OK) {
			free(z);
			return -1;
		}
		o->gz = z;
	}
	return 0;
}

void out_init_mem(struct out *o)
{
	memset(o, 0, sizeof *o);
	o->fd = -1;
}

void out_init_sink(struct out *o, struct sink *s)
{
	out_init_mem(o);
	o->sink = s;
}

void out_hand_over(struct out *o)
{
	sink_put(o->sink, o->key, &o->buf, &o->cap, o->len);
	o->written += o->len;
	o->len = 0;
}

static void write_fd(struct out *o, const void *p, size_t n)
{
	const char *c = p;
	while (n && !o->err) {
		ssize_t w = write(o->fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = errno ? errno : EIO;
			return;
		}
		c += w;
		n -= (size_t)w;
	}
}

static void deflate_some(struct out *o, const void *p, size_t n, int flush)
{
	z_stream *z = o->gz;
	z->next_in = (unsigned char *)p;
	z->avail_in = (unsigned)n;
	do {
		z->next_out = o->zbuf;
		z->avail_out = BUF;
		deflate(z, flush);
		write_fd(o, o->zbuf, BUF - z->avail_out);
	} while (z->avail_out == 0 && !o->err);
}

void out_flush(struct out *o)
{
	if (o->fd < 0 || !o->len)
		return;
	if (o->gz)
		deflate_some(o, o->buf, o->len, Z_NO_FLUSH);
	else
		write_fd(o, o->buf, o->len);
	o->written += o->len;
	o->len = 0;
}

void out_grow(struct out *o, size_t n)
{
	if (o->fd >= 0) {
		out_flush(o);
		if (o->len + n <= o->cap)
			return;
	}
	size_t ncap = o->cap ? o->cap : 4096;
	while (ncap < o->len + n)
		ncap *= 2;
	o->buf = xrealloc(o->buf, ncap);
	o->cap = ncap;
}

int out_close(struct out *o)
{
	if (o->sink) {
		out_chunk(o, 0);
		free(o->buf);
		o->buf = NULL;
		return 0;
	}
	out_flush(o);
	if (o->gz) {
		deflate_some(o, "", 0, Z_FINISH);
		deflateEnd(o->gz);
		free(o->gz);
	}
	free(o->zbuf);
	free(o->buf);
	o->buf = NULL;
	int rc = o->err ? -1 : 0;
	if (o->fd > STDERR_FILENO && close(o->fd))
		rc = -1;
	if (o->err)
		errno = o->err;
	return rc;
}

const char out_digits2[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
			      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
			      "8081828384858687888990919293949596979899";

void out_u64(struct out *o, uint64_t v)
{
	out_need(o, 20);
	o->len = (size_t)(out_put_u64(o->buf + o->len, v) - o->buf);
}

void out_i64(struct out *o, int64_t v)
{
	if (v < 0) {
		out_ch(o, '-');
		out_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		out_u64(o, (uint64_t)v);
	}
}

void out_us(struct out *o, int64_t ns)
{
	uint64_t u;
	if (ns < 0) {
		out_ch(o, '-');
		u = (uint64_t)0 - (uint64_t)ns;
	} else {
		u = (uint64_t)ns;
	}
	out_u64(o, u / 1000);
	unsigned f = (unsigned)(u % 1000);
	out_need(o, 4);
	char *p = o->buf + o->len;
	p[0] = '.';
	p[1] = (char)('0' + f / 100);
	p[2] = (char)('0' + f / 10 % 10);
	p[3] = (char)('0' + f % 10);
	o->len += 4;
}

void out_double(struct out *o, double v)
{
	char tmp[40];
	if (!isfinite(v)) {
		out_lit(o, "null");
		return;
	}
	int n = snprintf(tmp, sizeof tmp, "%.17g", v);
	out_mem(o, tmp, (size_t)n);
}

/* Length of a valid UTF-8 sequence at p (1..4), or 0 if invalid. */
void out_json_str(struct out *o, const char *s, size_t n)
{
	out_need(o, n * 6 + 2);
	o->buf[o->len++] = '"';
	o->len += json_escape_into(o->buf + o->len, s, n);
	o->buf[o->len++] = '"';
}
