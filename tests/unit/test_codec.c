// SPDX-License-Identifier: MIT
/* Encoder and decoder together (libtrace/format/enc.c, dec.c): random ring
 * records of every event kind are encoded into blocks, framed exactly as
 * libtrace/writer_block.c frames them, written to a file and read back with
 * ct_file_open / ct_file_next; every field, string, thread, drop count and
 * footer total must come back. Then the same file cut at every byte must
 * read as a prefix of whole blocks with status CT_TRUNCATED, and damaged
 * blocks must be skipped and counted, the reader going on at the next
 * intact block (CT_DAMAGED, with a message). */
#include "check.h"
#include "crc32c.h"
#include "dec.h"
#include "enc.h"
#include "varint.h"

#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

static char dir[] = "/tmp/ct-test-codec-XXXXXX";
static char path[256];

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t x = (rng_state += 0x9e3779b97f4a7c15ull);
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t below(uint64_t n)
{
	return rnd() % n;
}

/* Numbers of every size: small, at varint byte edges, huge. */
static uint64_t rnd_u(void)
{
	switch (below(6)) {
	case 0: return below(3);
	case 1: return below(128);
	case 2: return (1ull << (7 * (1 + below(9)))) - below(2);
	case 3: return ~0ull - below(3);
	default: return rnd() >> below(64);
	}
}

/* ---- a growable byte buffer: the file being built */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
		CHECK(b->p != NULL);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* The file header as writer.c writes it. */
static size_t header_fields(uint8_t *p0)
{
	static const char cmd[] = "python3\0train.py\0--lr=0.1";
	uint8_t *p = p0;
	p = ct_tlv_str(p, CT_H_TRACER_VERSION, "9.8.7", 5);
	p = ct_tlv_str(p, CT_H_HOST, "node-07", 7);
	p = ct_tlv_u(p, CT_H_PID, 4242);
	p = ct_tlv_u(p, CT_H_PPID, 1);
	p = ct_tlv_u(p, CT_H_RANK, ct_zigzag(13));
	p = ct_tlv_u(p, CT_H_LOCAL_RANK, ct_zigzag(-1));
	p = ct_tlv_u(p, CT_H_WORLD_SIZE, ct_zigzag(1024));
	p = ct_tlv_u(p, CT_H_LOCAL_SIZE, ct_zigzag(8));
	p = ct_tlv_str(p, CT_H_RANK_SOURCE, "SLURM_PROCID", 12);
	p = ct_tlv_str(p, CT_H_CMDLINE, cmd, sizeof cmd - 1);
	p = ct_tlv_u(p, CT_H_RT_ANCHOR, 1700000000123456789ull);
	p = ct_tlv_u(p, CT_H_MONO_ANCHOR, 987654321ull);
	p = ct_tlv_str(p, 99, "\xff\xff\xff", 3); /* a later version's field */
	p = ct_tlv_str(p, CT_H_CONFIG, "CUPTRACE_LOG=warn\n", 18);
	p = ct_tlv_str(p, CT_H_JOB_ID, "", 0);
	return (size_t)(p - p0);
}

static void check_header(const struct ct_header *h)
{
	CHECK_STR(h->version, "9.8.7");
	CHECK_STR(h->host, "node-07");
	CHECK_EQ(h->pid, 4242);
	CHECK_EQ(h->ppid, 1);
	CHECK_EQ(h->rank, 13);
	CHECK_EQ(h->local_rank, -1);
	CHECK_EQ(h->world_size, 1024);
	CHECK_EQ(h->local_size, 8);
	CHECK_STR(h->rank_source, "SLURM_PROCID");
	CHECK_MEM(h->cmdline, h->cmdline_len, "python3\0train.py\0--lr=0.1", 25);
	CHECK(h->rt_anchor == 1700000000123456789ull);
	CHECK_EQ(h->mono_anchor, 987654321);
	CHECK_STR(h->config, "CUPTRACE_LOG=warn\n");
	CHECK_STR(h->job_id, "");
}

/* The header as writer.c writes it, checksum and all (format 1.1). */
static void start_file(struct buf *b)
{
	uint8_t hdr[1024];
	size_t n = ct_header_seal(hdr, hdr + 16 + header_fields(hdr + 16));
	put(b, hdr, n);
}

/* A header of format 1.0: no checksum. */
static void start_file_1_0(struct buf *b)
{
	uint8_t tlv[1024];
	uint32_t hlen = (uint32_t)header_fields(tlv);
	uint16_t major = 1, minor = 0;
	put(b, CT_MAGIC, 8);
	put(b, &major, 2);
	put(b, &minor, 2);
	put(b, &hlen, 4);
	put(b, tlv, hlen);
}

/* Puts the checksum of a header that a test changed right again. */
static void reseal(struct buf *b)
{
	uint32_t hl;
	memcpy(&hl, b->p + 12, 4);
	uint32_t c = ct_crc32c(0, b->p, 16 + hl - 4);
	for (int i = 0; i < 4; i++)
		b->p[16 + hl - 4 + i] = (uint8_t)(c >> 8 * i);
}

/* One block as writer_block.c frames it: magic, compressed and raw lengths,
 * a zstd frame with a content checksum. */
static void put_block(struct buf *b, const uint8_t *raw, size_t n)
{
	static ZSTD_CCtx *cctx;
	if (!cctx) {
		cctx = ZSTD_createCCtx();
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 3);
		ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
	}
	size_t bound = ZSTD_compressBound(n);
	uint8_t *z = malloc(bound);
	size_t zn = ZSTD_compress2(cctx, z, bound, raw, n);
	CHECK(!ZSTD_isError(zn));
	uint32_t h[3] = {CT_BLOCK_MAGIC, (uint32_t)zn, (uint32_t)n};
	put(b, h, 12);
	put(b, z, zn);
	free(z);
}

/* The trailer the writer puts after each footer block (at: that block's
 * offset). A clean file ends exactly after one. */
static void put_trailer(struct buf *b, uint64_t at)
{
	uint32_t t[2] = {CT_TRAILER_MAGIC, 0};
	put(b, t, 8);
	put(b, &at, 8);
}

static void write_file(const uint8_t *p, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CHECK(fd >= 0);
	CHECK_EQ(write(fd, p, n), (ssize_t)n);
	close(fd);
}

/* ---- a random trace and what reading it must give back */

#define MAXB 64

struct want {
	unsigned kind;
	int64_t tid;
	uint64_t v[CT_MAX_FIELDS];
	const char *s[CT_MAX_FIELDS]; /* SID/STR: expected text */
	uint32_t sl[CT_MAX_FIELDS];
};

struct trace {
	struct buf file;
	size_t hdr_end;
	int nblocks;
	size_t block_end[MAXB];	   /* file offset after block i */
	size_t events_upto[MAXB]; /* events in blocks 0..i */
	struct want *ev;
	size_t nev;
	uint64_t kind_count[CT_NKINDS];
	uint64_t drops_items[CT_NKINDS]; /* what the DROPS items add up to */
	uint64_t footer_drops[CT_NKINDS];
	uint32_t nccl_rank, nccl_nranks; /* the footer's, nranks 0 = none */
	size_t interned; /* strings the encoder interned */
};

/* Text pool: strings are drawn from it so that many repeat. */
#define NSTR 300
static char *pool[NSTR];
static uint32_t pool_len[NSTR];

#define NHANDLE 48
static char *htext[NHANDLE];
static uint32_t hlen[NHANDLE];
/* Handles 1..29 are defined up front, 30..39 just before the first record
 * that uses them (as the writer fetches pending definitions), 40..47 never
 * (they read back as empty). Handle 5 is the empty string. */
#define H_LAZY 30
#define H_NEVER 40

