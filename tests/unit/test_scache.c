// SPDX-License-Identifier: MIT
/* The encoder's cache of short strings (libtrace/format/scache.h): a
 * string must read back as itself whatever the cache held before. Records
 * carry strings of 1-30 bytes that differ only in their last byte or only
 * in length (trailing NULs included), behind padding full of garbage, more
 * of them than the cache has slots, and repeated in an order that keeps
 * evicting; the string table is also forgotten halfway (a lost block), as
 * writer_block.c does. Every record is encoded with ct_enc_record, framed
 * as writer_block.c frames blocks and read back with ct_file_next. */
#include "check.h"
#include "dec.h"
#include "enc.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#define NS 600 /* distinct strings: over twice CT_SCACHE_N */
#define NEV 20000
#define BLOCK 3000 /* events per block */
#define LOST_FROM (NEV / 2 / BLOCK * BLOCK) /* the lost block: LOST_FROM..NEV / 2 */
#define LATE 100

static char text[NS][32];
static uint32_t tlen[NS];
static uint8_t *file;
static size_t flen, fcap;

static void put(const void *p, size_t n)
{
	if (flen + n > fcap) {
		fcap = (flen + n) * 2;
		file = realloc(file, fcap);
		CHECK(file != NULL);
	}
	memcpy(file + flen, p, n);
	flen += n;
}

static void put_block(struct ct_enc *e)
{
	size_t n;
	const uint8_t *raw = ct_enc_block(e, &n);
	CHECK(raw != NULL);
	size_t bound = ZSTD_compressBound(n);
	uint8_t *z = malloc(bound);
	size_t zn = ZSTD_compress(z, bound, raw, n, 1);
	CHECK(!ZSTD_isError(zn));
	uint32_t h[3] = {CT_BLOCK_MAGIC, (uint32_t)zn, (uint32_t)n};
	put(h, 12);
	put(z, zn);
	free(z);
	ct_enc_new_block(e);
}

static void make_strings(void)
{
	for (int i = 0; i < NS; i++) {
		/* Groups of 30 share their bytes; within a group the length
		 * runs 1..30 and, every other group, the last byte changes. */
		int g = i / 30, n = 1 + i % 30;
		for (int j = 0; j < n; j++)
			text[i][j] = (char)('a' + (g * 7 + j) % 26);
		if (g % 2)
			text[i][n - 1] = (char)(g % 4 == 1 ? 0 : 'A' + g % 26);
		if (g % 5 == 4) /* strings of NULs only */
			memset(text[i], 0, (size_t)n);
		tlen[i] = (uint32_t)n;
	}
}

/* An nvtx_mark record carrying string s, padding filled with `junk`. */
static void encode_mark(struct ct_enc *e, int s, uint64_t ts, uint8_t junk)
{
	uint64_t mem[16];
	memset(mem, junk, sizeof mem);
	struct ct_rec *r = (struct ct_rec *)mem;
	r->size = ct_rec_size(F_NVTX_MARK_N, tlen[s]);
	r->kind = CT_EV_NVTX_MARK;
	r->reserved = 0;
	for (int i = 0; i < F_NVTX_MARK_N; i++)
		r->f[i] = 0;
	r->f[F_NVTX_MARK_TS] = ts;
	r->f[F_NVTX_MARK_MSG] = tlen[s];
	memcpy(&r->f[F_NVTX_MARK_N], text[s], tlen[s]);
	CHECK_EQ(ct_enc_record(e, r), 0);
}

int main(void)
{
	char dir[] = "/tmp/ct-test-scache-XXXXXX", path[256];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/t.ctr", dir);
	make_strings();
	uint8_t hdr[64];
	put(hdr, ct_header_seal(hdr, hdr + 16));

	struct ct_enc e;
	CHECK_EQ(ct_enc_init(&e, 1 << 20), 0);
	ct_enc_thread(&e, 1);
	static int want[NEV];
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < NEV; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* The first NS - LATE strings in order, then random picks; the
		 * last LATE strings appear first in the block that is lost,
		 * so only that block defined them before it was forgotten. */
		if (i < NS - LATE)
			want[i] = i;
		else if (i >= LOST_FROM && i <= NEV / 2)
			want[i] = NS - LATE + (int)(x % LATE);
		else
			want[i] = (int)(x % (i < LOST_FROM ? NS - LATE : NS));
		encode_mark(&e, want[i], 1000 + (uint64_t)i, (uint8_t)(x >> 32));
		if (i % BLOCK == BLOCK - 1)
			put_block(&e);
		if (i == NEV / 2) {
			/* The block is lost: its strings are defined again. */
			ct_enc_forget_strings(&e);
			ct_enc_new_block(&e);
		}
	}
	uint64_t drops[CT_NKINDS] = {0};
	put_block(&e);
	CHECK_EQ(ct_enc_footer(&e, drops, 1, 2), 0);
	uint64_t at = flen;
	put_block(&e);
	uint32_t t[2] = {CT_TRAILER_MAGIC, 0};
	put(t, 8);
	put(&at, 8);
	ct_enc_free(&e);

	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, file, flen), (ssize_t)flen);
	close(fd);

	/* Events of the lost block are gone; every other one reads back with
	 * its own text. */
	struct ct_file f;
	CHECK_EQ(ct_file_open(&f, path), 0);
	struct ct_event ev;
	size_t n = 0;
	for (int i = 0; i < NEV; i++) {
		if (i >= LOST_FROM && i <= NEV / 2)
			continue;
		CHECK(ct_file_next(&f, &ev));
		CHECK_EQ(ev.kind, CT_EV_NVTX_MARK);
		CHECK_EQ(ev.v[F_NVTX_MARK_TS], 1000 + (uint64_t)i);
		CHECK_MEM(ev.s[F_NVTX_MARK_MSG], ev.sl[F_NVTX_MARK_MSG], text[want[i]],
		          tlen[want[i]]);
		n++;
	}
	CHECK(!ct_file_next(&f, &ev));
	CHECK_STR(ct_status_name(f.status), "clean");
	CHECK_EQ(f.lost_refs, 0);
	ct_file_close(&f);
	unlink(path);
	rmdir(dir);
	free(file);
	printf("test_scache: %zu events read back\n", n);
	return 0;
}
