// SPDX-License-Identifier: MIT
/* Fuzz target: NCCL_DEBUG log text, line by line, through the parser the
 * nccl_* reports use (tools/nccl_log.c). Built for libFuzzer by
 * `make fuzz-nccl-log`; linked with replay.c it replays the corpus with the
 * other targets' limits (make test). */
#include "read/nccl_log.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size;
	nccl_log_sniff(p, size);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		struct nccl_log_line l;
		enum nccl_line k = nccl_log_parse(p, len, &l);
		/* What came out must be sane for the reports. */
		if (k == NL_COLL &&
		    (l.nranks <= 0 || !l.func[0] || strlen(l.host) >= sizeof l.host))
			__builtin_trap();
		if (k == NL_RANK && (l.rank < 0 || l.rank >= l.nranks))
			__builtin_trap();
		p += len + 1;
	}
	return 0;
}