static void make_pool(int long_strings)
{
	for (int i = 0; i < NSTR; i++) {
		uint32_t n;
		switch (i % 10) {
		case 0: n = 0; break;
		case 1: n = 1; break;
		case 2: n = (uint32_t)below(128); break;
		case 3: n = 127 + (uint32_t)below(3); break;
		case 4: n = long_strings ? 16000 + (uint32_t)below(60000) : 200; break;
		default: n = (uint32_t)below(40);
		}
		free(pool[i]);
		pool[i] = malloc(n + 1);
		for (uint32_t j = 0; j < n; j++)
			pool[i][j] = (char)(i % 3 == 0 ? below(256) : 'a' + below(26));
		pool_len[i] = n;
	}
	for (int h = 1; h < NHANDLE; h++) {
		free(htext[h]);
		uint32_t n = h == 5 ? 0 : 1 + (uint32_t)below(30);
		htext[h] = malloc(n + 1);
		for (uint32_t j = 0; j < n; j++)
			htext[h][j] = (char)below(256);
		hlen[h] = n;
	}
}

/* Defines the lazy handles a record uses, the first time one is seen. */
static void define_lazy(struct ct_enc *e, const struct ct_rec *r, int *defined)
{
	const struct ct_schema *s = ct_schema_of(r->kind);
	for (unsigned i = 0; i < s->nfields; i++) {
		uint64_t h = r->f[i];
		if (s->type[i] == CT_F_SID && h >= H_LAZY && h < H_NEVER && !defined[h]) {
			CHECK_EQ(ct_enc_handle(e, h, htext[h], hlen[h]), 0);
			defined[h] = 1;
		}
	}
}

static uint64_t next_ts(uint64_t last)
{
	switch (below(8)) {
	case 0: return last - below(1000000); /* clocks of threads interleave */
	case 1: return rnd();		       /* anything at all */
	case 2: return last;
	default: return last + below(100000);
	}
}

/* Builds one ring record of a random kind and what it must read back as. */
static struct ct_rec *make_record(struct want *w, uint64_t *ts)
{
	unsigned kind;
	const struct ct_schema *s;
	do
		kind = CT_EV_FIRST + (unsigned)below(CT_EV_LAST - CT_EV_FIRST);
	while (!(s = ct_schema_of(kind)));
	int pick[CT_MAX_FIELDS];
	uint32_t strbytes = 0;
	for (unsigned i = 0; i < s->nfields; i++)
		if (s->type[i] == CT_F_STR) {
			pick[i] = (int)below(NSTR);
			strbytes += pool_len[pick[i]];
		}
	uint32_t size = ct_rec_size(s->nfields, strbytes);
	struct ct_rec *r = calloc(1, size);
	r->size = size;
	r->kind = (uint16_t)kind;
	memset(w, 0, sizeof *w);
	w->kind = kind;
	char *str = (char *)&r->f[s->nfields];
	uint64_t prev_ts = 0;
	for (unsigned i = 0; i < s->nfields; i++) {
		uint64_t v = 0;
		switch (s->type[i]) {
		case CT_F_TS: v = *ts = prev_ts = next_ts(*ts); break;
		case CT_F_DUR: v = prev_ts + rnd_u(); break;
		case CT_F_U: v = rnd_u(); break;
		case CT_F_I: v = below(2) ? (uint64_t)0 - rnd_u() : rnd_u(); break; /* any i64 bit pattern */
		case CT_F_SID:
			v = below(NHANDLE);
			if (v && v < H_NEVER) {
				w->s[i] = htext[v];
				w->sl[i] = hlen[v];
			}
			break;
		case CT_F_STR:
			v = pool_len[pick[i]];
			memcpy(str, pool[pick[i]], v);
			str += v;
			w->s[i] = pool[pick[i]];
			w->sl[i] = (uint32_t)v;
			break;
		}
		r->f[i] = v;
		w->v[i] = v;
	}
	return r;
}

static void finish_block(struct trace *t, struct ct_enc *e)
{
	CHECK(t->nblocks < MAXB);
	size_t n;
	const uint8_t *raw = ct_enc_block(e, &n);
	CHECK(raw != NULL);
	put_block(&t->file, raw, n);
	t->block_end[t->nblocks] = t->file.len;
	t->events_upto[t->nblocks] = t->nev;
	t->nblocks++;
	ct_enc_new_block(e);
}

static void make_trace(struct trace *t, size_t nev, int nblocks, size_t strtab_max)
{
	memset(t, 0, sizeof *t);
	start_file(&t->file);
	t->hdr_end = t->file.len;
	t->ev = calloc(nev, sizeof *t->ev);
	struct ct_enc e;
	CHECK_EQ(ct_enc_init(&e, strtab_max), 0);
	int defined[NHANDLE] = {0};
	for (uint64_t h = 1; h < H_LAZY; h++)
		CHECK_EQ(ct_enc_handle(&e, h, htext[h], hlen[h]), 0);

	static const int64_t tids[] = {1, 2, 77, 4194304, 1ll << 40, 0};
	uint64_t last_ts[6] = {0};
	uint64_t cum[6][CT_NKINDS] = {{0}};
	int th = 0;
	ct_enc_thread(&e, tids[th]);
	size_t per_block = nev / (size_t)nblocks + 1;
	while (t->nev < nev) {
		if (below(20) == 0) {
			th = (int)below(6);
			ct_enc_thread(&e, tids[th]);
		}
		if (below(50) == 0) {
			/* Drops: cumulative per thread and kind, as the writer
			 * reports them; sometimes repeated unchanged. */
			unsigned k = (unsigned)below(CT_NKINDS);
			uint64_t add = below(3) ? 1 + below(1000) : 0;
			cum[th][k] += add;
			t->drops_items[k] += add;
			CHECK_EQ(ct_enc_drops(&e, k, cum[th][k]), 0);
		}
		struct want *w = &t->ev[t->nev];
		struct ct_rec *r = make_record(w, &last_ts[th]);
		w->tid = tids[th];
		define_lazy(&e, r, defined);
		CHECK_EQ(ct_enc_record(&e, r), 0);
		free(r);
		t->kind_count[w->kind]++;
		t->nev++;
		if (t->nev % per_block == 0 && t->nev < nev)
			finish_block(t, &e);
	}
	for (unsigned k = 0; k < CT_NKINDS; k++)
		t->footer_drops[k] = below(4) ? 0 : rnd_u();
	if (below(2)) {
		t->nccl_nranks = 1 + (uint32_t)below(100000);
		t->nccl_rank = (uint32_t)below(t->nccl_nranks);
	}
	e.nccl_rank = t->nccl_rank, e.nccl_nranks = t->nccl_nranks;
	CHECK_EQ(ct_enc_footer(&e, t->footer_drops, 111, 222), 0);
	uint64_t at = t->file.len;
	finish_block(t, &e);
	put_trailer(&t->file, at);
	t->interned = e.st.n;
	ct_enc_free(&e);
}

static void free_trace(struct trace *t)
{
	free(t->file.p);
	free(t->ev);
}

/* The event read matches the one written. */
static void check_event(const struct ct_event *ev, const struct want *w, size_t i)
{
	const struct ct_schema *s = ct_schema_of(w->kind);
	if (ev->kind != w->kind || ev->tid != w->tid) {
		fprintf(stderr, "event %zu: kind %u tid %lld, expected kind %u tid %lld\n", i, ev->kind,
			(long long)ev->tid, w->kind, (long long)w->tid);
		exit(1);
	}
	for (unsigned f = 0; f < s->nfields; f++) {
		if (s->type[f] == CT_F_SID || s->type[f] == CT_F_STR) {
			CHECK_MEM(ev->s[f], ev->sl[f], w->s[f], w->sl[f]);
			/* Empty text is "no string" on disk. */
			CHECK_EQ(ev->v[f] == CT_SREF_NONE, w->sl[f] == 0);
		} else if (ev->v[f] != w->v[f]) {
			fprintf(stderr, "event %zu (%s) field %s: %llu, expected %llu\n", i, s->name,
				s->field[f], (unsigned long long)ev->v[f], (unsigned long long)w->v[f]);
			exit(1);
		}
	}
}

