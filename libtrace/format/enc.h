// SPDX-License-Identifier: MIT
/* Block encoder: turns ring records into the on-disk item stream of one
 * block (see include/cuptrace/format.h). Pure: no I/O, no compression. */
#ifndef CT_ENC_H
#define CT_ENC_H

#include "cuptrace/format.h"
#include "rec.h"
#include "scache.h"
#include "strtab.h"

#include <stddef.h>
#include <stdint.h>

struct ct_enc {
	uint8_t *buf; /* items of the block being built (TS values apart) */
	size_t len, cap;
	uint32_t *ts; /* TS and DUR values of the block, see CT_K_TSPLANES */
	size_t nts, tscap;
	uint8_t *blk; /* the assembled block (ct_enc_block) */
	size_t blkcap;
	struct ct_strtab st;
	uint32_t *hmap; /* string handle -> string id */
	size_t hcap;
	int64_t tid;
	int pending_thread; /* a THREAD item is due before the next event */
	uint64_t last_ts;
	uint64_t events[CT_NKINDS];
	uint64_t trunc_str;
	uint32_t end_how, end_detail; /* the footer's CT_FT_END, when end_how != 0 */
	uint32_t nccl_rank, nccl_nranks; /* the footer's CT_FT_NCCL_RANK, when nccl_nranks != 0 */
	uint64_t *delta; /* [kind][field]: last value of each CT_F_DELTA field in the block */
	struct ct_scache sc[CT_SCACHE_N]; /* strings of the table, by their bytes */
	/* When not 0: strings whose id would be this or above go inline and
	 * nothing new is interned (a flight window's first block, written
	 * before blocks that define those ids: ct_enc_strings_below). */
	uint32_t sid_limit;
};

int ct_enc_init(struct ct_enc *e, size_t strtab_max);
void ct_enc_free(struct ct_enc *e);
/* Starts a new block: the item stream is empty, the string table stays. */
void ct_enc_new_block(struct ct_enc *e);
/* Raw size of the block so far. */
static inline size_t ct_enc_size(const struct ct_enc *e)
{
	return e->len + 4 * e->nts;
}
/* The block's raw bytes as they go into the zstd frame: the TS planes item
 * (when there are TS values), then the items. NULL on allocation failure. */
const uint8_t *ct_enc_block(struct ct_enc *e, size_t *len);
/* Following records belong to thread tid. */
void ct_enc_thread(struct ct_enc *e, int64_t tid);
/* Forgets every string written so far (their block was lost): later
 * strings are defined again, handles must be defined again. */
void ct_enc_forget_strings(struct ct_enc *e);
/* Defines again every string of the table whose id is below sid (their
 * blocks were dropped from a flight window), in id order; then strings at
 * or above sid go inline until sid_limit is 0 again (set here). -1 when
 * memory ran out. */
int ct_enc_strings_below(struct ct_enc *e, uint32_t sid);
/* Defines string handle h (registered strings, domain names). */
int ct_enc_handle(struct ct_enc *e, uint64_t h, const char *s, uint32_t len);
/* Encodes one record; -1 when it is malformed (skipped) or memory ran out. */
int ct_enc_record(struct ct_enc *e, const struct ct_rec *r);
int ct_enc_drops(struct ct_enc *e, unsigned kind, uint64_t cumulative);
int ct_enc_footer(struct ct_enc *e, const uint64_t *drops, uint64_t rt_end, uint64_t mono_end);

/* Header TLV fields (the header is written by the library, read by dec.c).
 * The caller makes room: 20 bytes plus the string. */
uint8_t *ct_tlv_u(uint8_t *p, unsigned tag, uint64_t v);
uint8_t *ct_tlv_str(uint8_t *p, unsigned tag, const char *s, size_t n);
/* Finishes a header: buf starts with 16 bytes of room, the fields follow
 * up to p, then CT_HEADER_CRC_SIZE bytes of room. Writes the magic,
 * versions and length in front and the checksum field after; returns the
 * header's whole length. */
size_t ct_header_seal(uint8_t *buf, uint8_t *p);

#endif
