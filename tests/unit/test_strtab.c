// SPDX-License-Identifier: MIT
/* String interning (libtrace/format/strtab.c): the same bytes always give
 * the same id, ids are dense in order of first use, the table grows past
 * many thousands of strings, and the arena limit stops new strings unless
 * they are forced. */
#include "check.h"
#include "strtab.h"

#include <stdio.h>
#include <string.h>

#define FIRST 2

static uint32_t intern(struct ct_strtab *t, const char *s, size_t n, int force, int *is_new)
{
	return ct_strtab_intern(t, s, (uint32_t)n, force, is_new);
}

static void test_identity(void)
{
	struct ct_strtab t;
	CHECK_EQ(ct_strtab_init(&t, 1 << 20, FIRST), 0);
	int is_new;
	uint32_t a = intern(&t, "kernel", 6, 0, &is_new);
	CHECK_EQ(a, FIRST);
	CHECK_EQ(is_new, 1);
	CHECK_EQ(intern(&t, "kernel", 6, 0, &is_new), a);
	CHECK_EQ(is_new, 0);
	/* A prefix, an extension and the same bytes from another buffer. */
	uint32_t b = intern(&t, "kernel", 5, 0, &is_new);
	CHECK(b != a && is_new);
	uint32_t c = intern(&t, "kernel_", 7, 0, &is_new);
	CHECK(c != a && c != b && is_new);
	char copy[8];
	memcpy(copy, "kernel", 6);
	CHECK_EQ(intern(&t, copy, 6, 0, &is_new), a);
	CHECK_EQ(is_new, 0);
	/* Embedded NUL bytes are part of the string. */
	uint32_t z1 = intern(&t, "a\0b", 3, 0, &is_new);
	uint32_t z2 = intern(&t, "a\0c", 3, 0, &is_new);
	CHECK(z1 != z2);
	CHECK_EQ(intern(&t, "a\0b", 3, 0, &is_new), z1);
	/* The empty string is a string like any other. */
	uint32_t e = intern(&t, "", 0, 0, &is_new);
	CHECK(e && is_new);
	CHECK_EQ(intern(&t, "x", 0, 0, &is_new), e);
	CHECK_EQ(is_new, 0);
	CHECK_EQ(t.n, 6);
	CHECK_EQ(t.next_sid, FIRST + 6);
	ct_strtab_free(&t);
}

/* Tens of thousands of strings, many sharing long prefixes and many
 * differing only in the last bytes (hash tail handling). */
static void test_growth(void)
{
	struct ct_strtab t;
	CHECK_EQ(ct_strtab_init(&t, 64 << 20, FIRST), 0);
	enum { N = 50000 };
	char buf[128];
	int is_new;
	for (int i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof buf, "%s%d", (i & 1) ? "" : "void at::native::kernel<float>#", i);
		CHECK_EQ(intern(&t, buf, (size_t)n, 0, &is_new), FIRST + i);
		CHECK_EQ(is_new, 1);
	}
	CHECK_EQ(t.n, N);
	CHECK(t.cap >= 2 * N);
	for (int i = N - 1; i >= 0; i--) {
		int n = snprintf(buf, sizeof buf, "%s%d", (i & 1) ? "" : "void at::native::kernel<float>#", i);
		CHECK_EQ(intern(&t, buf, (size_t)n, 0, &is_new), FIRST + i);
		CHECK_EQ(is_new, 0);
	}
	/* Binary strings of every length 0..63 with one differing byte. */
	uint8_t bin[64];
	uint32_t ids[64][2];
	for (int len = 0; len < 64; len++) {
		memset(bin, 0xa5, sizeof bin);
		ids[len][0] = intern(&t, (char *)bin, (size_t)len, 0, &is_new);
		CHECK(ids[len][0] && is_new);
		if (len) {
			bin[len - 1] ^= 1;
			ids[len][1] = intern(&t, (char *)bin, (size_t)len, 0, &is_new);
			CHECK(ids[len][1] && is_new && ids[len][1] != ids[len][0]);
		}
	}
	for (int len = 1; len < 64; len++) {
		memset(bin, 0xa5, sizeof bin);
		CHECK_EQ(intern(&t, (char *)bin, (size_t)len, 0, &is_new), ids[len][0]);
		bin[len - 1] ^= 1;
		CHECK_EQ(intern(&t, (char *)bin, (size_t)len, 0, &is_new), ids[len][1]);
	}
	ct_strtab_free(&t);
}

static void test_limit(void)
{
	/* Each string costs its length plus 4 bytes of arena. */
	struct ct_strtab t;
	CHECK_EQ(ct_strtab_init(&t, 3 * (4 + 10), FIRST), 0);
	int is_new;
	CHECK_EQ(intern(&t, "aaaaaaaaaa", 10, 0, &is_new), FIRST);
	CHECK_EQ(intern(&t, "bbbbbbbbbb", 10, 0, &is_new), FIRST + 1);
	CHECK_EQ(intern(&t, "cccccccccc", 10, 0, &is_new), FIRST + 2);
	CHECK_EQ(t.alen, t.amax); /* exactly full */
	CHECK_EQ(intern(&t, "d", 1, 0, &is_new), 0);
	CHECK_EQ(is_new, 0);
	CHECK_EQ(intern(&t, "", 0, 0, &is_new), 0);
	/* Known strings are still found when full. */
	CHECK_EQ(intern(&t, "bbbbbbbbbb", 10, 0, &is_new), FIRST + 1);
	CHECK_EQ(is_new, 0);
	/* A refused string did not use an id: forced ones continue densely. */
	CHECK_EQ(intern(&t, "d", 1, 1, &is_new), FIRST + 3);
	CHECK_EQ(is_new, 1);
	CHECK_EQ(intern(&t, "d", 1, 0, &is_new), FIRST + 3);
	CHECK(t.alen > t.amax);
	char big[5000];
	memset(big, 'x', sizeof big);
	CHECK_EQ(intern(&t, big, sizeof big, 1, &is_new), FIRST + 4);
	CHECK_EQ(intern(&t, big, sizeof big, 0, &is_new), FIRST + 4);
	CHECK_EQ(intern(&t, big, sizeof big - 1, 0, &is_new), 0);
	ct_strtab_free(&t);

	/* A zero limit refuses everything that is not forced. */
	CHECK_EQ(ct_strtab_init(&t, 0, FIRST), 0);
	CHECK_EQ(intern(&t, "a", 1, 0, &is_new), 0);
	CHECK_EQ(intern(&t, "a", 1, 1, &is_new), FIRST);
	ct_strtab_free(&t);
}

static void test_hash(void)
{
	/* Never 0 (0 marks an empty slot), and sensitive to length and to
	 * every byte position. */
	uint8_t buf[40] = {0};
	uint64_t seen[41];
	for (size_t n = 0; n <= sizeof buf; n++) {
		seen[n] = ct_hash_bytes(buf, n);
		CHECK(seen[n] != 0);
		for (size_t m = 0; m < n; m++)
			CHECK(seen[m] != seen[n]);
	}
	uint64_t h0 = ct_hash_bytes(buf, sizeof buf);
	for (size_t i = 0; i < sizeof buf; i++) {
		buf[i] = 1;
		CHECK(ct_hash_bytes(buf, sizeof buf) != h0);
		buf[i] = 0;
	}
}

int main(void)
{
	test_identity();
	test_growth();
	test_limit();
	test_hash();
	return 0;
}