/* Reads the file at `path`; returns how many events matched, failing on
 * the first one that does not. */
static size_t read_back(struct ct_file *f, const struct trace *t)
{
	struct ct_event ev;
	size_t n = 0;
	while (ct_file_next(f, &ev)) {
		CHECK(n < t->nev);
		check_event(&ev, &t->ev[n], n);
		n++;
	}
	CHECK(ct_file_next(f, &ev) == 0); /* stays at the end */
	return n;
}

static void test_round_trip(uint64_t seed, size_t nev, int nblocks, size_t strtab_max)
{
	rng_state = seed;
	make_pool(1);
	struct trace t;
	make_trace(&t, nev, nblocks, strtab_max);
	write_file(t.file.p, t.file.len);

	struct ct_file f;
	CHECK_EQ(ct_file_open(&f, path), 0);
	check_header(&f.h);
	CHECK_EQ(f.h.major, CT_FORMAT_MAJOR);
	CHECK_EQ(f.h.minor, CT_FORMAT_MINOR);
	CHECK_EQ(read_back(&f, &t), t.nev);
	CHECK_STR(ct_status_name(f.status), "clean");
	CHECK_EQ(f.status, CT_CLEAN);
	CHECK_EQ(f.nblocks, (uint64_t)t.nblocks);
	CHECK(f.have_footer);
	CHECK_EQ(f.rt_end, 111);
	CHECK_EQ(f.mono_end, 222);
	CHECK_EQ(f.nccl_nranks, t.nccl_nranks);
	CHECK_EQ(f.nccl_rank, t.nccl_rank);
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		CHECK_EQ(f.events[k], t.kind_count[k]);
		CHECK_EQ(f.f_events[k], t.kind_count[k]);
		CHECK_EQ(f.f_drops[k], t.footer_drops[k]);
		CHECK_EQ(f.drops[k], t.drops_items[k]);
	}
	/* Every string the encoder interned is stored once in the file. */
	CHECK_EQ(f.nstr, t.interned);
	CHECK(strtab_max == 0 || t.interned > NHANDLE / 2);
	ct_file_close(&f);
	free_trace(&t);
}

/* Nothing here is threaded and ThreadSanitizer makes file I/O slow: under
 * it, every 7th cut and the cuts near the header's and blocks' ends. */
#ifdef __SANITIZE_THREAD__
#define LIGHT 1
#else
#define LIGHT 0
#endif

static int cut_wanted(const struct trace *t, size_t cut)
{
	if (!LIGHT || cut % 7 == 0 || cut + 2 >= t->file.len || cut - t->hdr_end + 2 <= 4)
		return 1;
	for (int b = 0; b < t->nblocks; b++)
		if (cut - t->block_end[b] + 2 <= 4)
			return 1;
	return 0;
}

/* Cut at every byte: a prefix of whole blocks, then CT_TRUNCATED. */
static void test_truncation(void)
{
	rng_state = 7;
	make_pool(0);
	struct trace t;
	make_trace(&t, 240, 6, 2048);
	CHECK(t.nblocks >= 6);
	char err_seen[3] = {0};
	for (size_t cut = 0; cut <= t.file.len; cut++) {
		if (!cut_wanted(&t, cut))
			continue;
		write_file(t.file.p, cut);
		struct ct_file f;
		if (cut < t.hdr_end) {
			CHECK_EQ(ct_file_open(&f, path), -1);
			CHECK(strstr(f.err, path) != NULL);
			if (cut < 8)
				CHECK(strstr(f.err, "not a cuptrace file") != NULL);
			else
				CHECK(strstr(f.err, "truncated inside the header") != NULL);
			err_seen[0] = 1;
			continue;
		}
		CHECK_EQ(ct_file_open(&f, path), 0);
		size_t n = read_back(&f, &t);
		int whole = 0;
		while (whole < t.nblocks && t.block_end[whole] <= cut)
			whole++;
		size_t expect = whole ? t.events_upto[whole - 1] : 0;
		if (n != expect) {
			fprintf(stderr, "cut at %zu: %zu events, expected %zu\n", cut, n, expect);
			exit(1);
		}
		if (cut == t.file.len) {
			CHECK_EQ(f.status, CT_CLEAN);
			CHECK_STR(f.err, "");
		} else {
			CHECK_EQ(f.status, CT_TRUNCATED);
			CHECK(strstr(f.err, "truncated") != NULL);
			err_seen[1 + (whole && t.block_end[whole - 1] == cut)] = 1;
		}
		ct_file_close(&f);
	}
	/* Cuts inside the header, inside blocks and between blocks all ran. */
	CHECK(err_seen[0] && err_seen[1] && err_seen[2]);
	free_trace(&t);
}

/* Like check_event, after a block was skipped as damaged: a string may
 * read as "?" (defined in the lost block); counts those in *lost. */
static void check_event_after_damage(const struct ct_event *ev, const struct want *w, size_t i,
				     uint64_t *lost)
{
	const struct ct_schema *s = ct_schema_of(w->kind);
	struct ct_event e = *ev;
	for (unsigned f = 0; f < s->nfields; f++)
		if ((s->type[f] == CT_F_SID || s->type[f] == CT_F_STR) && ev->v[f] == CT_SREF_INLINE &&
		    ev->sl[f] == 1 && ev->s[f][0] == '?' && (w->sl[f] != 1 || w->s[f][0] != '?')) {
			CHECK(w->sl[f] > 0);
			e.s[f] = w->s[f], e.sl[f] = w->sl[f];
			(*lost)++;
		}
	check_event(&e, w, i);
}

/* A damaged byte inside a block: that block is skipped and counted, and
 * every other block reads (stopping there would keep 100,001 of 490,001
 * events). A few bytes of a zstd frame do not
 * change what it decodes to (its window size, for one): those flips must
 * read back every event intact, and must stay rare. */
static void test_corruption(void)
{
	rng_state = 11;
	make_pool(0);
	struct trace t;
	make_trace(&t, 400, 8, 4096);
	uint8_t *copy = malloc(t.file.len);
	int harmless = 0, trials = LIGHT ? 300 : 1500;
	for (int trial = 0; trial < trials; trial++) {
		memcpy(copy, t.file.p, t.file.len);
		int b = (int)below((uint64_t)t.nblocks);
		size_t start = b ? t.block_end[b - 1] : t.hdr_end;
		size_t at;
		if (trial % 10 == 0) {
			/* The block header's magic or raw length. */
			at = start + (below(2) ? below(4) : 8 + below(4));
		} else {
			at = start + 12 + below(t.block_end[b] - start - 12);
		}
		copy[at] ^= (uint8_t)(1 + below(255));
		write_file(copy, t.file.len);
		struct ct_file f;
		CHECK_EQ(ct_file_open(&f, path), 0);
		/* The events of every block but b, in order. */
		size_t first = b ? t.events_upto[b - 1] : 0, n = 0, i = 0;
		uint64_t lost = 0;
		struct ct_event ev;
		while (ct_file_next(&f, &ev)) {
			if (f.damaged && i == first)
				i = t.events_upto[b];
			CHECK(i < t.nev);
			if (f.damaged)
				check_event_after_damage(&ev, &t.ev[i], i, &lost);
			else
				check_event(&ev, &t.ev[i], i);
			i++, n++;
		}
		if (f.status == CT_CLEAN && n == t.nev && trial % 10) {
			harmless++;
			ct_file_close(&f);
			continue;
		}
		size_t in_b = t.events_upto[b] - first;
		if (f.status != CT_DAMAGED || f.damaged != 1 || n != t.nev - in_b ||
		    f.damaged_bytes != t.block_end[b] - start) {
			fprintf(stderr, "byte %zu of block %d damaged: status %s, %zu events of %zu, %llu damaged (%s)\n",
				at, b, ct_status_name(f.status), n, t.nev - in_b, (unsigned long long)f.damaged, f.err);
			exit(1);
		}
		CHECK(strstr(f.err, "1 damaged block skipped") != NULL);
		CHECK(strstr(f.err, "corrupt block") != NULL);
		/* Lost with the last block: the footer. */
		CHECK_EQ(strstr(f.err, "no footer") != NULL, b == t.nblocks - 1);
		CHECK(f.lost_refs >= lost);
		ct_file_close(&f);
	}
	CHECK(harmless * 50 < trials);
	free(copy);
	free_trace(&t);
}

