// SPDX-License-Identifier: MIT
#include "stats/torch_dims.h"

static size_t put(char *buf, size_t cap, size_t o, const char *s)
{
	while (*s && o + 1 < cap)
		buf[o++] = *s++;
	return o;
}

size_t torch_dims_text(const char *dims, size_t len, char *buf, size_t cap)
{
	size_t o = 0;
	if (!cap)
		return 0;
	if (!dims || !len) { /* no inputs (or their shapes not recorded) */
		o = put(buf, cap, o, "[]");
		buf[o] = 0;
		return o;
	}
	o = put(buf, cap, o, "[[");
	for (size_t i = 0; i < len; i++) {
		char c = dims[i];
		if (c >= '0' && c <= '9') {
			char d[2] = {c, 0};
			o = put(buf, cap, o, d);
		} else if (c == ',') {
			o = put(buf, cap, o, ", ");
		} else if (c == ';') {
			o = put(buf, cap, o, "], [");
		}
	}
	o = put(buf, cap, o, "]]");
	buf[o] = 0;
	return o;
}
