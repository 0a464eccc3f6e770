// SPDX-License-Identifier: MIT
/* String handles for the names NCCL passes by pointer (function,
 * datatype, algorithm, protocol). These come from NCCL's *ToString()
 * functions, which return string literals: a pointer always names the
 * same text, so a handle is found by pointer alone in a small lock-free
 * table, and the text is read only the first time. */
#ifndef CT_NCCL_STR_H
#define CT_NCCL_STR_H

#include <stdint.h>

/* The handle of s (0 for NULL or when the table is full). */
uint64_t ct_nccl_str(const char *s);
/* The text of handle h, NULL when it is not one of these (the watchdog's
 * message; not on any hot path). */
const char *ct_nccl_str_of(uint64_t h);

#endif
