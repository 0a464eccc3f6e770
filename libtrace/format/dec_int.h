// SPDX-License-Identifier: MIT
/* Between the two halves of the .ctr reader: dec.c (items) uses
 * dec_block.c (the file and its blocks); nothing else includes this. */
#ifndef CT_DEC_INT_H
#define CT_DEC_INT_H

#include "dec.h"

void ct_dec_seterr(char *err, size_t elen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A NUL-terminated copy of n bytes, or NULL. */
char *ct_dec_dup(const uint8_t *p, size_t n);
/* Opens the file and reads its header. 0, or -1 with f->err set; the
 * caller closes f either way. */
int ct_dec_open(struct ct_file *f, const char *path);
/* Loads the next intact block, skipping damaged ones. 1 loaded, 0 end of
 * input (f->status set). */
int ct_dec_load_block(struct ct_file *f);
/* Counts a damaged block of span file bytes, skipped whole or in part;
 * why: what was wrong, and where. Reading goes on. */
void ct_dec_damage(struct ct_file *f, uint64_t span, const char *why);
/* Damage reading cannot go past (out of memory, over the memory budget,
 * no intact block within reach): CT_CORRUPT with why. Returns 0. */
int ct_dec_stop(struct ct_file *f, const char *why);
/* The decompressed block the trailer points at (a clean file's footer),
 * malloc'd: 0, or -1 when there is none or anything looks odd. */
int ct_dec_final_block(struct ct_file *f, uint8_t **raw, size_t *len);

#endif
