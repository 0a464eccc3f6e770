// SPDX-License-Identifier: MIT
/* Reader of .ctr files for the tools: header, then events one by one.
 * Every length and index read from the file is checked; damaged blocks
 * are skipped and counted, and reading goes on at the next intact block
 * (status CT_DAMAGED); damage it cannot get past ends the stream with a
 * message (CT_CORRUPT), never a crash. */
#ifndef CT_DEC_H
#define CT_DEC_H

#include "cuptrace/format.h"
#include "fields.h" /* F_*: the fields' positions in v[], s[], sl[] */

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ct_header {
	unsigned major, minor;
	char *version, *host, *cmdline, *config, *rank_source, *job_id;
	size_t cmdline_len;
	uint64_t pid, ppid, rt_anchor, mono_anchor;
	uint64_t forked_from; /* CT_H_FORKED_FROM, 0 when absent */
	uint64_t part; /* 1, or the number of a file after a rotation (CT_H_PART) */
	int64_t rank, local_rank, world_size, local_size;
	/* A flight recorder's window (1.5, CT_H_FLIGHT_*): flight_want > 0;
	 * its span in tracer clock ns, its trigger, its budget and what the
	 * budget left out of the window (0: nothing). */
	uint64_t flight_want, flight_from, flight_to, flight_budget, flight_short, flight_held;
	char *flight_cause; /* "" when not a window */
};

/* A file after a rotation (part 2, 3, ...) repeats its process's
 * definitions, which part 1 has: the tools count them from part 1 only. A
 * flight window stands alone whatever its part (its own first block holds
 * them; inputs.c reads one window of a process). */
static inline int ct_header_later_part(const struct ct_header *h)
{
	return h->part > 1 && !h->flight_want;
}

struct ct_event {
	unsigned kind;
	int64_t tid;
	uint64_t v[CT_MAX_FIELDS];
	const char *s[CT_MAX_FIELDS]; /* SID/STR fields: text, not NUL-terminated */
	uint32_t sl[CT_MAX_FIELDS];
};

enum ct_status {
	CT_READING = 0,
	CT_CLEAN,     /* ended with a footer */
	CT_TRUNCATED, /* ended early: cut inside a block or no footer */
	CT_CORRUPT,   /* reading stopped at damage it could not get past (no
		       * intact block within reach, over the memory budget) */
	CT_DAMAGED,   /* read to the end, but damaged blocks were skipped
		       * (f->damaged; f->err says which and how it ended) */
};

struct ct_dtab; /* per-thread drop counters */

/* String ids from id on are stored from str[at] on (until the next
 * segment): ids jump where a writer lost a block with definitions. */
struct ct_sseg {
	uint64_t id;
	size_t at;
};

struct ct_plan {
	const struct ct_schema *s; /* NULL until the kind's first event */
	uint8_t ufrom;		   /* fields ufrom.. are all CT_F_U */
};

/* What err says of a file without a footer (a reader that knows better,
 * such as the process still running, replaces this phrase). */
#define CT_DEC_NOT_CLEAN " (the process did not exit cleanly)"

#define CT_DEC_MEM_BASE (16u << 20)
#define CT_DEC_MEM_PER_BYTE 16

struct ct_file {
	FILE *f;
	char path[4096];
	struct ct_header h;
	enum ct_status status;
	char err[512];
	/* strings in the order defined; their ids: CT_SID_FIRST on, jumping
	 * where seg says */
	char **str;
	uint32_t *slen;
	size_t nstr, strcap;
	struct ct_sseg *seg;
	size_t nseg, segcap;
	/* What the tables that grow with the file's contents (strings, drop
	 * counters) may take: CT_DEC_MEM_BASE + CT_DEC_MEM_PER_BYTE x the
	 * file's size. A decompressed block may be 16 MB out of a few hundred
	 * bytes; memory must not grow with that ratio, whatever a damaged or
	 * crafted file holds. */
	uint64_t mem, mem_max;
	/* current block */
	void *dctx;
	uint8_t *zbuf, *raw;
	size_t zcap, rawcap;
	const uint8_t *p, *end;
	const uint8_t *tsp; /* TS planes of the block, or NULL: TS values inline */
	size_t nts, ti;
	uint64_t offset; /* file offset of the next block */
	uint64_t first_block; /* ... and of the first (after the header) */
	uint64_t blk_at; /* file offset of the current block */
	uint64_t nblocks, bytes;
	int64_t tid;
	uint64_t last_ts;
	int footer_last; /* the last item read was a footer */
	int trailer_last; /* ...and the trailer came right after it */
	/* footer contents (of the last footer seen) */
	int have_footer;
	int final_footer; /* the footer of a cleanly closed file was read at open */
	uint64_t f_events[CT_NKINDS], f_drops[CT_NKINDS];
	uint64_t rt_end, mono_end, trunc_str;
	uint64_t end_how, end_detail; /* CT_FT_END (format 1.1); 0 = not said */
	uint64_t nccl_rank, nccl_nranks; /* CT_FT_NCCL_RANK (format 1.3); nranks 0 = not said */
	/* drops seen in DROPS items, summed over threads */
	uint64_t drops[CT_NKINDS];
	struct ct_dtab *dtab;
	uint64_t events[CT_NKINDS]; /* events decoded so far */
	/* Damage read past: blocks that did not decompress or held bad items
	 * are skipped (the rest of the block, for items) and reading goes on
	 * at the next intact block. Strings defined in them are lost: later
	 * references to them read as "?" (an uninterned string). */
	uint64_t damaged;	/* blocks skipped, whole or in part */
	uint64_t damaged_bytes; /* the file bytes they spanned */
	uint64_t lost_refs;	/* references read as "?" */
	char damage[224];	/* the first damage: what and where */
	uint64_t *delta; /* [kind][field] of CT_F_DELTA fields, per block; made on first use */
	struct ct_plan plan[CT_NKINDS];
};

/* Opens path and reads its header. Returns 0, or -1 with f->err set (not
 * a trace, bad header, unreadable). */
int ct_file_open(struct ct_file *f, const char *path);
/* 1: *ev holds the next event; 0: end (see f->status, f->err). */
int ct_file_next(struct ct_file *f, struct ct_event *ev);
void ct_file_close(struct ct_file *f);
/* After the last event: frees the decoding state (buffers, strings), keeps
 * the header, status and counts. */
void ct_file_release(struct ct_file *f);

/* Decodes an in-memory header (for fuzzing and tests). */
int ct_header_parse(struct ct_header *h, const uint8_t *p, size_t n, char *err, size_t elen);
void ct_header_free(struct ct_header *h);

const char *ct_status_name(enum ct_status s);

#endif
