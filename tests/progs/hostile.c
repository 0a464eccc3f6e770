// SPDX-License-Identifier: MIT
/* Hostile NVTX strings: quotes, backslashes, control characters, invalid
 * UTF-8, an empty name, NULL messages and 64 KiB messages. Each pushed name
 * is written to the truth log as hex so the test knows the exact bytes. */
#include "truth.h"

#include <nvtx3/nvToolsExt.h>
#include <string.h>

static void hexname(const char *s, size_t n)
{
	char *h = malloc(2 * n + 1);
	for (size_t i = 0; i < n; i++)
		sprintf(h + 2 * i, "%02x", (unsigned char)s[i]);
	h[2 * n] = 0;
	truth("{\"kind\":\"range\",\"hex\":\"%s\"}", h);
	free(h);
}

static void range(const char *s)
{
	nvtxRangePushA(s);
	nvtxRangePop();
	hexname(s, strlen(s));
}

int main(void)
{
	truth_open();
	range("quote \" inside");
	range("back\\slash \\\\ and \\u0041 literal");
	range("ctl \x01\x02\x1f tab\t nl\n cr\r del\x7f");
	range("esc \x1b[31mred\x1b[0m title \x1b]0;pwned\x07 c1 \xc2\x9b" "2J end");
	range("bad utf8 \xff\xfe \xc3\x28 \xc0\xaf \xed\xa0\x80 end");
	range("cut at end \xf0\x9f\x98");
	range("</script><script>alert(1)</script>");
	range("");
	range("json {\"a\": [1, 2]} ,\n]");
	size_t big = 64 * 1024;
	char *m = malloc(big + 1);
	for (size_t i = 0; i < big; i++)
		m[i] = (char)('a' + i % 26);
	m[big] = 0;
	range(m);
	m[100] = '"';
	m[200] = '\\';
	m[300] = '\x05';
	range(m);
	free(m);
	/* NULL messages must not crash the program. */
	nvtxRangePushA(NULL);
	nvtxRangePop();
	nvtxMarkA(NULL);
	nvtxRangePushEx(NULL);
	nvtxRangePop();
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = NULL;
	nvtxRangePushEx(&a);
	nvtxRangePop();
	truth("{\"kind\":\"nulls\",\"count\":3}");
	printf("hostile done\n");
	return 0;
}