/* ---- blocks that decompress fine but hold bad items */

static size_t item(uint8_t *p, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	uint8_t *q = p;
	for (int i = 0; i < n; i++)
		q = ct_put_varint(q, va_arg(ap, uint64_t));
	va_end(ap);
	return (size_t)(q - p);
}

#define ITEM(...) (len += item(raw + len, PP_NARG(__VA_ARGS__), __VA_ARGS__))
#define PP_NARG(...) (sizeof((uint64_t[]){__VA_ARGS__}) / sizeof(uint64_t))

static void expect_status(const uint8_t *raw, size_t len, enum ct_status status, const char *why,
			  size_t events)
{
	struct buf b = {0};
	start_file(&b);
	uint64_t at = b.len;
	put_block(&b, raw, len);
	put_trailer(&b, at); /* as the writer ends a file; clean only after a footer */
	write_file(b.p, b.len);
	free(b.p);
	struct ct_file f;
	CHECK_EQ(ct_file_open(&f, path), 0);
	struct ct_event ev;
	size_t n = 0;
	while (ct_file_next(&f, &ev))
		n++;
	if (f.status != status || !strstr(f.err, why) || n != events) {
		fprintf(stderr, "expected %s (%s) after %zu events; got %s after %zu: %s\n",
			ct_status_name(status), why, events, ct_status_name(f.status), n, f.err);
		exit(1);
	}
	ct_file_close(&f);
}

/* Bad items: the rest of their block is skipped as damaged. */
static void expect_corrupt(const uint8_t *raw, size_t len, const char *why, size_t events)
{
	expect_status(raw, len, CT_DAMAGED, why, events);
}

static void test_bad_items(void)
{
	uint8_t raw[256];
	size_t len;
	/* A good event for reference: reset (kind 25) has one TS field. */
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(CT_EV_RESET, 4);
	expect_status(raw, len, CT_TRUNCATED, "no footer", 1);
	ITEM(CT_K_FOOTER, 0);
	expect_status(raw, len, CT_CLEAN, "", 1);
	len -= 2;
	raw[len] = 0x80, len++;
	expect_corrupt(raw, len, "item kind", 1);

	len = 0, ITEM(CT_EV_RESET, 0);
	expect_corrupt(raw, len, "outside a thread", 0);
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(CT_EV_LAST);
	expect_corrupt(raw, len, "unknown event kind", 0);
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(15);
	expect_corrupt(raw, len, "unknown event kind", 0);
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(CT_NKINDS);
	expect_corrupt(raw, len, "unknown event kind", 0);
	/* A kind whose low 32 bits name a real kind. */
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM((1ull << 32) + CT_EV_RESET, 0);
	expect_corrupt(raw, len, "unknown event kind", 0);
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(~0ull, 0);
	expect_corrupt(raw, len, "unknown event kind", 0);
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(CT_EV_STEP, 0);
	expect_corrupt(raw, len, "truncated event", 0);
	len = 0, ITEM(CT_K_THREAD, 2);
	expect_corrupt(raw, len, "thread item", 0);
	len = 0, ITEM(CT_K_STR, CT_SID_FIRST, 5, 'a', 'b');
	expect_corrupt(raw, len, "string length", 0);
	/* nvtx_pop: TS then a domain string ref. No strings defined yet. */
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(CT_EV_NVTX_POP, 0, CT_SID_FIRST);
	expect_corrupt(raw, len, "bad string reference", 0);
	len = 0, ITEM(CT_K_STR, CT_SID_FIRST, 1, 'x', CT_K_THREAD, 2, 100), ITEM(CT_EV_NVTX_POP, 0, CT_SID_FIRST + 1);
	expect_corrupt(raw, len, "bad string reference", 0);
	/* String ids only grow; a skipped id stays undefined. */
	len = 0, ITEM(CT_K_STR, CT_SID_FIRST + 1, 1, 'x', CT_K_STR, CT_SID_FIRST, 1, 'y');
	expect_corrupt(raw, len, "string id out of order", 0);
	len = 0, ITEM(CT_K_STR, CT_SID_FIRST + 1, 1, 'x', CT_K_THREAD, 2, 100);
	ITEM(CT_EV_NVTX_POP, 0, CT_SID_FIRST);
	expect_corrupt(raw, len, "bad string reference", 0);
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(CT_EV_THREAD_NAME, 0, 7, CT_SREF_INLINE, 50, 'a');
	expect_corrupt(raw, len, "bad string reference", 0);
	len = 0, ITEM(CT_K_THREAD, 2, 100), ITEM(CT_K_DROPS, CT_NKINDS, 1);
	expect_corrupt(raw, len, "drops item", 0);
	len = 0, ITEM(CT_K_FOOTER, 3, CT_FT_DROPS, 2, CT_NKINDS);
	expect_corrupt(raw, len, "footer", 0);
	len = 0, ITEM(CT_K_FOOTER, 9, 1);
	expect_corrupt(raw, len, "footer", 0);
	len = 0, ITEM(CT_K_THREAD, 2, 100);
	memset(raw + len, 0x80, 11), len += 11;
	expect_corrupt(raw, len, "item kind", 0);

	/* The string ids and inline strings that are right. */
	len = 0, ITEM(CT_K_STR, CT_SID_FIRST, 2, 'h', 'i', CT_K_STR, CT_SID_FIRST + 1, 0, CT_K_THREAD, 2, 100);
	ITEM(CT_EV_THREAD_NAME, 0, 7, CT_SID_FIRST + 1, 1);
	ITEM(CT_EV_THREAD_NAME, 0, 7, CT_SREF_INLINE, 3, 'x', 0, 'y', 0);
	ITEM(CT_EV_THREAD_NAME, 0, 7, CT_SID_FIRST, 0);
	raw[len++] = 0xff; /* not a varint end */
	expect_corrupt(raw, len, "item kind", 3);
}

/* ---- memory bounded by the file's size */

static long peak_rss_kb(void)
{
	struct rusage ru;
	CHECK_EQ(getrusage(RUSAGE_SELF, &ru), 0);
	return ru.ru_maxrss;
}

/* Reads the file at `path` to its end in a child process; returns how much
 * its peak RSS grew, in MB (a child's peak starts at its size at fork). */
static long read_rss_growth_mb(void)
{
	pid_t pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		long before = peak_rss_kb();
		struct ct_file f;
		struct ct_event ev;
		if (ct_file_open(&f, path) == 0) {
			while (ct_file_next(&f, &ev))
				;
			ct_file_close(&f);
		}
		long mb = (peak_rss_kb() - before) / 1024;
		_exit(mb > 250 ? 250 : (int)mb);
	}
	int st;
	CHECK_EQ(waitpid(pid, &st, 0), pid);
	CHECK(WIFEXITED(st));
	return WEXITSTATUS(st);
}

/* String ids that jump (a writer that lost blocks of definitions skips
 * their ids) cost nothing: 1000 jumps of 65537 would take 771 MB if the
 * gaps were filled with empty entries (a 2.8 KB file, tests/fuzz/corpus/
 * fuzz_file/strgap.ctr). The ids handed out are dense. */
