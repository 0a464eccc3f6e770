// SPDX-License-Identifier: MIT
/* util/utf8.h, the one rule by which every output makes the traced
 * program's text valid UTF-8: known cases, then random byte strings whose
 * fixed text must be what the JSON writer (json_escape_into) makes of them
 * (bytes it does not escape), so that a name reads the same in the JSON
 * and the other outputs. Valid text is handed back as it is. */
#include "check.h"
#include "util/json_escape.h"
#include "util/utf8.h"

#define R UTF8_REPLACEMENT

static void fixes(const char *in, size_t n, const char *want, size_t wn)
{
	char d[256];
	size_t k = utf8_fix_into(d, in, n);
	CHECK_MEM(d, k, want, wn);
	size_t m = n;
	char *tmp;
	const char *s = utf8_clean(in, &m, &tmp);
	CHECK_MEM(s, m, want, wn);
	CHECK((tmp != NULL) == (wn != n || memcmp(in, want, n)));
	CHECK(!tmp || s[m] == 0); /* a copy ends in NUL */
	free(tmp);
}

/* literals: their lengths without the final NUL */
#define FIXES(in, want) fixes(in, sizeof in - 1, want, sizeof want - 1)

int main(void)
{
	/* valid text, ASCII beyond the 8-byte steps and every sequence length */
	const char *ok = "abcdefghijklmnop \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 end";
	CHECK_EQ(utf8_valid(ok, strlen(ok)), strlen(ok));
	size_t n = strlen(ok);
	char *tmp = (char *)1;
	CHECK(utf8_clean(ok, &n, &tmp) == ok && !tmp && n == strlen(ok));
	CHECK_EQ(utf8_valid("", 0), 0);
	CHECK_EQ(utf8_valid("abcdefgh\xff", 9), 8);
	CHECK_EQ(utf8_valid("abcdefghijk\xc3", 12), 11); /* cut at the end */

	FIXES("bad \xff\xfe", "bad " R R);
	FIXES("\xc3\x28", R "(");                   /* lead without its continuation */
	FIXES("\xc0\xaf", R R);                     /* overlong */
	FIXES("\xed\xa0\x80", R R R);               /* a surrogate */
	FIXES("\xf4\x90\x80\x80", R R R R);         /* past U+10FFFF */
	FIXES("cut \xf0\x9f\x98", "cut " R R R);    /* a sequence cut short */
	FIXES("\x80 \xc3\xa9", R " \xc3\xa9");      /* a lone continuation */
	FIXES("nul\0in", "nul\0in");                /* NUL is valid UTF-8 */

	/* random strings of bytes the JSON does not escape: the same text */
	static const unsigned char pick[] = {'a', 'Z', ' ', 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2,
					     0xc3, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff};
	for (int round = 0; round < 200000; round++) {
		unsigned char in[24];
		size_t len = check_rand() % sizeof in;
		for (size_t i = 0; i < len; i++)
			in[i] = pick[check_rand() % sizeof pick];
		char a[6 * sizeof in], b[3 * sizeof in];
		size_t la = json_escape_into(a, (const char *)in, len);
		size_t lb = utf8_fix_into(b, (const char *)in, len);
		CHECK_MEM(a, la, b, lb);
		size_t v = utf8_valid((const char *)in, len);
		CHECK((v == len) == (lb == len && !memcmp(b, in, len)));
	}
	return 0;
}
