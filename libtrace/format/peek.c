// SPDX-License-Identifier: MIT
#include "peek.h"
#include "varint.h"
#include "cuptrace/format.h"

#include <string.h>

int ct_header_peek(const uint8_t *buf, size_t n, char *host, size_t hostlen, uint64_t *pid)
{
	if (n < 16 || memcmp(buf, CT_MAGIC, 8) || !hostlen)
		return -1;
	uint32_t hlen;
	memcpy(&hlen, buf + 12, 4);
	const uint8_t *p = buf + 16, *end = buf + n;
	if (hlen < (size_t)(end - p))
		end = p + hlen;
	int got = 0;
	while (p < end && got != 3) {
		uint64_t tag, len, v;
		if (ct_get_varint(&p, end, &tag) || ct_get_varint(&p, end, &len) ||
		    len > (uint64_t)(end - p))
			return -1;
		const uint8_t *val = p;
		p += len;
		if (tag == CT_H_HOST && len < hostlen) {
			memcpy(host, val, len);
			host[len] = 0;
			got |= 1;
		} else if (tag == CT_H_PID && !ct_get_varint(&val, p, &v)) {
			*pid = v;
			got |= 2;
		}
	}
	return got == 3 ? 0 : -1;
}
