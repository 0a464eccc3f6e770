// SPDX-License-Identifier: MIT
/* The in-memory record that sources write into the rings and the encoder
 * reads back. Native layout, never written to disk. */
#ifndef CT_REC_H
#define CT_REC_H

#include "fields.h" /* F_*: the fields' positions in f[] */

#include <stdint.h>

struct ct_rec {
	uint32_t size; /* whole record in bytes, a multiple of 8 */
	uint16_t kind;
	uint16_t reserved;
	uint64_t f[]; /* schema nfields values; a STR field holds its byte length */
	/* then the bytes of the STR fields, concatenated in field order */
};

static inline uint32_t ct_rec_size(unsigned nfields, uint32_t strbytes)
{
	return (uint32_t)((8 + 8 * nfields + strbytes + 7) & ~7u);
}

#endif
