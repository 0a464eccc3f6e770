/* String handles for the names NCCL passes by pointer (function,
 * datatype, algorithm, protocol). NCCL hands out pointers to its own
 * constant strings, so a handle is found by pointer in a small lock-free
 * table; the text is compared too, in case a pointer is ever reused. */
#ifndef CT_NCCL_STR_H
#define CT_NCCL_STR_H

#include <stdint.h>

/* The handle of s (0 for NULL or when the table is full). */
uint64_t ct_nccl_str(const char *s);

#endif
