// SPDX-License-Identifier: MIT
/* JSON string bodies: quotes, backslashes and control characters escaped,
 * invalid UTF-8 replaced by U+FFFD (util/utf8.h's rule, as every output
 * does), so that no text from a traced program can make a document
 * invalid. */
#include "util/json_escape.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

size_t json_escape_into(char *d, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			d[o++] = (char)c;
			i++;
			continue;
		}
		if (c >= 0x80) {
			size_t k = utf8_seq(p + i, n - i);
			if (k) {
				memcpy(d + o, p + i, k);
				o += k;
				i += k;
			} else {
				memcpy(d + o, UTF8_REPLACEMENT, 3);
				o += 3;
				i++;
			}
			continue;
		}
		d[o++] = '\\';
		switch (c) {
		case '"': d[o++] = '"'; break;
		case '\\': d[o++] = '\\'; break;
		case '\n': d[o++] = 'n'; break;
		case '\t': d[o++] = 't'; break;
		case '\r': d[o++] = 'r'; break;
		default:
			d[o++] = 'u', d[o++] = '0', d[o++] = '0';
			d[o++] = hex[c >> 4], d[o++] = hex[c & 15];
		}
		i++;
	}
	return o;
}

char *json_escape(const char *s, size_t n, size_t *outlen)
{
	char *d = xmalloc(n * 6 + 1);
	*outlen = json_escape_into(d, s, n);
	d[*outlen] = 0;
	return d;
}
