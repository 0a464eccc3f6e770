// SPDX-License-Identifier: MIT
/* libFuzzer target: any bytes as the item stream inside blocks. Mutated
 * zstd frames almost never pass their checksum, so fuzz_file rarely gets
 * past decompression; here the input is split into blocks at each "BLK\n",
 * each part is compressed into a valid block of a valid file, and the file
 * is read as a tool reads it. This reaches the item decoder: string table,
 * thread sections, drops, footer, every event kind. */
#include "crc32c.h"
#include "varint.h"
#include "read_all.h"

#include <stdlib.h>
#include <zstd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put(uint8_t **p, const void *src, size_t n)
{
	memcpy(*p, src, n);
	*p += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static ZSTD_CCtx *cctx;
	if (!cctx) {
		cctx = ZSTD_createCCtx();
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	}
	/* Every part may become a block: room for each frame's bound. */
	size_t cap = 64 + 2 * ZSTD_compressBound(size) + 64 * (size / 4 + 1);
	uint8_t *file = malloc(cap), *p = file;
	if (!file)
		return 0;
	uint8_t tlv[32], *t = tlv;
	t = ct_put_varint(t, CT_H_PID);
	t = ct_put_varint(t, 1);
	t = ct_put_varint(t, 7);
	t = ct_put_varint(t, CT_H_CRC);
	t = ct_put_varint(t, 4);
	uint16_t major = CT_FORMAT_MAJOR, minor = CT_FORMAT_MINOR;
	uint32_t hlen = (uint32_t)(t + 4 - tlv);
	put(&p, CT_MAGIC, 8);
	put(&p, &major, 2);
	put(&p, &minor, 2);
	put(&p, &hlen, 4);
	put(&p, tlv, (size_t)(t - tlv));
	uint32_t crc = ct_crc32c(0, file, (size_t)(p - file));
	for (int i = 0; i < 4; i++)
		*p++ = (uint8_t)(crc >> 8 * i);
	const uint8_t *d = data, *end = data + size;
	for (;;) {
		const uint8_t *m = memmem(d, (size_t)(end - d), "BLK\n", 4);
		const uint8_t *stop = m ? m : end;
		size_t n = (size_t)(stop - d);
		size_t z = ZSTD_compress2(cctx, p + 12, cap - (size_t)(p - file) - 12, d, n);
		if (ZSTD_isError(z))
			break;
		uint32_t bh[3] = {CT_BLOCK_MAGIC, (uint32_t)z, (uint32_t)n};
		memcpy(p, bh, 12);
		p += 12 + z;
		if (!m)
			break;
		d = m + 4;
	}
	fuzz_read_all(file, (size_t)(p - file));
	free(file);
	return 0;
}
