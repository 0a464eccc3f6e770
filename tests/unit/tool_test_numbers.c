// SPDX-License-Identifier: MIT
/* Number writing of the converters (out.h, chrome_int.h, chrome_fmt.c) against printf:
 * every digit count and its boundaries, microseconds with three decimals,
 * and the cached-prefix time format of GPU events across prefix changes. */
#include "write/chrome/chrome_int.h"
#include "check.h"

#include <inttypes.h>

static void check_u64(uint64_t v)
{
	char want[32], got[32 + NUM_MAX];
	int n = snprintf(want, sizeof want, "%" PRIu64, v);
	memset(got, 'x', sizeof got);
	char *e = out_put_u64(got, v);
	CHECK_MEM(got, e - got, want, n);
	CHECK(*e == 'x'); /* nothing written past the end */

	struct out o;
	out_init_mem(&o);
	out_u64(&o, v);
	out_i64(&o, -(int64_t)(v >> 1));
	char both[64];
	int m = snprintf(both, sizeof both, "%" PRIu64 "%" PRId64, v, -(int64_t)(v >> 1));
	CHECK_MEM(o.buf, o.len, both, m);
	free(o.buf);
}

static void check_us(int64_t ns)
{
	char want[48], got[48];
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	int n = snprintf(want, sizeof want, "%s%" PRIu64 ".%03u", ns < 0 ? "-" : "", a / 1000,
			 (unsigned)(a % 1000));
	char *e = put_us(got, ns);
	CHECK_MEM(got, e - got, want, n);
	struct out o;
	out_init_mem(&o);
	out_us(&o, ns);
	CHECK_MEM(o.buf, o.len, want, n);
	free(o.buf);
}

int main(void)
{
	uint64_t p10 = 1;
	check_u64(0);
	for (int d = 1; d <= 19; d++) {
		check_u64(p10 - 1), check_u64(p10), check_u64(p10 + 1);
		check_u64(p10 * 5 + 37);
		p10 *= 10;
	}
	check_u64(p10 - 1), check_u64(p10), check_u64(UINT64_MAX);
	for (uint64_t x = 1; x < UINT64_MAX / 3; x = x * 3 + 1)
		check_u64(x);

	int64_t us_cases[] = {0, 1, 999, 1000, 1001, 9999999, 10000000, 123456789012, -1, -1500,
			      INT64_MAX};
	for (size_t i = 0; i < sizeof us_cases / sizeof *us_cases; i++)
		check_us(us_cases[i]);

	/* GPU times: the digits above the last four of the microseconds are
	 * cached per file; crossing that boundary, going back, small times
	 * and a file offset must all read as plain formatting. */
	struct inputs in;
	memset(&in, 0, sizeof in);
	struct tfile t;
	memset(&t, 0, sizeof t);
	struct chrome c;
	memset(&c, 0, sizeof c);
	c.t = &t;
	c.cf = chrome_cfile_new();
	int64_t offs[] = {0, 5000, -2000000};
	uint64_t ts[] = {0,	     9999999,	   10000000,	   10000001,	 19999999999,
			 20000000000, 19999999999, 1234567891234, 1234567901234, 99999999999999,
			 100000000000000, 3, 1234567891234};
	for (size_t k = 0; k < sizeof offs / sizeof *offs; k++) {
		t.off_ns = offs[k];
		for (size_t i = 0; i < sizeof ts / sizeof *ts; i++) {
			char want[48], got[48];
			char *e = put_us(want, (int64_t)ts[i] + offs[k]);
			uint32_t n = chrome_fmt_ts(&c, got, ts[i]);
			CHECK_MEM(got, n, want, e - want);
		}
	}
	/* only the time caches were used */
	free(c.cf);
	printf("tool_test_numbers: ok\n");
	return 0;
}
