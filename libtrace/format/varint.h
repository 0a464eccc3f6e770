// SPDX-License-Identifier: MIT
/* LEB128 varints and zigzag, shared by encoder and decoder. */
#ifndef CT_VARINT_H
#define CT_VARINT_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t ct_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t ct_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Writes at most 10 bytes; returns the new end. */
static inline uint8_t *ct_put_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Reads a varint from [*pp, end). Returns 0 on success, -1 when the input
 * ends early or the value is longer than 10 bytes. */
static inline int ct_get_varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	/* Most fields are small: one byte, no loop. */
	if (__builtin_expect(p < end && !(*p & 0x80), 1)) {
		*out = *p;
		*pp = p + 1;
		return 0;
	}
	uint64_t v = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		if (p >= end)
			return -1;
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			*out = v;
			return 0;
		}
	}
	return -1;
}

#endif
