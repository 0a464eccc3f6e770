// SPDX-License-Identifier: MIT
/* A small protocol buffers encoder for the Perfetto writer: varints, tags,
 * fixed-width and length-delimited fields written straight into an out
 * buffer. Nested messages reserve one length byte and move their content
 * when it turns out longer than 127 bytes (rare: most of ours are short). */
#ifndef CT_PB_H
#define CT_PB_H

#include "write/out.h"

#include <stdint.h>
#include <string.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2 };

#define PB_MAX 12 /* a tag or a varint, with slack */

static inline unsigned pb_varint_size(uint64_t v)
{
	unsigned n = 1;
	while (v >= 0x80)
		v >>= 7, n++;
	return n;
}

static inline char *pb_varint(char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (char)v;
	return p;
}

static inline char *pb_tag(char *p, unsigned field, unsigned wt)
{
	return pb_varint(p, (uint64_t)field << 3 | wt);
}

/* A varint field (int64 values as two's complement, as protobuf does). */
static inline char *pb_uint(char *p, unsigned field, uint64_t v)
{
	return pb_varint(pb_tag(p, field, PB_VARINT), v);
}

static inline char *pb_fixed64(char *p, unsigned field, uint64_t v)
{
	p = pb_tag(p, field, PB_I64);
	for (int i = 0; i < 8; i++)
		*p++ = (char)(v >> (8 * i));
	return p;
}

static inline char *pb_double(char *p, unsigned field, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof v);
	return pb_fixed64(p, field, v);
}

/* Fields written one at a time into o (each checks for room). */
static inline void pb_put_uint(struct out *o, unsigned field, uint64_t v)
{
	out_need(o, 2 * PB_MAX);
	o->len = (size_t)(pb_uint(o->buf + o->len, field, v) - o->buf);
}

static inline void pb_put_double(struct out *o, unsigned field, double d)
{
	out_need(o, 2 * PB_MAX);
	o->len = (size_t)(pb_double(o->buf + o->len, field, d) - o->buf);
}

static inline void pb_put_fixed64(struct out *o, unsigned field, uint64_t v)
{
	out_need(o, 2 * PB_MAX);
	o->len = (size_t)(pb_fixed64(o->buf + o->len, field, v) - o->buf);
}

static inline void pb_put_bytes(struct out *o, unsigned field, const void *s, size_t n)
{
	out_need(o, 2 * PB_MAX + n);
	char *p = pb_varint(pb_tag(o->buf + o->len, field, PB_LEN), n);
	memcpy(p, s, n);
	o->len = (size_t)(p + n - o->buf);
}

static inline void pb_put_str(struct out *o, unsigned field, const char *s)
{
	pb_put_bytes(o, field, s, strlen(s));
}

/* Opens a nested message: its tag and one reserved length byte. Returns
 * where the length goes, for pb_close. */
static inline size_t pb_open(struct out *o, unsigned field)
{
	out_need(o, PB_MAX + 1);
	char *p = pb_tag(o->buf + o->len, field, PB_LEN);
	o->len = (size_t)(p - o->buf) + 1;
	return o->len - 1;
}

/* Sets the length of the message opened at `at` (its content runs to the
 * end of o), moving the content when the length takes more than a byte.
 * Returns the bytes it grew by. */
static inline size_t pb_close(struct out *o, size_t at)
{
	size_t n = o->len - at - 1;
	if (n < 0x80) {
		o->buf[at] = (char)n;
		return 0;
	}
	unsigned k = pb_varint_size(n);
	out_need(o, k);
	memmove(o->buf + at + k, o->buf + at + 1, n);
	pb_varint(o->buf + at, n);
	o->len += k - 1;
	return k - 1;
}

/* The length of the message whose length (now `size` bytes, holding the
 * old value) is at `at`, after content was appended at the end: rewritten,
 * the content moved when the length needs more bytes. Returns the growth. */
static inline size_t pb_relen(struct out *o, size_t at, unsigned size)
{
	size_t n = o->len - at - size;
	unsigned k = pb_varint_size(n);
	if (k > size) {
		out_need(o, k - size);
		memmove(o->buf + at + k, o->buf + at + size, n);
		o->len += k - size;
	}
	/* a varint of exactly `size` bytes keeps the layout (redundant
	 * continuation bytes are valid protobuf) */
	char *p = o->buf + at;
	unsigned w = k > size ? k : size;
	for (unsigned i = 0; i < w; i++) {
		p[i] = (char)((n & 0x7f) | (i + 1 < w ? 0x80 : 0));
		n >>= 7;
	}
	return k > size ? k - size : 0;
}

#endif
