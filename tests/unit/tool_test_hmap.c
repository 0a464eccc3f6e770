// SPDX-License-Identifier: MIT
/* The tools' hash map (util/hmap.h) against a plain array: random puts,
 * gets and deletes over a small key range, so that probe runs collide,
 * wrap around the end of the table and lose entries in their middle. */
#include "check.h"
#include "util/hmap.h"

#include <stdint.h>

#define KEYS 5000

int main(void)
{
	static void *want[KEYS + 1];
	struct hmap m = {0};
	size_t n = 0;
	CHECK(hmap_get(&m, 1) == NULL);
	hmap_del(&m, 1); /* on an empty map */
	for (int round = 0; round < 400000; round++) {
		uint64_t k = 1 + check_rand() % KEYS;
		switch (check_rand() % 3) {
		case 0:
		case 1: /* more puts than deletes: the table grows */
			n += !want[k];
			want[k] = (void *)(uintptr_t)(round + 1);
			hmap_put(&m, k, want[k]);
			break;
		case 2:
			n -= !!want[k];
			want[k] = NULL;
			hmap_del(&m, k);
			break;
		}
		CHECK(hmap_get(&m, k) == want[k]);
		if (round % 50000 == 0) {
			for (uint64_t j = 1; j <= KEYS; j++)
				CHECK(hmap_get(&m, j) == want[j]);
			CHECK_EQ(m.n, n);
		}
	}
	for (uint64_t j = 1; j <= KEYS; j++) {
		CHECK(hmap_get(&m, j) == want[j]);
		hmap_del(&m, j);
		CHECK(hmap_get(&m, j) == NULL);
	}
	CHECK_EQ(m.n, 0);
	hmap_free(&m);
	printf("tool_test_hmap: ok\n");
	return 0;
}