static void test_string_gaps(void)
{
	static uint8_t raw[1 << 16];
	size_t len = 0;
	for (uint64_t i = 0; i < 1000; i++)
		ITEM(CT_K_STR, CT_SID_FIRST + i * 65537, 1, 'a' + i % 26);
	struct buf b = {0};
	start_file(&b);
	put_block(&b, raw, len);
	write_file(b.p, b.len);
	long mb = read_rss_growth_mb();
	if (mb > 32) {
		fprintf(stderr, "string id gaps: reading a %zu-byte file took %ld MB\n", b.len, mb);
		exit(1);
	}

	ITEM(CT_K_STR, 0xffffffffull, 2, 'z', 'z');
	ITEM(CT_K_THREAD, 2, 100);
	/* nvtx_pop: TS, domain. The first, 500th and last strings. */
	ITEM(CT_EV_NVTX_POP, 0, CT_SID_FIRST);
	ITEM(CT_EV_NVTX_POP, 0, CT_SID_FIRST + 500 * 65537);
	ITEM(CT_EV_NVTX_POP, 0, 0xffffffffull);
	ITEM(CT_K_FOOTER, 0);
	b.len = 0;
	start_file(&b);
	uint64_t at = b.len;
	put_block(&b, raw, len);
	put_trailer(&b, at);
	write_file(b.p, b.len);
	CHECK(b.len < 8192);
	free(b.p);

	struct ct_file f;
	struct ct_event ev;
	CHECK_EQ(ct_file_open(&f, path), 0);
	CHECK_EQ(ct_file_next(&f, &ev), 1);
	const unsigned dom = F_NVTX_POP_DOMAIN;
	CHECK_EQ(ev.v[dom], CT_SID_FIRST);
	CHECK_MEM(ev.s[dom], ev.sl[dom], "a", 1);
	CHECK_EQ(ct_file_next(&f, &ev), 1);
	CHECK_EQ(ev.v[dom], CT_SID_FIRST + 500);
	CHECK_MEM(ev.s[dom], ev.sl[dom], "g", 1); /* 'a' + 500 % 26 */
	CHECK_EQ(ct_file_next(&f, &ev), 1);
	CHECK_EQ(ev.v[dom], CT_SID_FIRST + 1000);
	CHECK_MEM(ev.s[dom], ev.sl[dom], "zz", 2);
	CHECK_EQ(ct_file_next(&f, &ev), 0);
	CHECK_EQ(f.status, CT_CLEAN);
	CHECK_EQ(f.nstr, 1001);
	ct_file_close(&f);

	/* An id between two runs, and one past the last. */
	len = 0;
	ITEM(CT_K_STR, CT_SID_FIRST, 1, 'a', CT_K_STR, CT_SID_FIRST + 10, 1, 'b');
	ITEM(CT_K_THREAD, 2, 100), ITEM(CT_EV_NVTX_POP, 0, CT_SID_FIRST + 5);
	expect_corrupt(raw, len, "bad string reference", 0);
	len = 0;
	ITEM(CT_K_STR, CT_SID_FIRST, 1, 'a', CT_K_STR, CT_SID_FIRST + 10, 1, 'b');
	ITEM(CT_K_THREAD, 2, 100), ITEM(CT_EV_NVTX_POP, 0, CT_SID_FIRST + 11);
	expect_corrupt(raw, len, "bad string reference", 0);
	/* Writers number strings with 32 bits. */
	len = 0, ITEM(CT_K_STR, 1ull << 32, 1, 'a');
	expect_corrupt(raw, len, "string id out of order", 0);
}

/* Strings compress to almost nothing: 40 strings of 1 MB of zeros are a
 * few KB on disk. The string table stops at 16 MB plus 16 bytes per byte
 * of file, with a message, where it took 40 MB. */
static void test_string_budget(void)
{
	const uint32_t n = 1 << 20;
	uint8_t *raw = calloc(1, 12 * (size_t)n + 64);
	CHECK(raw != NULL);
	struct buf b = {0};
	start_file(&b);
	uint64_t id = CT_SID_FIRST;
	for (int blk = 0; blk < 4; blk++) {
		size_t len = 0;
		for (int i = 0; i < 10; i++) {
			ITEM(CT_K_STR, id++, n);
			len += n; /* n zero bytes */
		}
		put_block(&b, raw, len);
	}
	write_file(b.p, b.len);
	CHECK(b.len < 65536);
	struct ct_file f;
	struct ct_event ev;
	CHECK_EQ(ct_file_open(&f, path), 0);
	CHECK_EQ(ct_file_next(&f, &ev), 0);
	if (f.status != CT_CORRUPT || !strstr(f.err, "more strings than a file of its size holds")) {
		fprintf(stderr, "40 MB of strings in a %zu-byte file: %s, %zu strings (%s)\n", b.len,
			ct_status_name(f.status), f.nstr, f.err);
		exit(1);
	}
	CHECK(f.nstr < 17);
	ct_file_close(&f);
	free(b.p);
	free(raw);
}

/* ---- damaged blocks skipped */

struct dfile {
	struct buf b;
	size_t start[8], end[8]; /* each block's first byte and end */
	int n;
};

static void dblock(struct dfile *d, const uint8_t *raw, size_t len)
{
	d->start[d->n] = d->b.len;
	put_block(&d->b, raw, len);
	d->end[d->n++] = d->b.len;
}

/* Blocks 0-2 define "alpha", "beta", "gamma" (ids 2, 3, 4) and refer to
 * them (nvtx_pop: TS, domain); block 3 is the footer. */
static void make_dfile(struct dfile *d)
{
	memset(d, 0, sizeof *d);
	start_file(&d->b);
	uint8_t raw[128];
	size_t len = 0;
	ITEM(CT_K_STR, 2, 5, 'a', 'l', 'p', 'h', 'a', CT_K_THREAD, 2, 100, CT_EV_NVTX_POP, 0, 2);
	dblock(d, raw, len);
	len = 0;
	ITEM(CT_K_STR, 3, 4, 'b', 'e', 't', 'a', CT_K_THREAD, 2, 100, CT_EV_NVTX_POP, 0, 3);
	ITEM(CT_EV_NVTX_POP, 0, 2);
	dblock(d, raw, len);
	len = 0;
	ITEM(CT_K_STR, 4, 5, 'g', 'a', 'm', 'm', 'a', CT_K_THREAD, 2, 100, CT_EV_NVTX_POP, 0, 3);
	ITEM(CT_EV_NVTX_POP, 0, 4, CT_EV_NVTX_POP, 0, 2);
	dblock(d, raw, len);
	len = 0;
	ITEM(CT_K_FOOTER, 0);
	dblock(d, raw, len);
	put_trailer(&d->b, d->start[3]);
}

/* Reads the file; the domains read, joined by spaces. */
static const char *read_domains(struct ct_file *f)
{
	static char out[256];
	size_t o = 0, n = 0;
	struct ct_event ev;
	const unsigned d = F_NVTX_POP_DOMAIN; /* the file holds pops */
	CHECK_EQ(ct_file_open(f, path), 0);
	out[0] = 0;
	while (ct_file_next(f, &ev)) {
		CHECK(o + ev.sl[d] + 2 < sizeof out);
		o += (size_t)snprintf(out + o, sizeof out - o, "%s%.*s", n++ ? " " : "",
		                      (int)ev.sl[d], ev.s[d]);
		/* Ids handed out are dense; a lost string is uninterned. */
		CHECK(ev.v[d] == CT_SREF_NONE ||
		      (ev.v[d] == CT_SREF_INLINE
		           ? ev.sl[d] == 1 && ev.s[d][0] == '?'
		           : ev.v[d] >= CT_SID_FIRST && ev.v[d] < CT_SID_FIRST + f->nstr));
	}
	return out;
}

