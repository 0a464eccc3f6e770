// SPDX-License-Identifier: MIT
/* libFuzzer target: any bytes as the TLV part of a file header, read by
 * the tools' decoder and by the library's peek at who wrote a file. */
#include "dec.h"
#include "peek.h"
#include "cuptrace/format.h"

#include <stdlib.h>
#include <string.h>

/* The library reads at most this much of a file it finds in its way. */
#define PEEK_MAX 512

static void peek(const uint8_t *data, size_t size)
{
	uint8_t buf[PEEK_MAX];
	size_t n = 16 + (size < PEEK_MAX - 16 ? size : PEEK_MAX - 16);
	uint32_t hlen = (uint32_t)size;
	memcpy(buf, CT_MAGIC, 8);
	memset(buf + 8, 0, 4);
	memcpy(buf + 12, &hlen, 4);
	memcpy(buf + 16, data, n - 16);
	char host[64];
	uint64_t pid;
	if (ct_header_peek(buf, n, host, sizeof host, &pid) == 0 && strlen(host) >= sizeof host)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	peek(data, size);
	struct ct_header h;
	char err[128] = "";
	if (ct_header_parse(&h, data, size, err, sizeof err) == 0) {
		/* Strings are never NULL and are NUL-terminated. */
		size_t n = strlen(h.version) + strlen(h.host) + strlen(h.config) +
			   strlen(h.rank_source) + strlen(h.job_id);
		if (h.cmdline_len && h.cmdline[h.cmdline_len] != 0)
			__builtin_trap();
		if (n > size)
			__builtin_trap();
		ct_header_free(&h);
	} else if (!err[0]) {
		__builtin_trap();
	}
	return 0;
}
