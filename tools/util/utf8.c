// SPDX-License-Identifier: MIT
/* Invalid UTF-8 replaced by U+FFFD (utf8.h). */
#include "util/utf8.h"
#include "util/xalloc.h"

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

size_t utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	for (;;) {
		/* ASCII, the common case, eight bytes at a time */
		while (i + 8 <= n) {
			unsigned long long w;
			memcpy(&w, p + i, 8);
			if (w & 0x8080808080808080ull)
				break;
			i += 8;
		}
		while (i < n && p[i] < 0x80)
			i++;
		if (i == n)
			return n;
		size_t k = utf8_seq(p + i, n - i);
		if (!k)
			return i;
		i += k;
	}
}

size_t utf8_fix_into(char *d, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t v = utf8_valid(s + i, n - i);
		memcpy(d + o, p + i, v);
		o += v, i += v;
		if (i < n) { /* p[i] begins no valid sequence */
			memcpy(d + o, UTF8_REPLACEMENT, 3);
			o += 3, i++;
		}
	}
	return o;
}

const char *utf8_clean(const char *s, size_t *n, char **tmp)
{
	*tmp = NULL;
	size_t v = utf8_valid(s, *n);
	if (v == *n)
		return s;
	char *d = xrealloc(NULL, v + 3 * (*n - v) + 1);
	memcpy(d, s, v);
	*n = v + utf8_fix_into(d + v, s + v, *n - v);
	d[*n] = 0;
	*tmp = d;
	return d;
}
