// SPDX-License-Identifier: MIT
/* Writes the seed corpus of the fuzz targets (make fuzz-corpus): small
 * valid traces made with the real encoder and framed as
 * libtrace/writer_block.c frames them, and cut and damaged variants of them.
 *   corpus/fuzz_file/NAME.ctr    whole files
 *   corpus/fuzz_header/NAME.bin  header TLV bytes
 *   corpus/fuzz_items/NAME.bin   raw block contents joined by "BLK\n"
 */
#include "enc.h"
#include "varint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

static const char *root;

static void save(const char *target, const char *name, const void *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", root, target);
	if (mkdir(path, 0777) && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof path, "%s/%s/%s", root, target, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

struct trace {
	uint8_t file[1 << 18];
	size_t len, hdr_end;
	size_t block_end[16];
	int nblocks;
	uint8_t items[1 << 18];
	size_t ilen;
	struct ct_enc e;
};

static void put(struct trace *t, const void *p, size_t n)
{
	if (t->len + n > sizeof t->file)
		abort();
	memcpy(t->file + t->len, p, n);
	t->len += n;
}

static size_t header_tlv(uint8_t *p0, int rank)
{
	static const char cmd[] = "python3\0train.py";
	uint8_t *p = p0;
	p = ct_tlv_str(p, CT_H_TRACER_VERSION, "0.1.0", 5);
	p = ct_tlv_str(p, CT_H_HOST, "node1", 5);
	p = ct_tlv_u(p, CT_H_PID, 4242);
	p = ct_tlv_u(p, CT_H_PPID, 1);
	p = ct_tlv_u(p, CT_H_RANK, ct_zigzag(rank));
	p = ct_tlv_u(p, CT_H_LOCAL_RANK, ct_zigzag(rank % 2));
	p = ct_tlv_u(p, CT_H_WORLD_SIZE, ct_zigzag(4));
	p = ct_tlv_u(p, CT_H_LOCAL_SIZE, ct_zigzag(2));
	p = ct_tlv_str(p, CT_H_RANK_SOURCE, "RANK", 4);
	p = ct_tlv_str(p, CT_H_CMDLINE, cmd, sizeof cmd - 1);
	p = ct_tlv_u(p, CT_H_RT_ANCHOR, 1700000000000000000ull);
	p = ct_tlv_u(p, CT_H_MONO_ANCHOR, 5000000000ull);
	p = ct_tlv_str(p, CT_H_CONFIG, "CUPTRACE_TRACE=nvtx\n", 20);
	p = ct_tlv_str(p, CT_H_JOB_ID, "123", 3);
	return (size_t)(p - p0);
}

static void start(struct trace *t, size_t strtab_max, int rank)
{
	memset(t, 0, sizeof *t);
	uint8_t hdr[512];
	put(t, hdr, ct_header_seal(hdr, hdr + 16 + header_tlv(hdr + 16, rank)));
	t->hdr_end = t->len;
	if (ct_enc_init(&t->e, strtab_max))
		abort();
}

static void end_block(struct trace *t)
{
	static ZSTD_CCtx *cctx;
	if (!cctx) {
		cctx = ZSTD_createCCtx();
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	}
	uint8_t z[1 << 16];
	size_t rn;
	const uint8_t *raw = ct_enc_block(&t->e, &rn);
	if (!raw)
		abort();
	size_t zn = ZSTD_compress2(cctx, z, sizeof z, raw, rn);
	if (ZSTD_isError(zn))
		abort();
	uint32_t h[3] = {CT_BLOCK_MAGIC, (uint32_t)zn, (uint32_t)rn};
	put(t, h, 12);
	put(t, z, zn);
	t->block_end[t->nblocks++] = t->len;
	if (t->ilen)
		memcpy(t->items + t->ilen, "BLK\n", 4), t->ilen += 4;
	memcpy(t->items + t->ilen, raw, rn);
	t->ilen += rn;
	ct_enc_new_block(&t->e);
}

/* One record; the schema's STR field (at most one per kind) gets str. */
static void rec(struct trace *t, unsigned kind, const uint64_t *f, const char *str)
{
	const struct ct_schema *s = ct_schema_of(kind);
	uint32_t slen = str ? (uint32_t)strlen(str) : 0;
	uint64_t mem[64] = {0};
	struct ct_rec *r = (struct ct_rec *)mem;
	r->size = ct_rec_size(s->nfields, slen);
	if (r->size > sizeof mem)
		abort();
	r->kind = (uint16_t)kind;
	for (unsigned i = 0; i < s->nfields; i++)
		r->f[i] = s->type[i] == CT_F_STR ? slen : f[i];
	memcpy(&r->f[s->nfields], str ? str : "", slen);
	if (ct_enc_record(&t->e, r))
		abort();
}

enum { DOM = 1, MSG = 2 }; /* string handles */

static void thread_events(struct trace *t, int64_t tid, uint64_t ts, const char *name)
{
	ct_enc_thread(&t->e, tid);
	uint64_t color = CT_COLOR_SET | 0xff76b900;
	rec(t, CT_EV_THREAD_NAME, (uint64_t[]){ts, (uint64_t)tid, 0, 0}, name);
	rec(t, CT_EV_CATEGORY, (uint64_t[]){ts + 1, DOM, 3, 0}, "io");
	rec(t, CT_EV_CAPTURE, (uint64_t[]){ts + 2, 1}, NULL);
	rec(t, CT_EV_STEP, (uint64_t[]){ts + 3, 1}, NULL);
	rec(t, CT_EV_NVTX_PUSH, (uint64_t[]){ts + 10, DOM, 3, color, CT_PAYLOAD_U64, 42, 0, 0}, "forward");
	rec(t, CT_EV_NVTX_PUSH, (uint64_t[]){ts + 20, DOM, 0, 0, 0, 0, MSG, 0}, NULL);
	rec(t, CT_EV_NVTX_MARK, (uint64_t[]){ts + 25, 0, 0, 0, CT_PAYLOAD_DOUBLE, 0x3ff8000000000000ull, 0, 0},
	    "checkpoint");
	rec(t, CT_EV_NVTX_POP, (uint64_t[]){ts + 30, DOM}, NULL);
	rec(t, CT_EV_NVTX_START, (uint64_t[]){ts + 31, 7, 0, 0, 0, 0, 0, 0, 0}, "load");
	rec(t, CT_EV_NVTX_POP, (uint64_t[]){ts + 40, DOM}, NULL);
	rec(t, CT_EV_NVTX_PUSH, (uint64_t[]){ts + 50, DOM, 3, color, 0, 0, 0, 0}, "forward");
	rec(t, CT_EV_NVTX_END, (uint64_t[]){ts + 55, 7, 0}, NULL);
	rec(t, CT_EV_RESET, (uint64_t[]){ts + 60}, NULL);
	rec(t, CT_EV_STEP, (uint64_t[]){ts + 70, 2}, NULL);
	rec(t, CT_EV_CAPTURE, (uint64_t[]){ts + 80, 0}, NULL);
}

static void make(struct trace *t, size_t strtab_max, int rank)
{
	start(t, strtab_max, rank);
	ct_enc_handle(&t->e, DOM, "PyTorch", 7);
	ct_enc_handle(&t->e, MSG, "registered message", 18);
	thread_events(t, 1000, 5000000100ull, "python3");
	end_block(t);
	thread_events(t, 1001, 5000000200ull, "pt_autograd_0");
	ct_enc_drops(&t->e, CT_EV_NVTX_PUSH, 12);
	ct_enc_thread(&t->e, 1000);
	rec(t, CT_EV_STEP, (uint64_t[]){5000000900ull, 3}, NULL);
	end_block(t);
	uint64_t drops[CT_NKINDS] = {[CT_EV_NVTX_PUSH] = 12};
	ct_enc_footer(&t->e, drops, 1700000001000000000ull, 6000000000ull);
	end_block(t);
}

static void variants(struct trace *t, const char *base)
{
	char name[128];
	static uint8_t copy[1 << 18];
	struct {
		const char *what;
		size_t at;
	} cuts[] = {
		{"cut-magic", 5},
		{"cut-header", t->hdr_end - 7},
		{"cut-blockhdr", t->hdr_end + 6},
		{"cut-block", (t->hdr_end + t->block_end[0]) / 2},
		{"cut-boundary", t->block_end[0]},
		{"cut-last", t->len - 3},
	};
	for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
		snprintf(name, sizeof name, "%s-%s.ctr", base, cuts[i].what);
		save("fuzz_file", name, t->file, cuts[i].at);
	}
	struct {
		const char *what;
		size_t at;
		uint8_t x;
	} flips[] = {
		{"bad-magic", t->hdr_end, 0x01},
		{"bad-zlen", t->hdr_end + 4, 0x40},
		{"bad-rlen", t->hdr_end + 8, 0x02},
		{"bad-frame", t->hdr_end + 30, 0x10},
		{"bad-checksum", t->block_end[1] - 2, 0x80},
		{"bad-version", 8, 0x03},
		{"bad-hlen", 13, 0x01},
		{"bad-minor", 10, 0x01},
		{"bad-config", t->hdr_end - 20, 0x04},
		{"bad-crc", t->hdr_end - 1, 0x20},
	};
	for (size_t i = 0; i < sizeof flips / sizeof *flips; i++) {
		memcpy(copy, t->file, t->len);
		copy[flips[i].at] ^= flips[i].x;
		snprintf(name, sizeof name, "%s-%s.ctr", base, flips[i].what);
		save("fuzz_file", name, copy, t->len);
	}
}

/* String ids with the largest gap the reader allows between each: a few
 * KB once compressed, and a reader that fills the gaps with empty entries
 * takes most of a GB for them. */
static void strgap(struct trace *t)
{
	start(t, 0, 3);
	static uint8_t raw[1 << 14];
	uint8_t *p = raw;
	for (uint64_t i = 0; i < 1000; i++) {
		p = ct_put_varint(p, CT_K_STR);
		p = ct_put_varint(p, CT_SID_FIRST + i * 65537);
		p = ct_put_varint(p, 0);
	}
	t->e.len = 0;
	size_t n = (size_t)(p - raw);
	uint8_t z[1 << 15];
	ZSTD_CCtx *cctx = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 19);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	size_t zn = ZSTD_compress2(cctx, z, sizeof z, raw, n);
	ZSTD_freeCCtx(cctx);
	if (ZSTD_isError(zn))
		abort();
	uint32_t h[3] = {CT_BLOCK_MAGIC, (uint32_t)zn, (uint32_t)n};
	put(t, h, 12);
	put(t, z, zn);
	save("fuzz_file", "strgap.ctr", t->file, t->len);
	save("fuzz_items", "strgap.bin", raw, n);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus CORPUS_DIR\n");
		return 2;
	}
	root = argv[1];
	static struct trace t;

	make(&t, 1 << 20, 0);
	save("fuzz_file", "basic.ctr", t.file, t.len);
	save("fuzz_items", "basic.bin", t.items, t.ilen);
	save("fuzz_header", "basic.bin", t.file + 16, t.hdr_end - 16);
	variants(&t, "basic");
	ct_enc_free(&t.e);

	/* No interning at all: every string inline. */
	make(&t, 0, 1);
	save("fuzz_file", "inline.ctr", t.file, t.len);
	save("fuzz_items", "inline.bin", t.items, t.ilen);
	ct_enc_free(&t.e);

	/* Header only, and the smallest clean file: a lone footer block. */
	start(&t, 0, 2);
	save("fuzz_file", "header-only.ctr", t.file, t.len);
	uint64_t none[CT_NKINDS] = {0};
	ct_enc_footer(&t.e, none, 1, 2);
	end_block(&t);
	save("fuzz_file", "footer-only.ctr", t.file, t.len);
	save("fuzz_items", "footer-only.bin", t.items, t.ilen);
	ct_enc_free(&t.e);

	save("fuzz_file", "empty.ctr", "", 0);
	save("fuzz_file", "magic-only.ctr", CT_MAGIC, 8);

	strgap(&t);
	ct_enc_free(&t.e);

	/* Header fields a later version might add, and damaged ones. */
	uint8_t tlv[64], *p = tlv;
	p = ct_tlv_str(p, 40, "", 0);
	p = ct_tlv_str(p, 200, "future", 6);
	p = ct_tlv_u(p, CT_H_RANK, ct_zigzag(-1));
	save("fuzz_header", "unknown-fields.bin", tlv, (size_t)(p - tlv));
	save("fuzz_header", "cut.bin", tlv, (size_t)(p - tlv) - 1);
	return 0;
}
