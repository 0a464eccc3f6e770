/* JSON string bodies: quotes, backslashes and control characters escaped,
 * invalid UTF-8 replaced by U+FFFD, so that no text from a traced program
 * can make a document invalid. */
#include "util/json_escape.h"

#include <stdlib.h>
#include <string.h>

size_t utf8_seq(const unsigned char *p, size_t n)
{
	unsigned c = p[0];
	if (c < 0x80)
		return 1;
	size_t k;
	unsigned min;
	if ((c & 0xe0) == 0xc0)
		k = 2, min = 0x80, c &= 0x1f;
	else if ((c & 0xf0) == 0xe0)
		k = 3, min = 0x800, c &= 0x0f;
	else if ((c & 0xf8) == 0xf0)
		k = 4, min = 0x10000, c &= 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
		return 0;
	return k;
}

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
				memcpy(d + o, "\xef\xbf\xbd", 3);
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
	char *d = malloc(n * 6 + 1);
	if (!d)
		return NULL;
	*outlen = json_escape_into(d, s, n);
	d[*outlen] = 0;
	return d;
}
