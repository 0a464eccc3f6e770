// SPDX-License-Identifier: MIT
/* Aggregates by name for the reports (launch, nvtx_gpu_proj_sum,
 * cuda_gpu_mem_size_sum): one zeroed record of a report's own type per
 * distinct name, found by the name's bytes. */
#ifndef CT_NAMED_H
#define CT_NAMED_H

#include "util/hmap.h"

#include <stddef.h>

struct named {
	size_t size;  /* bytes of a record */
	void **v;     /* records, in order of first sight */
	char **keys;  /* their names, NUL-terminated */
	size_t *next; /* the next record whose name hashes alike, plus 1 */
	size_t n, cap;
	struct hmap index; /* name's hash -> its first record, plus 1 */
};

void named_init(struct named *m, size_t size);
/* The record of name s (len bytes), made zeroed at first sight. */
void *named_get(struct named *m, const char *s, size_t len);
void named_free(struct named *m); /* the records and names */
/* Folds src into dst (parts of the inputs, in order): each of src's
 * records, in order of first sight, into dst's of its name by fn (which
 * frees what the record holds); then frees src. */
void named_merge(struct named *dst, struct named *src, void (*fn)(void *into, void *from));
/* m as bytes for another process (util/pack.h): each record's name and
 * bytes, then what fn adds (what the record points to: its quants); back
 * into an empty m, fn reading that again (the record's pointers are the
 * other process's until fn makes them anew). */
struct pack;
void named_pack(const struct named *m, struct pack *b, void (*fn)(void *rec, struct pack *b));
void named_unpack(struct named *m, struct pack *b, void (*fn)(void *rec, struct pack *b));

#endif