static void expect_read(const struct buf *b, const char *domains, enum ct_status status, uint64_t damaged,
			const char *why)
{
	write_file(b->p, b->len);
	struct ct_file f;
	const char *got = read_domains(&f);
	if (strcmp(got, domains) || f.status != status || f.damaged != damaged || !strstr(f.err, why)) {
		fprintf(stderr, "expected [%s] %s, %llu damaged (%s); got [%s] %s, %llu damaged: %s\n", domains,
			ct_status_name(status), (unsigned long long)damaged, why, got, ct_status_name(f.status),
			(unsigned long long)f.damaged, f.err);
		exit(1);
	}
	ct_file_close(&f);
}

static void test_skip_damaged(void)
{
	struct dfile d;
	make_dfile(&d);
	expect_read(&d.b, "alpha beta alpha beta gamma alpha", CT_CLEAN, 0, "");
	struct buf c = {0};
	put(&c, d.b.p, d.b.len);

	/* Block 1's checksum: skipped by the length in its header. Its string
	 * "beta" is lost: block 2's reference reads "?", once. */
	c.p[d.end[1] - 1] ^= 0x40;
	expect_read(&c, "alpha ? gamma alpha", CT_DAMAGED, 1, "1 damaged block skipped (the first: corrupt block at offset");
	struct ct_file f;
	read_domains(&f);
	CHECK_EQ(f.lost_refs, 1);
	CHECK_EQ(f.damaged_bytes, d.end[1] - d.start[1]);
	CHECK_EQ(f.nblocks, 3);
	CHECK(f.final_footer);
	CHECK(!strstr(f.err, "truncated"));
	ct_file_close(&f);

	/* Block 1's header: its length too short, too long (past the next
	 * block, or past any block's bound), its magic: found by searching. */
	uint32_t zlen, bad[] = {1, 0, 0x10000, 0xffffff00u};
	memcpy(&zlen, d.b.p + d.start[1] + 4, 4);
	bad[1] = zlen + (uint32_t)(d.end[2] - d.end[1]) + 3;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		memcpy(c.p, d.b.p, d.b.len);
		memcpy(c.p + d.start[1] + 4, &bad[i], 4);
		expect_read(&c, "alpha ? gamma alpha", CT_DAMAGED, 1, "1 damaged block skipped");
	}
	memcpy(c.p, d.b.p, d.b.len);
	c.p[d.start[1]] ^= 1;
	expect_read(&c, "alpha ? gamma alpha", CT_DAMAGED, 1, "corrupt block header at offset");

	/* Two blocks in a row; the footer's block. */
	memcpy(c.p, d.b.p, d.b.len);
	c.p[d.end[1] - 1] ^= 0x40;
	c.p[d.end[2] - 1] ^= 0x40;
	expect_read(&c, "alpha", CT_DAMAGED, 2, "2 damaged blocks skipped");
	memcpy(c.p, d.b.p, d.b.len);
	c.p[d.end[3] - 1] ^= 0x40;
	expect_read(&c, "alpha beta alpha beta gamma alpha", CT_DAMAGED, 1, "; then truncated: no footer");
	/* Damage, then a file cut short. */
	memcpy(c.p, d.b.p, d.b.len);
	c.p[d.end[1] - 1] ^= 0x40;
	c.len = d.end[3] - 2;
	expect_read(&c, "alpha ? gamma alpha", CT_DAMAGED, 1, "; then truncated inside the block at offset");
	/* Damage as long as the largest block, and more: reading stops. */
	c.len = 0;
	put(&c, d.b.p, d.end[1]);
	c.p[d.end[1] - 1] ^= 0x40;
	size_t junk = 17u << 20;
	uint8_t *z = calloc(1, junk);
	put(&c, z, junk);
	free(z);
	put(&c, d.b.p + d.end[1], d.b.len - d.end[1]);
	expect_read(&c, "alpha", CT_CORRUPT, 1, "no intact block in the");
	free(c.p);
	free(d.b.p);

	/* Bad items: the rest of their block is skipped, the next block
	 * read; its references to strings of the skipped part read "?". */
	uint8_t raw[128];
	size_t len = 0;
	struct buf b = {0};
	start_file(&b);
	ITEM(CT_K_THREAD, 2, 100, CT_EV_NVTX_POP, 0, 0, 77, CT_K_STR, 2, 1, 'x');
	put_block(&b, raw, len);
	len = 0;
	ITEM(CT_K_THREAD, 2, 100, CT_EV_NVTX_POP, 0, 2, CT_K_FOOTER, 0);
	uint64_t at = b.len;
	put_block(&b, raw, len);
	put_trailer(&b, at);
	expect_read(&b, " ?", CT_DAMAGED, 1, "1 damaged block skipped (the first: corrupt data in block 1 at offset");
	free(b.p);
}

/* ---- the header on its own */

static void test_header_parse(void)
{
	uint8_t tlv[1024];
	size_t n = header_fields(tlv);
	struct ct_header h;
	char err[128];
	CHECK_EQ(ct_header_parse(&h, tlv, n, err, sizeof err), 0);
	check_header(&h);
	ct_header_free(&h);

	/* Nothing: defaults, empty strings (never NULL). */
	CHECK_EQ(ct_header_parse(&h, tlv, 0, err, sizeof err), 0);
	CHECK_EQ(h.rank, -1);
	CHECK_EQ(h.world_size, -1);
	CHECK(h.host && h.version && h.cmdline && h.config && h.rank_source && h.job_id);
	CHECK_STR(h.host, "");
	ct_header_free(&h);

	/* Every cut: whole fields parse, a cut inside a field is an error. */
	size_t bounds[32], nb = 0;
	for (const uint8_t *p = tlv, *end = tlv + n; p < end;) {
		uint64_t tag, len;
		CHECK_EQ(ct_get_varint(&p, end, &tag), 0);
		CHECK_EQ(ct_get_varint(&p, end, &len), 0);
		p += len;
		bounds[nb++] = (size_t)(p - tlv);
	}
	for (size_t cut = 0; cut < n; cut++) {
		int at_bound = cut == 0;
		for (size_t i = 0; i < nb; i++)
			at_bound |= bounds[i] == cut;
		uint8_t *copy = malloc(cut + 1);
		memcpy(copy, tlv, cut);
		err[0] = 0;
		int rc = ct_header_parse(&h, copy, cut, err, sizeof err);
		CHECK_EQ(rc, at_bound ? 0 : -1);
		if (rc)
			CHECK(strstr(err, "damaged header") != NULL);
		else
			ct_header_free(&h);
		free(copy);
	}

	/* A repeated field: the last one counts. */
	uint8_t *p = tlv;
	p = ct_tlv_str(p, CT_H_HOST, "a", 1);
	p = ct_tlv_str(p, CT_H_HOST, "bb", 2);
	p = ct_tlv_u(p, CT_H_RANK, ct_zigzag(3));
	p = ct_tlv_u(p, CT_H_RANK, ct_zigzag(-7));
	CHECK_EQ(ct_header_parse(&h, tlv, (size_t)(p - tlv), err, sizeof err), 0);
	CHECK_STR(h.host, "bb");
	CHECK_EQ(h.rank, -7);
	ct_header_free(&h);

	/* A number field that is not a number. */
	p = tlv;
	p = ct_tlv_str(p, CT_H_PID, "\x80\x80", 2);
	CHECK_EQ(ct_header_parse(&h, tlv, (size_t)(p - tlv), err, sizeof err), -1);
	CHECK(strstr(err, "damaged header field 3") != NULL);

	/* Fields this version does not know, whatever they hold, are
	 * skipped: a later minor version may add strings or empty values. */
	for (unsigned tag = 15; tag < 200; tag += 7) {
		if (tag >= CT_H_FLIGHT_WANT && tag <= CT_H_FLIGHT_SHORT)
			continue; /* known since 1.5 */
		p = tlv;
		p = ct_tlv_str(p, tag, "", 0);
		p = ct_tlv_str(p, tag, "\xff\xff", 2);
		p = ct_tlv_u(p, CT_H_PID, 5);
		CHECK_EQ(ct_header_parse(&h, tlv, (size_t)(p - tlv), err, sizeof err), 0);
		CHECK_EQ(h.pid, 5);
		ct_header_free(&h);
	}
}

