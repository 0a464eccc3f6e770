// SPDX-License-Identifier: MIT
#include "util/term_escape.h"
#include "util/json_escape.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>

char *term_escape(const char *s, size_t n, size_t *cols)
{
	const unsigned char *p = (const unsigned char *)s;
	char *d = xmalloc(6 * n + 1); /* "\u009f" is the longest: 6 bytes for 2 */
	size_t o = 0, w = 0;
	for (size_t i = 0; i < n; w++) {
		unsigned c = p[i];
		if (c >= 0x20 && c < 0x7f) {
			d[o++] = (char)c, i++;
			continue;
		}
		size_t k = c >= 0x80 ? utf8_seq(p + i, n - i) : 0;
		if (k == 2 && c == 0xc2 && p[i + 1] < 0xa0) { /* C1 control */
			o += (size_t)sprintf(d + o, "\\u%04x", p[i + 1]);
			w += 5, i += 2;
		} else if (k) {
			for (size_t j = 0; j < k; j++)
				d[o++] = (char)p[i++];
		} else if (c == '\n' || c == '\r' || c == '\t') {
			d[o++] = '\\', d[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
			w++, i++;
		} else {
			o += (size_t)sprintf(d + o, "\\x%02x", c);
			w += 3, i++;
		}
	}
	d[o] = 0;
	if (cols)
		*cols = w;
	return d;
}
