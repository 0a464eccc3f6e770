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
	free(h->rank_source), free(h->job_id);
	memset(h, 0, sizeof *h);
}

int ct_header_parse(struct ct_header *h, const uint8_t *p, size_t n, char *err, size_t elen)
{
	memset(h, 0, sizeof *h);
	h->rank = h->local_rank = h->world_size = h->local_size = -1;
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
		case CT_H_PID: case CT_H_PPID: case CT_H_RANK: case CT_H_LOCAL_RANK:
		case CT_H_WORLD_SIZE: case CT_H_LOCAL_SIZE: case CT_H_RT_ANCHOR: case CT_H_MONO_ANCHOR:
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
		}
	}
	char **strs[] = {&h->version, &h->host, &h->cmdline, &h->config, &h->rank_source, &h->job_id};
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		if (!*strs[i] && !(*strs[i] = ct_dec_dup((const uint8_t *)"", 0))) {
			ct_header_free(h);
			return -1;
		}
	return 0;
}

int ct_dec_final_block(struct ct_file *f, uint8_t **out, size_t *out_len)
{
	struct stat st;
	uint8_t t[CT_TRAILER_SIZE], bh[12];
	if (fstat(fileno(f->f), &st) || (uint64_t)st.st_size < f->offset + CT_TRAILER_SIZE + 12)
		return -1;
	uint64_t size = (uint64_t)st.st_size, at;
	uint32_t magic, zlen, rlen;
	if (pread(fileno(f->f), t, sizeof t, (off_t)(size - sizeof t)) != (ssize_t)sizeof t)
		return -1;
	memcpy(&magic, t, 4);
	memcpy(&at, t + 8, 8);
	if (magic != CT_TRAILER_MAGIC || at < f->offset || at + 12 > size - sizeof t)
		return -1;
	if (pread(fileno(f->f), bh, sizeof bh, (off_t)at) != (ssize_t)sizeof bh)
		return -1;
	memcpy(&magic, bh, 4), memcpy(&zlen, bh + 4, 4), memcpy(&rlen, bh + 8, 4);
	if (magic != CT_BLOCK_MAGIC || rlen > 65536 || at + 12 + zlen != size - sizeof t)
		return -1;
	int rc = -1;
	uint8_t *z = malloc(zlen ? zlen : 1), *raw = malloc(rlen ? rlen : 1);
	if (z && raw && pread(fileno(f->f), z, zlen, (off_t)(at + 12)) == (ssize_t)zlen) {
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
	f->offset = 16 + (uint64_t)hlen;
	struct stat st;
	f->mem_max = CT_DEC_MEM_BASE;
	if (!fstat(fileno(f->f), &st) && st.st_size > 0)
		f->mem_max += CT_DEC_MEM_PER_BYTE * (uint64_t)st.st_size;
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

/* Loads the next block. 1 loaded, 0 end of input (status set). */
int ct_dec_load_block(struct ct_file *f)
{
	uint8_t bh[12];
	size_t got = fread(bh, 1, sizeof bh, f->f);
	if (got == 0) {
		/* Clean only when the file ends exactly after a footer's trailer. */
		f->status = f->trailer_last ? CT_CLEAN : CT_TRUNCATED;
		if (!f->trailer_last)
			ct_dec_seterr(f->err, sizeof f->err, "%s: truncated: %s (the process did not exit cleanly)",
			       f->path, f->footer_last ? "no trailer after the footer" : "no footer");
		return 0;
	}
	if (got < sizeof bh) {
		f->status = CT_TRUNCATED;
		ct_dec_seterr(f->err, sizeof f->err, "%s: truncated inside a block header at offset %llu",
		       f->path, (unsigned long long)f->offset);
		return 0;
	}
	uint32_t magic, zlen, rlen;
	memcpy(&magic, bh, 4), memcpy(&zlen, bh + 4, 4), memcpy(&rlen, bh + 8, 4);
	if (magic == CT_TRAILER_MAGIC && zlen == 0) {
		/* A trailer: 4 more bytes, then blocks may go on. */
		uint8_t rest[CT_TRAILER_SIZE - sizeof bh];
		if (fread(rest, 1, sizeof rest, f->f) != sizeof rest) {
			f->status = CT_TRUNCATED;
			ct_dec_seterr(f->err, sizeof f->err, "%s: truncated inside a trailer at offset %llu",
			       f->path, (unsigned long long)f->offset);
			return 0;
		}
		f->offset += CT_TRAILER_SIZE;
		f->trailer_last = f->footer_last;
		return ct_dec_load_block(f);
	}
	if (magic != CT_BLOCK_MAGIC || rlen > CT_BLOCK_RAW_MAX || zlen > ZSTD_compressBound(rlen)) {
		f->status = CT_CORRUPT;
		ct_dec_seterr(f->err, sizeof f->err, "%s: corrupt block header at offset %llu", f->path,
		       (unsigned long long)f->offset);
		return 0;
	}
	if (grow(&f->zbuf, &f->zcap, zlen ? zlen : 1) || grow(&f->raw, &f->rawcap, rlen ? rlen : 1)) {
		f->status = CT_CORRUPT;
		ct_dec_seterr(f->err, sizeof f->err, "%s: out of memory", f->path);
		return 0;
	}
	if (fread(f->zbuf, 1, zlen, f->f) != zlen) {
		f->status = CT_TRUNCATED;
		ct_dec_seterr(f->err, sizeof f->err, "%s: truncated inside the block at offset %llu", f->path,
		       (unsigned long long)f->offset);
		return 0;
	}
	size_t n = ZSTD_decompressDCtx(f->dctx, f->raw, rlen, f->zbuf, zlen);
	if (ZSTD_isError(n) || n != rlen) {
		f->status = CT_CORRUPT;
		ct_dec_seterr(f->err, sizeof f->err, "%s: corrupt block at offset %llu (%s)", f->path,
		       (unsigned long long)f->offset,
		       ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong length");
		return 0;
	}
	f->offset += sizeof bh + zlen;
	f->bytes += rlen;
	f->nblocks++;
	f->p = f->raw;
	f->end = f->raw + rlen;
	f->tid = -1;
	f->footer_last = 0;
	f->trailer_last = 0;
	f->tsp = NULL;
	f->nts = f->ti = 0;
	const uint8_t *q = f->p;
	uint64_t kind, nts;
	if (!ct_get_varint(&q, f->end, &kind) && kind == CT_K_TSPLANES) {
		if (ct_get_varint(&q, f->end, &nts) || nts > (uint64_t)(f->end - q) / 4) {
			f->status = CT_CORRUPT;
			ct_dec_seterr(f->err, sizeof f->err, "%s: corrupt timestamp planes in block %llu",
			       f->path, (unsigned long long)f->nblocks);
			return 0;
		}
		f->tsp = q;
		f->nts = nts;
		f->p = q + 4 * nts;
	}
	if (f->delta)
		memset(f->delta, 0, (size_t)CT_NKINDS * CT_MAX_FIELDS * sizeof *f->delta);
	return 1;
}
