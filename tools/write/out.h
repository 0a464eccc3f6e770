// SPDX-License-Identifier: MIT
/* Buffered output for the converters: plain file, stdout or gzip, with
 * the fast number and JSON-string formatting the hot loop needs. */
#ifndef CT_OUT_H
#define CT_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "util/json_escape.h"

struct sink;

struct out {
	char *buf;
	size_t len, cap;
	int fd;
	void *gz; /* z_stream when compressing */
	unsigned char *zbuf;
	int err;
	uint64_t written; /* bytes handed to the file (before compression) */
	struct sink *sink; /* chunks go to a shared sink (see sink.h) */
	uint64_t key;	   /* the sink's piece they belong to (SINK_KEY) */
};

/* path "-" is stdout; a name ending in .gz is compressed. 0 or -1 (errno). */
int out_open(struct out *o, const char *path);
/* In-memory only: grows, never flushed to a file. */
void out_init_mem(struct out *o);
/* Feeds a shared sink: the buffer grows within one event and is handed to
 * the sink only at out_chunk() (between events), so every chunk holds whole
 * events. */
void out_init_sink(struct out *o, struct sink *s);
/* Hands the buffer to the sink (now). */
void out_hand_over(struct out *o);
/* Hands the buffer to the sink once it holds at least `threshold` bytes. */
static inline void out_chunk(struct out *o, size_t threshold)
{
	if (o->sink && o->len >= threshold)
		out_hand_over(o);
}
int out_close(struct out *o);
void out_flush(struct out *o);

static inline void out_need(struct out *o, size_t n)
{
	if (o->len + n > o->cap) {
		void out_grow(struct out *, size_t);
		out_grow(o, n);
	}
}

static inline void out_mem(struct out *o, const void *p, size_t n)
{
	out_need(o, n);
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

/* String literals only (the "" "" makes anything else a compile error). */
#define out_lit(o, s) out_mem((o), "" s "", sizeof(s) - 1)

static inline void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static inline void out_ch(struct out *o, char c)
{
	out_need(o, 1);
	o->buf[o->len++] = c;
}

/* "00" "01" ... "99" */
extern const char out_digits2[201];

/* Writes v in decimal at p (20 bytes at most); returns the end. Digits go
 * straight to their place, two at a time: writing them to a scratch
 * buffer and copying that would stall on store-to-load forwarding. */
static inline char *out_put_u64(char *p, uint64_t v)
{
	unsigned n = 1;
	for (uint64_t x = v;; x /= 10000, n += 4) {
		if (x < 10)
			break;
		if (x < 100) {
			n += 1;
			break;
		}
		if (x < 1000) {
			n += 2;
			break;
		}
		if (x < 10000) {
			n += 3;
			break;
		}
	}
	char *q = p + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		memcpy(q, out_digits2 + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(q - 2, out_digits2 + 2 * v, 2);
	else
		q[-1] = (char)('0' + v);
	return p + n;
}

void out_u64(struct out *o, uint64_t v);
void out_i64(struct out *o, int64_t v);
/* ns as microseconds with three decimals: 1234567 -> 1234.567 */
void out_us(struct out *o, int64_t ns);
void out_double(struct out *o, double v);
/* A JSON string literal with quotes; invalid UTF-8 becomes U+FFFD. */
void out_json_str(struct out *o, const char *s, size_t n);

#endif