/* The file-level checks ct_file_open makes before any block. */
static void test_open_errors(void)
{
	struct ct_file f;
	CHECK_EQ(ct_file_open(&f, "/nonexistent/x.ctr"), -1);
	CHECK(strstr(f.err, "/nonexistent/x.ctr") != NULL);

	struct buf b = {0};
	start_file(&b);
	uint16_t major = CT_FORMAT_MAJOR + 1;
	memcpy(b.p + 8, &major, 2);
	write_file(b.p, b.len);
	CHECK_EQ(ct_file_open(&f, path), -1);
	CHECK(strstr(f.err, "format version") != NULL);

	uint32_t hl = CT_HEADER_MAX + 1;
	memcpy(b.p + 8, &(uint16_t){CT_FORMAT_MAJOR}, 2);
	memcpy(b.p + 12, &hl, 4);
	write_file(b.p, b.len);
	CHECK_EQ(ct_file_open(&f, path), -1);
	CHECK(strstr(f.err, "damaged header") != NULL);

	/* A later minor version opens. */
	free(b.p);
	b = (struct buf){0};
	start_file(&b);
	memcpy(b.p + 10, &(uint16_t){CT_FORMAT_MINOR + 5}, 2);
	reseal(&b);
	write_file(b.p, b.len);
	CHECK_EQ(ct_file_open(&f, path), 0);
	CHECK_EQ(f.h.minor, CT_FORMAT_MINOR + 5);
	/* Header only: no blocks, no footer. */
	struct ct_event ev;
	CHECK_EQ(ct_file_next(&f, &ev), 0);
	CHECK_EQ(f.status, CT_TRUNCATED);
	ct_file_close(&f);

	/* An empty block is allowed; the footer must be the last item. */
	put_block(&b, NULL, 0);
	uint8_t raw[64];
	size_t len = 0;
	ITEM(CT_K_FOOTER, 0);
	uint64_t at = b.len;
	put_block(&b, raw, len);
	write_file(b.p, b.len);
	CHECK_EQ(ct_file_open(&f, path), 0);
	CHECK_EQ(ct_file_next(&f, &ev), 0);
	CHECK_EQ(f.status, CT_TRUNCATED); /* a footer without its trailer */
	CHECK(strstr(f.err, "no trailer after the footer") != NULL);
	ct_file_close(&f);
	put_trailer(&b, at);
	write_file(b.p, b.len);
	CHECK_EQ(ct_file_open(&f, path), 0);
	CHECK_EQ(ct_file_next(&f, &ev), 0);
	CHECK_EQ(f.status, CT_CLEAN);
	ct_file_close(&f);
	/* Data after the footer's block: not a clean end. */
	put(&b, "junk", 4);
	write_file(b.p, b.len);
	CHECK_EQ(ct_file_open(&f, path), 0);
	CHECK_EQ(ct_file_next(&f, &ev), 0);
	CHECK(f.status == CT_TRUNCATED || f.status == CT_CORRUPT);
	ct_file_close(&f);
	free(b.p);
}

/* The header's checksum (format 1.1): one flipped bit anywhere in the
 * header is a clear error. Without it a flipped bit goes unnoticed: a
 * version that reads "0.5.0", a config line changed. Files of
 * format 1.0 (no checksum) still read. */
