// SPDX-License-Identifier: MIT
/* CRC-32C (Castagnoli polynomial, reflected): the .ctr header's checksum,
 * computed by the writer (enc.c) and the reader (dec_block.c). Bit by
 * bit: it runs once per file over a few KB. Calls chain:
 * ct_crc32c(ct_crc32c(0, a, n), b, m) is the CRC of a then b. */
#ifndef CT_CRC32C_H
#define CT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t ct_crc32c(uint32_t crc, const void *data, size_t n)
{
	const uint8_t *p = data;
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

#endif
