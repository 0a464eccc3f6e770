// SPDX-License-Identifier: MIT
/* The NCCL join's id map (util/idmap.h) against a plain array: ids made
 * as the NCCL source makes them (a counter above a 4-bit code), some of
 * them IDMAP_DIRECT counters apart so that they want the same direct slot
 * and go to the overflow map, then leave and come back in either place.
 * Random puts, gets and deletes; every id checked now and then. */
#include "check.h"
#include "util/idmap.h"

#include <stdint.h>

#define KEYS 6000

/* Key j: 3 keys per direct slot for j < 3000 (counters c, c + DIRECT,
 * c + 2 DIRECT), then a run of plain counters; code in the low 4 bits. */
static uint64_t key_of(uint64_t j)
{
	uint64_t c = j < 3000 ? 5 + j / 3 + (j % 3) * (uint64_t)IDMAP_DIRECT : 7000 + j;
	return c << 4 | (1 + j % 8);
}

int main(void)
{
	static int64_t want[KEYS];
	struct idmap m = {.shift = 4};
	for (size_t j = 0; j < KEYS; j++)
		want[j] = -1;
	CHECK_EQ(idmap_get(&m, key_of(1)), -1);
	idmap_del(&m, key_of(1)); /* on an empty map */
	for (int round = 0; round < 400000; round++) {
		uint64_t j = check_rand() % KEYS;
		switch (check_rand() % 3) {
		case 0:
		case 1:
			want[j] = round;
			idmap_put(&m, key_of(j), round);
			break;
		case 2:
			want[j] = -1;
			idmap_del(&m, key_of(j));
			break;
		}
		CHECK_EQ(idmap_get(&m, key_of(j)), want[j]);
		if (round % 50000 == 0)
			for (uint64_t k = 0; k < KEYS; k++)
				CHECK_EQ(idmap_get(&m, key_of(k)), want[k]);
	}
	CHECK(m.n > 0); /* the overflow map was used */
	idmap_clear(&m);
	for (uint64_t k = 0; k < KEYS; k++)
		CHECK_EQ(idmap_get(&m, key_of(k)), -1);
	CHECK_EQ(m.n, 0);
	idmap_put(&m, key_of(4), 7); /* usable after a clear */
	CHECK_EQ(idmap_get(&m, key_of(4)), 7);
	idmap_free(&m);
	printf("tool_test_idmap: ok\n");
	return 0;
}