static void test_header_checksum(void)
{
	CHECK_EQ(ct_crc32c(0, "123456789", 9), 0xe3069283u); /* CRC-32C check value */
	CHECK_EQ(ct_crc32c(ct_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);

	struct buf b = {0};
	start_file(&b);
	uint32_t hl;
	memcpy(&hl, b.p + 12, 4);
	size_t hend = 16 + hl;
	CHECK_EQ(b.p[hend - 6], CT_H_CRC);
	uint8_t raw[64];
	size_t len = 0;
	ITEM(CT_K_THREAD, 2, 100), ITEM(CT_EV_RESET, 4), ITEM(CT_K_FOOTER, 0);
	uint64_t at = b.len;
	put_block(&b, raw, len);
	put_trailer(&b, at);
	write_file(b.p, b.len);
	struct ct_file f;
	struct ct_event ev;
	CHECK_EQ(ct_file_open(&f, path), 0);
	check_header(&f.h);
	CHECK_EQ(f.h.minor, CT_FORMAT_MINOR);
	CHECK_EQ(ct_file_next(&f, &ev), 1);
	ct_file_close(&f);

	int opened = 0; /* or failed with the wrong message */
	for (size_t i = 0; i < hend; i++) {
		for (int bit = 0; bit < 8; bit++) {
			b.p[i] ^= (uint8_t)(1 << bit);
			write_file(b.p, b.len);
			b.p[i] ^= (uint8_t)(1 << bit);
			if (ct_file_open(&f, path) == 0) {
				fprintf(stderr, "bit %d of header byte %zu flipped: opens (version %s)\n", bit,
					i, f.h.version);
				ct_file_close(&f);
				opened++;
				continue;
			}
			/* The magic and the major version say what they are; a
			 * length that runs past the file or the limit too. */
			const char *want = i < 8 ? "not a cuptrace file" : i < 10 ? "format version" : "header corrupt";
			if (!strstr(f.err, want) && !(i >= 12 && i < 16 && (strstr(f.err, "truncated inside the header") ||
									     strstr(f.err, "damaged header (length")))) {
				fprintf(stderr, "bit %d of header byte %zu flipped: %s\n", bit, i, f.err);
				opened++;
			}
		}
	}
	if (opened) {
		fprintf(stderr, "%d of %zu one-bit flips of the header opened or gave the wrong error\n",
			opened, 8 * hend);
		exit(1);
	}

	/* Format 1.0: no checksum, reads; 1.1 without one does not. */
	free(b.p);
	b = (struct buf){0};
	start_file_1_0(&b);
	at = b.len;
	put_block(&b, raw, len);
	put_trailer(&b, at);
	write_file(b.p, b.len);
	CHECK_EQ(ct_file_open(&f, path), 0);
	check_header(&f.h);
	CHECK_EQ(f.h.minor, 0);
	CHECK_EQ(ct_file_next(&f, &ev), 1);
	CHECK_EQ(ct_file_next(&f, &ev), 0);
	CHECK_EQ(f.status, CT_CLEAN);
	ct_file_close(&f);
	b.p[10] = 1;
	write_file(b.p, b.len);
	CHECK_EQ(ct_file_open(&f, path), -1);
	CHECK(strstr(f.err, "header corrupt (no checksum)") != NULL);
	free(b.p);
}

/* ct_enc_record refuses records that do not match their schema. */
static void test_enc_rejects(void)
{
	struct ct_enc e;
	CHECK_EQ(ct_enc_init(&e, 1024), 0);
	ct_enc_thread(&e, 1);
	uint64_t mem[16] = {0};
	struct ct_rec *r = (struct ct_rec *)mem;
	r->kind = CT_EV_STEP;
	r->size = ct_rec_size(F_STEP_N, 0);
	CHECK_EQ(ct_enc_record(&e, r), 0);
	r->size = ct_rec_size(F_STEP_N - 1, 0);
	CHECK_EQ(ct_enc_record(&e, r), -1);
	r->size = ct_rec_size(F_STEP_N, 0);
	r->kind = CT_EV_LAST;
	CHECK_EQ(ct_enc_record(&e, r), -1);
	r->kind = 3;
	CHECK_EQ(ct_enc_record(&e, r), -1);
	/* thread_name: its name (STR) with 9 bytes claimed, 8 present */
	r->kind = CT_EV_THREAD_NAME;
	r->size = ct_rec_size(F_THREAD_NAME_N, 8);
	r->f[F_THREAD_NAME_NAME] = 9;
	CHECK_EQ(ct_enc_record(&e, r), -1);
	r->f[F_THREAD_NAME_NAME] = 8;
	CHECK_EQ(ct_enc_record(&e, r), 0);
	CHECK_EQ(e.events[CT_EV_STEP], 1);
	CHECK_EQ(e.events[CT_EV_THREAD_NAME], 1);
	/* Handles past the table's reach are refused. */
	CHECK_EQ(ct_enc_handle(&e, 1u << 30, "x", 1), -1);
	ct_enc_free(&e);
}

/* Footer blocks followed by trailers, as the writer closes a file: the
 * totals are read at open through the last trailer, a trailer between
 * blocks is skipped, and a cut inside the last trailer is a truncation. */
static void add_footer(struct buf *b, struct ct_enc *e, uint64_t mark)
{
	uint64_t drops[CT_NKINDS] = {0};
	drops[CT_EV_NVTX_POP] = mark;
	ct_enc_new_block(e);
	CHECK_EQ(ct_enc_footer(e, drops, 1, 2), 0);
	uint64_t at = b->len;
	size_t n;
	const uint8_t *raw = ct_enc_block(e, &n);
	put_block(b, raw, n);
	put_trailer(b, at);
	ct_enc_new_block(e);
}

static void add_events(struct buf *b, struct ct_enc *e, int n)
{
	ct_enc_thread(e, 7);
	for (int i = 0; i < n; i++) {
		/* the record's header word (size, kind), then its fields */
		uint64_t rec[1 + F_NVTX_END_N] = {ct_rec_size(F_NVTX_END_N, 0) |
		                                  (uint64_t)CT_EV_NVTX_END << 32};
		rec[1 + F_NVTX_END_TS] = 1000 + (uint64_t)i;
		rec[1 + F_NVTX_END_ID] = (uint64_t)i;
		CHECK_EQ(ct_enc_record(e, (const struct ct_rec *)rec), 0);
	}
	size_t len;
	const uint8_t *raw = ct_enc_block(e, &len);
	put_block(b, raw, len);
	ct_enc_new_block(e);
}

static void test_trailers(void)
{
	struct buf b = {0};
	struct ct_enc e;
	CHECK_EQ(ct_enc_init(&e, 1 << 20), 0);
	start_file(&b);
	add_events(&b, &e, 10);
	add_footer(&b, &e, 5); /* a footer written on a signal the program survived */
	add_events(&b, &e, 20);
	add_footer(&b, &e, 9);
	write_file(b.p, b.len);
	struct ct_file f;
	CHECK_EQ(ct_file_open(&f, path), 0);
	CHECK_EQ(f.final_footer, 1);
	CHECK_EQ(f.f_drops[CT_EV_NVTX_POP], 9); /* the last footer, before any event */
	CHECK_EQ(f.f_events[CT_EV_NVTX_END], 30);
	struct ct_event ev;
	int n = 0;
	while (ct_file_next(&f, &ev) == 1) {
		CHECK_EQ(ev.v[F_NVTX_END_ID], (uint64_t)(n < 10 ? n : n - 10));
		n++;
	}
	CHECK_EQ(n, 30);
	CHECK_EQ(f.status, CT_CLEAN);
	ct_file_close(&f);
	/* Cut inside the last trailer: every event, no final footer, truncated. */
	write_file(b.p, b.len - 3);
	CHECK_EQ(ct_file_open(&f, path), 0);
	CHECK_EQ(f.final_footer, 0);
	for (n = 0; ct_file_next(&f, &ev) == 1; n++)
		;
	CHECK_EQ(n, 30);
	CHECK_EQ(f.status, CT_TRUNCATED);
	ct_file_close(&f);
	ct_enc_free(&e);
	free(b.p);
}

/* A thread_name record naming name, at ts. */
static void thread_name(struct ct_enc *e, uint64_t ts, const char *name)
{
	uint64_t buf[16] = {0};
	struct ct_rec *r = (struct ct_rec *)buf;
	size_t n = strlen(name);
	r->size = ct_rec_size(F_THREAD_NAME_N, (uint32_t)n);
	r->kind = CT_EV_THREAD_NAME;
	r->f[F_THREAD_NAME_TS] = ts;
	r->f[F_THREAD_NAME_TID] = 7;
	r->f[F_THREAD_NAME_NAME] = n;
	memcpy(&r->f[F_THREAD_NAME_N], name, n);
	CHECK_EQ(ct_enc_record(e, r), 0);
}

/* A flight window (libtrace/writer_flight.c): the block that defined the
 * strings is dropped; the window's first block defines them again with
 * their ids (ct_enc_strings_below), a string defined by a kept block goes
 * inline in it; the kept block follows as it was encoded. */
static void test_flight_window(void)
{
	struct ct_enc e;
	CHECK_EQ(ct_enc_init(&e, 1 << 16), 0);
	ct_enc_thread(&e, 7);
	thread_name(&e, 100, "alpha"); /* dropped: defines 2 and 3 */
	thread_name(&e, 110, "beta");
	ct_enc_new_block(&e);
	uint32_t sid0 = e.st.next_sid;
	CHECK_EQ(sid0, CT_SID_FIRST + 2);
	thread_name(&e, 200, "alpha"); /* kept: refers to 2, defines 4 */
	thread_name(&e, 210, "gamma");
	size_t n;
	const uint8_t *raw = ct_enc_block(&e, &n);
	uint8_t kept[4096];
	CHECK(n <= sizeof kept);
	memcpy(kept, raw, n);
	size_t kept_n = n;
	ct_enc_new_block(&e);
	CHECK_EQ(ct_enc_strings_below(&e, sid0), 0);
	thread_name(&e, 50, "gamma"); /* id 4 is the kept block's: inline */
	thread_name(&e, 60, "beta");  /* 3, defined above */
	thread_name(&e, 70, "delta"); /* new: inline, never interned */
	e.sid_limit = 0;
	CHECK_EQ(e.st.next_sid, CT_SID_FIRST + 3);
	raw = ct_enc_block(&e, &n);
	struct buf b = {0};
	start_file(&b);
	put_block(&b, raw, n);
	put_block(&b, kept, kept_n);
	write_file(b.p, b.len);
	free(b.p);
	ct_enc_free(&e);

	static const char *const want[] = {"gamma", "beta", "delta", "alpha", "gamma"};
	struct ct_file f;
	struct ct_event ev;
	CHECK_EQ(ct_file_open(&f, path), 0);
	for (size_t i = 0; i < 5; i++) {
		CHECK_EQ(ct_file_next(&f, &ev), 1);
		const unsigned k = F_THREAD_NAME_NAME;
		CHECK_MEM(ev.s[k], ev.sl[k], want[i], strlen(want[i]));
	}
	CHECK_EQ(ct_file_next(&f, &ev), 0);
	CHECK_EQ(f.damaged, 0);
	ct_file_close(&f);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/t.ctr", dir);

	test_header_parse();
	test_open_errors();
	test_header_checksum();
	test_enc_rejects();
	test_bad_items();
	test_string_gaps();
	test_string_budget();
	test_flight_window();
	/* Interning limits: tiny (most strings inline), none, roomy. */
	test_round_trip(1, 20000, 20, 600);
	test_round_trip(2, 3000, 3, 0);
	test_round_trip(3, 5000, 1, 1 << 20);
	test_truncation();
	test_corruption();
	test_skip_damaged();
	test_trailers();

	unlink(path);
	rmdir(dir);
	for (int i = 0; i < NSTR; i++)
		free(pool[i]);
	for (int i = 0; i < NHANDLE; i++)
		free(htext[i]);
	return 0;
}
