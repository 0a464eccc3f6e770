// SPDX-License-Identifier: MIT
/* The .ctr reader's lower half: the file, its header and its blocks (the
 * trailer and the final footer block found from the end); dec.c decodes
 * the items inside the blocks. */
#include "crc32c.h"
#include "dec.h"
#include "dec_int.h"
#include "varint.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

const char *ct_status_name(enum ct_status s)
{
	switch (s) {
	case CT_CLEAN: return "clean";
	case CT_TRUNCATED: return "truncated";
	case CT_CORRUPT: return "corrupt";
	case CT_DAMAGED: return "damaged";
	default: return "reading";
	}
}

void ct_dec_seterr(char *err, size_t elen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, elen, fmt, ap);
	va_end(ap);
}

char *ct_dec_dup(const uint8_t *p, size_t n)
{
	char *s = malloc(n + 1);
	if (s) {
		memcpy(s, p, n);
		s[n] = 0;
	}
	return s;
}

void ct_header_free(struct ct_header *h)
{
	free(h->version), free(h->host), free(h->cmdline), free(h->config);
	free(h->rank_source), free(h->job_id), free(h->flight_cause);
	memset(h, 0, sizeof *h);
}

int ct_header_parse(struct ct_header *h, const uint8_t *p, size_t n, char *err, size_t elen)
{
	memset(h, 0, sizeof *h);
	h->rank = h->local_rank = h->world_size = h->local_size = -1;
	h->part = 1;
	const uint8_t *end = p + n;
	while (p < end) {
		uint64_t tag, len, v = 0;
		if (ct_get_varint(&p, end, &tag) || ct_get_varint(&p, end, &len) ||
		    len > (uint64_t)(end - p)) {
			ct_dec_seterr(err, elen, "damaged header");
			ct_header_free(h);
			return -1;
		}
		const uint8_t *val = p, *vend = p + len;
		p = vend;
		char **sdst = NULL;
		switch (tag) {
		case CT_H_TRACER_VERSION: sdst = &h->version; break;
		case CT_H_HOST: sdst = &h->host; break;
		case CT_H_CMDLINE: sdst = &h->cmdline; h->cmdline_len = len; break;
		case CT_H_CONFIG: sdst = &h->config; break;
		case CT_H_RANK_SOURCE: sdst = &h->rank_source; break;
		case CT_H_JOB_ID: sdst = &h->job_id; break;
		case CT_H_FLIGHT_CAUSE: sdst = &h->flight_cause; break;
		case CT_H_FLIGHT_WANT: case CT_H_FLIGHT_FROM: case CT_H_FLIGHT_TO:
		case CT_H_FLIGHT_BUDGET: case CT_H_FLIGHT_SHORT: case CT_H_FLIGHT_HELD:
		case CT_H_PID: case CT_H_PPID: case CT_H_RANK: case CT_H_LOCAL_RANK:
		case CT_H_WORLD_SIZE: case CT_H_LOCAL_SIZE: case CT_H_RT_ANCHOR: case CT_H_MONO_ANCHOR:
		case CT_H_PART: case CT_H_FORKED_FROM:
			if (ct_get_varint(&val, vend, &v)) {
				ct_dec_seterr(err, elen, "damaged header field %u", (unsigned)tag);
				ct_header_free(h);
				return -1;
			}
			break;
		default:
			/* A later version's field, whatever its value holds: a
			 * minor version may add fields that older readers skip. */
			continue;
		}
		if (sdst) {
			free(*sdst);
			if (!(*sdst = ct_dec_dup(val, len))) {
				ct_dec_seterr(err, elen, "out of memory");
				ct_header_free(h);
				return -1;
			}
			continue;
		}
		switch (tag) {
		case CT_H_PID: h->pid = v; break;
		case CT_H_PPID: h->ppid = v; break;
		case CT_H_RANK: h->rank = ct_unzigzag(v); break;
		case CT_H_LOCAL_RANK: h->local_rank = ct_unzigzag(v); break;
		case CT_H_WORLD_SIZE: h->world_size = ct_unzigzag(v); break;
		case CT_H_LOCAL_SIZE: h->local_size = ct_unzigzag(v); break;
		case CT_H_RT_ANCHOR: h->rt_anchor = v; break;
		case CT_H_MONO_ANCHOR: h->mono_anchor = v; break;
		case CT_H_PART: h->part = v ? v : 1; break;
		case CT_H_FORKED_FROM: h->forked_from = v; break;
		case CT_H_FLIGHT_WANT: h->flight_want = v; break;
		case CT_H_FLIGHT_FROM: h->flight_from = v; break;
		case CT_H_FLIGHT_TO: h->flight_to = v; break;
		case CT_H_FLIGHT_BUDGET: h->flight_budget = v; break;
		case CT_H_FLIGHT_SHORT: h->flight_short = v; break;
		case CT_H_FLIGHT_HELD: h->flight_held = v; break;
		}
	}
	char **strs[] = {&h->version,     &h->host,	  &h->cmdline,	    &h->config,
			 &h->rank_source, &h->job_id, &h->flight_cause};
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		if (!*strs[i] && !(*strs[i] = ct_dec_dup((const uint8_t *)"", 0))) {
			ct_header_free(h);
			return -1;
		}
	return 0;
}

