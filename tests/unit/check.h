// SPDX-License-Identifier: MIT
/* Minimal assertions for the C unit tests: a failed check prints where and
 * exits 1. */
#ifndef CT_CHECK_H
#define CT_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

#define CHECK_EQ(a, b)                                                               \
	do {                                                                         \
		long long _a = (long long)(a), _b = (long long)(b);                  \
		if (_a != _b) {                                                      \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, \
				__LINE__, #a, #b, _a, _b);                           \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

/* Byte strings: a (length la) equals b (length lb). */
#define CHECK_MEM(a, la, b, lb)                                                      \
	do {                                                                         \
		size_t _la = (size_t)(la), _lb = (size_t)(lb);                       \
		if (_la != _lb || (_la && memcmp((a), (b), _la))) {                  \
			fprintf(stderr, "%s:%d: %s (%zu bytes) != %s (%zu bytes)\n",  \
				__FILE__, __LINE__, #a, _la, #b, _lb);               \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

#define CHECK_STR(a, b)                                                              \
	do {                                                                         \
		const char *_a = (a), *_b = (b);                                     \
		if (strcmp(_a, _b)) {                                                \
			fprintf(stderr, "%s:%d: %s == %s failed:\n  \"%s\"\n  \"%s\"\n", \
				__FILE__, __LINE__, #a, #b, _a, _b);                 \
			exit(1);                                                     \
		}                                                                    \
	} while (0)

/* A fixed xorshift sequence for the randomised tests (the same run every
 * time, one sequence per test program). */
static uint64_t check_rng = 88172645463325252ull;

static inline uint64_t check_rand(void)
{
	check_rng ^= check_rng << 13;
	check_rng ^= check_rng >> 7;
	check_rng ^= check_rng << 17;
	return check_rng;
}

#endif
