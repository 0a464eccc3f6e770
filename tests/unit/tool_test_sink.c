// SPDX-License-Identifier: MIT
/* The conversion sink (write/sink.h) writes pieces in key order whatever
 * order they are handed over in: later units first, a unit's pieces
 * backwards, more than the sink keeps in memory (so that chunks go through
 * the spill files), a piece that comes after its unit was closed, the
 * tail; plain and gzip. One thread hands everything over, in an order
 * chosen to be the worst, so the test is the same every run (threads and
 * timing: tests/tsan_tools.sh and tests/integration/outputs/test_convert_jobs.py). */
#include "check.h"
#include "write/sink.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define UNITS 3
#define PIECES 4
#define CHUNKS 2
#define CHUNK (700u << 10) /* 3 x 4 x 2 x 700 KB: past the 4 MB kept in memory */

static char *expect;
static size_t nexpect;

/* A chunk's bytes tell which it is. */
static size_t fill(char *b, unsigned unit, unsigned piece, unsigned chunk)
{
	size_t n = CHUNK - 1000 * (unit + piece + chunk); /* lengths differ */
	for (size_t i = 0; i < n; i++)
		b[i] = (char)('a' + (unit * 7 + piece * 3 + chunk + i / 4093) % 26);
	snprintf(b, 32, "<%u.%u.%u>", unit, piece, chunk);
	return n;
}

static void put(struct sink *s, uint64_t key, const char *text, size_t n)
{
	char *b = malloc(n);
	size_t cap = n;
	CHECK(b);
	memcpy(b, text, n);
	sink_put(s, key, &b, &cap, n);
	free(b); /* the spare buffer handed back, or NULL */
}

static void put_unit_piece(struct sink *s, unsigned unit, unsigned piece)
{
	char *b = malloc(CHUNK);
	CHECK(b);
	for (unsigned c = 0; c < CHUNKS; c++) {
		size_t n = fill(b, unit, piece, c);
		put(s, SINK_KEY(unit, piece), b, n);
	}
	free(b);
	sink_done(s, SINK_KEY(unit, piece), piece == PIECES - 1);
}

static void expected(void)
{
	expect = malloc((size_t)UNITS * PIECES * CHUNKS * CHUNK + 64);
	CHECK(expect);
	memcpy(expect, "HEAD", 4);
	nexpect = 4;
	for (unsigned u = 1; u <= UNITS; u++)
		for (unsigned p = 0; p < PIECES; p++)
			for (unsigned c = 0; c < CHUNKS; c++)
				nexpect += fill(expect + nexpect, u, p, c);
	memcpy(expect + nexpect, "LATETAIL", 8);
	nexpect += 8;
}

static void write_one(const char *path)
{
	struct sink *s = sink_open(path);
	CHECK(s);
	/* the last unit first, whole; then the middle one backwards; the
	 * head; the first unit, which lets all the rest out */
	for (unsigned p = 0; p < PIECES; p++)
		put_unit_piece(s, 3, p);
	for (unsigned p = PIECES; p-- > 0;)
		put_unit_piece(s, 2, p);
	put(s, SINK_KEY(0, 0), "HEAD", 4);
	sink_done(s, SINK_KEY(0, 0), 1);
	for (unsigned p = 0; p < PIECES; p++)
		put_unit_piece(s, 1, p);
	/* a piece of unit 1 after its last: out as it comes */
	put(s, SINK_KEY(1, PIECES), "LATE", 4);
	sink_done(s, SINK_KEY(1, PIECES), 0);
	put(s, SINK_KEY(UNITS + 1, 0), "TAIL", 4);
	CHECK(sink_close(s) == 0);
	sink_thread_done();
}

static char *read_all(const char *path, size_t *n, int gz)
{
	size_t cap = nexpect + (1u << 20);
	char *b = malloc(cap);
	CHECK(b);
	gzFile f = gz ? gzopen(path, "rb") : NULL;
	FILE *p = gz ? NULL : fopen(path, "rb");
	CHECK(gz ? f != NULL : p != NULL);
	int r = gz ? gzread(f, b, (unsigned)cap) : (int)fread(b, 1, cap, p);
	CHECK(r >= 0);
	*n = (size_t)r;
	if (gz)
		gzclose(f);
	else
		fclose(p);
	return b;
}

int main(void)
{
	char dir[] = "/tmp/ct_sink_XXXXXX";
	CHECK(mkdtemp(dir));
	expected();
	for (int gz = 0; gz < 2; gz++) {
		char path[64];
		snprintf(path, sizeof path, "%s/out.json%s", dir, gz ? ".gz" : "");
		write_one(path);
		size_t n;
		char *got = read_all(path, &n, gz);
		CHECK_MEM(got, n, expect, nexpect);
		free(got);
		unlink(path);
	}
	rmdir(dir); /* fails if a spill file was left behind */
	CHECK(access(dir, F_OK) != 0);
	free(expect);
	puts("tool_test_sink: ok");
	return 0;
}