/* The file is read through its stdio stream only, never its descriptor:
 * the tools may hand the reader a stream that holds no descriptor until it
 * reads (tools/read/inputs.c opens files lazily for jobs of many ranks). */
static int stream_size(FILE *fp, uint64_t *size)
{
	off_t pos = ftello(fp);
	if (pos < 0 || fseeko(fp, 0, SEEK_END))
		return -1;
	off_t end = ftello(fp);
	if (end < 0 || fseeko(fp, pos, SEEK_SET))
		return -1;
	*size = (uint64_t)end;
	return 0;
}

/* Reads up to n bytes at off: how many there were (fewer at the end). The
 * stream's position is kept. */
static size_t read_at(struct ct_file *f, uint64_t off, void *buf, size_t n)
{
	off_t pos = ftello(f->f);
	if (pos < 0 || fseeko(f->f, (off_t)off, SEEK_SET))
		return 0;
	size_t got = fread(buf, 1, n, f->f);
	clearerr(f->f);
	if (fseeko(f->f, pos, SEEK_SET))
		return 0;
	return got;
}

int ct_dec_final_block(struct ct_file *f, uint8_t **out, size_t *out_len)
{
	uint8_t t[CT_TRAILER_SIZE], bh[12];
	uint64_t size, at;
	if (stream_size(f->f, &size) || size < f->offset + CT_TRAILER_SIZE + 12)
		return -1;
	uint32_t magic, zlen, rlen;
	if (read_at(f, size - sizeof t, t, sizeof t) != sizeof t)
		return -1;
	memcpy(&magic, t, 4);
	memcpy(&at, t + 8, 8);
	if (magic != CT_TRAILER_MAGIC || at < f->offset || at + 12 > size - sizeof t)
		return -1;
	if (read_at(f, at, bh, sizeof bh) != sizeof bh)
		return -1;
	memcpy(&magic, bh, 4), memcpy(&zlen, bh + 4, 4), memcpy(&rlen, bh + 8, 4);
	if (magic != CT_BLOCK_MAGIC || rlen > 65536 || at + 12 + zlen != size - sizeof t)
		return -1;
	int rc = -1;
	uint8_t *z = malloc(zlen ? zlen : 1), *raw = malloc(rlen ? rlen : 1);
	if (z && raw && read_at(f, at + 12, z, zlen) == zlen) {
		size_t n = ZSTD_decompressDCtx(f->dctx, raw, rlen, z, zlen);
		if (!ZSTD_isError(n) && n == rlen) {
			*out = raw, *out_len = n;
			raw = NULL;
			rc = 0;
		}
	}
	free(z);
	free(raw);
	return rc;
}

