// SPDX-License-Identifier: MIT
/* libFuzzer target: any bytes as the TLV part of a file header. */
#include "dec.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
