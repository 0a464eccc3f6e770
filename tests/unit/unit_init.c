// SPDX-License-Identifier: MIT
/* Stands in for libtrace/init.c in unit tests: the tests set `ct` up
 * themselves instead of reading the environment. */
#include "clock.h"
#include "trace.h"

struct ct_state ct;

void ct_init(void)
{
}

void ct_clock_anchor(uint64_t *rt, uint64_t *mono)
{
	*rt = ct_realtime();
	*mono = ct_now();
}