int ct_dec_open(struct ct_file *f, const char *path)
{
	memset(f, 0, sizeof *f);
	snprintf(f->path, sizeof f->path, "%s", path);
	f->tid = -1;
	f->f = fopen(path, "rb");
	if (!f->f) {
		ct_dec_seterr(f->err, sizeof f->err, "%s: %s", path, strerror(errno));
		return -1;
	}
	uint8_t hdr[16];
	size_t got = fread(hdr, 1, sizeof hdr, f->f);
	if (got < 8 || memcmp(hdr, CT_MAGIC, 8)) {
		ct_dec_seterr(f->err, sizeof f->err, "%s: not a cuptrace file (%s)", path,
		       got == 0 ? "empty" : "bad magic");
		goto fail;
	}
	if (got < 16) {
		ct_dec_seterr(f->err, sizeof f->err, "%s: truncated inside the header", path);
		goto fail;
	}
	uint16_t major, minor;
	uint32_t hlen;
	memcpy(&major, hdr + 8, 2);
	memcpy(&minor, hdr + 10, 2);
	memcpy(&hlen, hdr + 12, 4);
	if (major != CT_FORMAT_MAJOR) {
		ct_dec_seterr(f->err, sizeof f->err, "%s: format version %u, this tool reads %u", path, major,
		       CT_FORMAT_MAJOR);
		goto fail;
	}
	if (hlen > CT_HEADER_MAX) {
		ct_dec_seterr(f->err, sizeof f->err, "%s: damaged header (length %u)", path, hlen);
		goto fail;
	}
	uint8_t *hb = malloc(hlen ? hlen : 1);
	if (!hb || fread(hb, 1, hlen, f->f) != hlen) {
		free(hb);
		ct_dec_seterr(f->err, sizeof f->err, "%s: truncated inside the header", path);
		goto fail;
	}
	/* The checksum first: a flipped bit anywhere in the header (the
	 * minor version included) is "header corrupt", before any field is
	 * believed. Files of format 1.0 have none. */
	if (hlen >= CT_HEADER_CRC_SIZE && hb[hlen - 6] == CT_H_CRC && hb[hlen - 5] == 4) {
		uint32_t want = 0;
		for (int i = 0; i < 4; i++)
			want |= (uint32_t)hb[hlen - 4 + i] << 8 * i;
		if (ct_crc32c(ct_crc32c(0, hdr, 16), hb, hlen - 4) != want) {
			free(hb);
			ct_dec_seterr(f->err, sizeof f->err, "%s: header corrupt (checksum mismatch)", path);
			goto fail;
		}
	} else if (minor >= 1) {
		free(hb);
		ct_dec_seterr(f->err, sizeof f->err, "%s: header corrupt (no checksum)", path);
		goto fail;
	}
	char e[256];
	int rc = ct_header_parse(&f->h, hb, hlen, e, sizeof e);
	free(hb);
	if (rc) {
		ct_dec_seterr(f->err, sizeof f->err, "%s: %s", path, e);
		goto fail;
	}
	f->h.major = major, f->h.minor = minor;
	f->offset = f->first_block = 16 + (uint64_t)hlen;
	uint64_t fsize;
	f->mem_max = CT_DEC_MEM_BASE;
	if (!stream_size(f->f, &fsize) && fsize > 0)
		f->mem_max += CT_DEC_MEM_PER_BYTE * fsize;
	f->dctx = ZSTD_createDCtx();
	if (!f->dctx) {
		ct_dec_seterr(f->err, sizeof f->err, "out of memory");
		goto fail;
	}
	return 0;
fail:
	return -1;
}

static int grow(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	uint8_t *b = realloc(*buf, need);
	if (!b)
		return -1;
	*buf = b, *cap = need;
	return 0;
}

/* What starts at a file offset. */
enum frame {
	FR_BLOCK,   /* a block, decompressed into f->raw */
	FR_TRAILER, /* a trailer */
	FR_END,	    /* the end of the file */
	FR_CUT,	    /* the file ends inside a frame */
	FR_BAD,	    /* a damaged block: its header, or its zstd frame */
	FR_NOMEM,
};

/* Reads the frame at `at`. *next: where the next frame starts (for FR_BAD,
 * where the block's header says it ends, 0 when the header itself is
 * implausible); *rlen: the block's raw length; why: what was wrong. */
