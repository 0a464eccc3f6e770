// SPDX-License-Identifier: MIT
/* Bytes written and read back in the same order: the parts of reports
 * sent between the ranks of an MPI job (util/mpirt.h). Values are in the
 * machine's own layout (the ranks of a job run one build on one kind of
 * machine). Reading past the end gives zeros and sets bad. */
#ifndef CT_PACK_H
#define CT_PACK_H

#include <stddef.h>
#include <stdint.h>

struct pack {
	unsigned char *b;
	size_t n, cap, at; /* written; allocated; read so far */
	int bad;
};

void pk_bytes(struct pack *p, const void *v, size_t n);
void pk_u64(struct pack *p, uint64_t v);
void pk_str(struct pack *p, const char *s); /* NULL comes back as NULL */
void up_bytes(struct pack *p, void *v, size_t n);
uint64_t up_u64(struct pack *p);
char *up_str(struct pack *p); /* malloc'd */
void pk_free(struct pack *p);
/* An array of n plain records of size bytes; back: its count in *n, the
 * records malloc'd (NULL when none). */
void pk_array(struct pack *p, const void *v, size_t n, size_t size);
void *up_array(struct pack *p, size_t *n, size_t size);

/* A value of any plain type (no pointers in it). */
#define PK(p, v) pk_bytes((p), &(v), sizeof(v))
#define UP(p, v) up_bytes((p), &(v), sizeof(v))

#endif
