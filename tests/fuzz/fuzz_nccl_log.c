// SPDX-License-Identifier: MIT
/* Fuzz target: NCCL_DEBUG log text, line by line, through the parser the
 * nccl_* reports use (tools/read/nccl_log.c) and the step marks of
 * --steps (the default pattern, and one with groups). Built for libFuzzer by
 * `make fuzz-nccl-log`; linked with replay.c it replays the corpus with the
 * other targets' limits (make test). */
#include "read/nccl_log.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A step mark's number: none (-1) or what a decimal group can hold. */
static void step_mark(const struct nccl_log_steps *s, const char *p, size_t len)
{
	int64_t num = 0;
	int m = nccl_log_step_mark(s, p, len, &num);
	if ((m != 0 && m != 1) || num < -1 || num > 999999999999999999LL || (!m && num != -1))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nccl_log_steps def, groups;
	static int ready;
	if (!ready) {
		if (nccl_log_steps_init(&def, NULL, NULL, 0) ||
		    nccl_log_steps_init(&groups, "(epoch|step)[^0-9]*([0-9]*)|(NCCL INFO [A-Za-z]+:)",
		                        NULL, 0))
			__builtin_trap();
		ready = 1;
	}
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
		step_mark(&def, p, len);
		step_mark(&groups, p, len);
		p += len + 1;
	}
	return 0;
}