static enum frame read_frame(struct ct_file *f, uint64_t at, uint64_t *next, uint32_t *rlen_out,
			     char *why, size_t wlen)
{
	uint8_t bh[12];
	unsigned long long o = at;
	*next = 0;
	size_t got = read_at(f, at, bh, sizeof bh);
	if (got == 0)
		return FR_END;
	if (got < sizeof bh) {
		ct_dec_seterr(why, wlen, "truncated inside a block header at offset %llu", o);
		return FR_CUT;
	}
	uint32_t magic, zlen, rlen;
	memcpy(&magic, bh, 4), memcpy(&zlen, bh + 4, 4), memcpy(&rlen, bh + 8, 4);
	if (magic == CT_TRAILER_MAGIC && zlen == 0) {
		uint8_t rest[CT_TRAILER_SIZE - sizeof bh];
		if (read_at(f, at + sizeof bh, rest, sizeof rest) != sizeof rest) {
			ct_dec_seterr(why, wlen, "truncated inside a trailer at offset %llu", o);
			return FR_CUT;
		}
		*next = at + CT_TRAILER_SIZE;
		return FR_TRAILER;
	}
	if (magic != CT_BLOCK_MAGIC || rlen > CT_BLOCK_RAW_MAX || zlen > ZSTD_compressBound(rlen)) {
		ct_dec_seterr(why, wlen, "corrupt block header at offset %llu", o);
		return FR_BAD;
	}
	*next = at + sizeof bh + zlen;
	if (grow(&f->zbuf, &f->zcap, zlen ? zlen : 1) || grow(&f->raw, &f->rawcap, rlen ? rlen : 1))
		return FR_NOMEM;
	if (read_at(f, at + sizeof bh, f->zbuf, zlen) != zlen) {
		ct_dec_seterr(why, wlen, "truncated inside the block at offset %llu", o);
		return FR_CUT;
	}
	size_t n = ZSTD_decompressDCtx(f->dctx, f->raw, rlen, f->zbuf, zlen);
	if (ZSTD_isError(n) || n != rlen) {
		ct_dec_seterr(why, wlen, "corrupt block at offset %llu (%s)", o,
			      ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong length");
		return FR_BAD;
	}
	*rlen_out = rlen;
	return FR_BLOCK;
}

/* An intact frame at c, checked all the way: a block that decompresses
 * and passes its checksum, or a trailer that points back at a block. */
static int frame_ok(struct ct_file *f, uint64_t c)
{
	uint64_t next, back;
	uint32_t rlen;
	char why[8];
	switch (read_frame(f, c, &next, &rlen, why, sizeof why)) {
	case FR_BLOCK:
		return 1;
	case FR_TRAILER:
		return read_at(f, c + 8, &back, 8) == 8 && back >= f->first_block && back < c;
	default:
		return 0;
	}
}

/* How far past damage a reader looks for the next intact frame: one block
 * of the largest size and a trailer. Damage longer than that is not one
 * damaged block; reading stops there. */
#define RESYNC_MAX (12 + ZSTD_COMPRESSBOUND(CT_BLOCK_RAW_MAX) + CT_TRAILER_SIZE)
enum { RS_FOUND, RS_END, RS_GAVE_UP };

/* The first intact frame at or after `from`, within RESYNC_MAX. */
static int find_frame(struct ct_file *f, uint64_t from, uint64_t *found)
{
	uint8_t buf[16384];
	uint64_t pos = from, limit = from + RESYNC_MAX;
	for (;;) {
		if (pos >= limit)
			return RS_GAVE_UP;
		size_t want = sizeof buf;
		size_t got = read_at(f, pos, buf, want);
		for (size_t i = 0; i + 4 <= got && pos + i < limit; i++) {
			uint32_t m;
			memcpy(&m, buf + i, 4);
			if ((m == CT_BLOCK_MAGIC || m == CT_TRAILER_MAGIC) && frame_ok(f, pos + i)) {
				*found = pos + i;
				return RS_FOUND;
			}
		}
		if (got < want)
			return RS_END;
		pos += got - 3; /* a magic across the chunk's end */
	}
}

/* Is there a frame's magic, or the file's end, at `at`? (Where a damaged
 * block's own header says the next frame starts.) */
static int frame_starts(struct ct_file *f, uint64_t at)
{
	uint32_t m;
	size_t got = read_at(f, at, &m, 4);
	return got == 0 || (got == 4 && (m == CT_BLOCK_MAGIC || m == CT_TRAILER_MAGIC));
}

void ct_dec_damage(struct ct_file *f, uint64_t span, const char *why)
{
	if (!f->damaged++)
		snprintf(f->damage, sizeof f->damage, "the first: %s", why);
	f->damaged_bytes += span;
}

int ct_dec_stop(struct ct_file *f, const char *why)
{
	f->status = CT_CORRUPT;
	if (f->damaged)
		ct_dec_seterr(f->err, sizeof f->err, "%s: %s; reading stopped there (%llu damaged block%s skipped before: %s)",
			      f->path, why, (unsigned long long)f->damaged, f->damaged > 1 ? "s" : "", f->damage);
	else
		ct_dec_seterr(f->err, sizeof f->err, "%s: %s; reading stopped there", f->path, why);
	return 0;
}

/* The end of the input; cut: why the file ended inside a frame, or NULL. */
static int end_of_input(struct ct_file *f, const char *cut)
{
	/* Clean only when the file ends exactly after a footer's trailer. */
	int clean = !cut && f->trailer_last;
	char tail[256];
	if (cut)
		snprintf(tail, sizeof tail, "%s", cut);
	else
		snprintf(tail, sizeof tail, "truncated: %s" CT_DEC_NOT_CLEAN,
			 f->footer_last ? "no trailer after the footer" : "no footer");
	if (!f->damaged) {
		f->status = clean ? CT_CLEAN : CT_TRUNCATED;
		if (!clean)
			ct_dec_seterr(f->err, sizeof f->err, "%s: %s", f->path, tail);
		return 0;
	}
	f->status = CT_DAMAGED;
	ct_dec_seterr(f->err, sizeof f->err, "%s: %llu damaged block%s skipped (%s)%s%s", f->path,
		      (unsigned long long)f->damaged, f->damaged > 1 ? "s" : "", f->damage,
		      clean ? "" : "; then ", clean ? "" : tail);
	return 0;
}

/* Sets up the block just decompressed at `at` (rlen bytes, the next frame
 * at f->offset). 0 when its timestamp planes are damaged: skipped. */
static int start_block(struct ct_file *f, uint64_t at, uint32_t rlen)
{
	const uint8_t *raw = f->raw, *end = f->raw + rlen, *q = raw;
	const uint8_t *tsp = NULL;
	uint64_t kind, nts = 0;
	if (!ct_get_varint(&q, end, &kind) && kind == CT_K_TSPLANES) {
		if (ct_get_varint(&q, end, &nts) || nts > (uint64_t)(end - q) / 4) {
			char why[96];
			snprintf(why, sizeof why, "corrupt timestamp planes in the block at offset %llu",
				 (unsigned long long)at);
			ct_dec_damage(f, f->offset - at, why);
			return 0;
		}
		tsp = q;
		raw = q + 4 * nts;
	}
	f->blk_at = at;
	f->bytes += rlen;
	f->nblocks++;
	f->p = raw;
	f->end = end;
	f->tsp = tsp;
	f->nts = nts;
	f->ti = 0;
	f->tid = -1;
	f->footer_last = 0;
	f->trailer_last = 0;
	if (f->delta)
		memset(f->delta, 0, (size_t)CT_NKINDS * CT_MAX_FIELDS * sizeof *f->delta);
	return 1;
}

/* Loads the next intact block: a damaged one (a block that does not
 * decompress, a header that makes no sense) is counted and skipped, and
 * reading goes on at the next intact frame: where the damaged block's
 * header says it ends, or else the first one found searching forward. 1
 * loaded, 0 end of input (status set). */
int ct_dec_load_block(struct ct_file *f)
{
	for (;;) {
		uint64_t at = f->offset, next, found = 0;
		uint32_t rlen = 0;
		char why[192];
		enum frame r = read_frame(f, at, &next, &rlen, why, sizeof why);
		switch (r) {
		case FR_BLOCK:
			f->offset = next;
			if (start_block(f, at, rlen))
				return 1;
			continue;
		case FR_TRAILER:
			/* Blocks may go on after it. */
			f->offset = next;
			f->trailer_last = f->footer_last;
			continue;
		case FR_END:
			return end_of_input(f, NULL);
		case FR_NOMEM:
			return ct_dec_stop(f, "out of memory");
		case FR_CUT:
		case FR_BAD:
			break;
		}
		int rs = RS_FOUND;
		if (r == FR_BAD && next && frame_starts(f, next))
			found = next;
		else
			rs = find_frame(f, at + 1, &found);
		if (rs == RS_FOUND) {
			ct_dec_damage(f, found - at, why);
			f->offset = found;
			f->footer_last = 0;
			continue;
		}
		/* Nothing intact after it: a file cut inside its last frame
		 * (a killed process), or damage up to the end. */
		if (r == FR_CUT)
			return end_of_input(f, why);
		if (rs == RS_END) {
			uint64_t size;
			if (stream_size(f->f, &size))
				size = at;
			ct_dec_damage(f, size > at ? size - at : 0, why);
			f->footer_last = 0;
			return end_of_input(f, NULL);
		}
		ct_dec_damage(f, RESYNC_MAX, why);
		char msg[320];
		snprintf(msg, sizeof msg, "%s, and no intact block in the %u bytes after it", why,
			 (unsigned)RESYNC_MAX);
		return ct_dec_stop(f, msg);
	}
}
