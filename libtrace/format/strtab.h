// SPDX-License-Identifier: MIT
/* String interning for the writer: text -> file string id. Bounded: once
 * the arena reaches its limit, new strings are not interned (callers store
 * them inline) unless forced. */
#ifndef CT_STRTAB_H
#define CT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct ct_strtab {
	uint64_t *hash; /* 0 = empty slot */
	uint32_t *sid;
	uint32_t *off; /* into arena: u32 length then bytes */
	size_t cap, n;
	char *arena;
	size_t alen, acap, amax;
	uint32_t next_sid;
};

int ct_strtab_init(struct ct_strtab *t, size_t arena_max, uint32_t first_sid);
void ct_strtab_free(struct ct_strtab *t);

/* Returns the id of s, interning it if new (then *is_new = 1). Returns 0
 * when s is new and the table is full and force is 0, or on allocation
 * failure. */
uint32_t ct_strtab_intern(struct ct_strtab *t, const char *s, uint32_t len, int force, int *is_new);

/* The id of s when it is interned, else 0 (nothing changes). */
uint32_t ct_strtab_find(const struct ct_strtab *t, const char *s, uint32_t len);

uint64_t ct_hash_bytes(const void *p, size_t n);

#endif
