// SPDX-License-Identifier: MIT
/* The writer's state (writer_int.h) and the block it builds: records and
 * definitions encoded into it, then the block compressed and written to
 * the file, which its first block opens. */
#include "writer_int.h"
#include "clock.h"
#include "defs.h"
#include "flight.h"
#include "log.h"
#include "trace.h"
#include "watchdog.h"

#include <stdlib.h>
#include <string.h>
#include <zstd.h>

struct ct_wr_state ct_wr = {.start_lock = PTHREAD_MUTEX_INITIALIZER, .out.fd = -1, .part = 1};

/* A block that never reaches the file takes its string definitions with
 * it: start the string table over and queue every definition again, so
 * later blocks never refer to strings the file does not hold. */
static void discard_block(void)
{
	ct_enc_forget_strings(&ct_wr.enc);
	ct_defs_replay();
	ct_enc_new_block(&ct_wr.enc);
	if (ct_wr.flight && !ct_wr.dumping) /* the blocks kept name strings now gone */
		ct_fl_clear();
}

/* Flight mode: the block being begun (what its window needs before it). */
void ct_wr_flight_begin_block(void)
{
	ct_wr.fl_t0 = 0; /* set when its first records come (ct_wr_flight_tick) */
	ct_wr.fl_sid0 = ct_wr.enc.st.next_sid;
	ct_wr.fl_defs0 = ct_defs_drained();
	memcpy(ct_wr.fl_events, ct_wr.enc.events, sizeof ct_wr.fl_events);
}

/* Flight mode: the block kept in the store, its event counts with it. */
void ct_wr_flight_keep(const uint8_t *z, size_t zlen)
{
	uint32_t counts[CT_NKINDS];
	unsigned n = 0;
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		uint64_t d = ct_wr.enc.events[k] - ct_wr.fl_events[k];
		if (d)
			counts[n++] = k << 24 | (uint32_t)(d & 0xffffff);
	}
	uint8_t *copy = malloc(zlen);
	if (copy)
		memcpy(copy, z, zlen);
	uint64_t now = ct_now(), t0 = ct_wr.fl_t0 ? ct_wr.fl_t0 : ct_wr.fl_tick;
	if (!t0 || t0 > now)
		t0 = now;
	if (!copy || ct_fl_push(copy, zlen, t0, now, ct_wr.fl_sid0, ct_wr.fl_defs0, counts, n))
		ct_once(flmem, CT_LOG_WARN, "out of memory keeping the flight window; events lost");
}

/* The block compressed into zbuf behind its 12-byte header; its whole
 * length, or 0 when it was lost (said; discarded). */
static size_t compress_block(void)
{
	size_t raw_len;
	const uint8_t *raw = ct_enc_block(&ct_wr.enc, &raw_len);
	if (!raw) {
		ct_once(boom, CT_LOG_WARN, "out of memory assembling a block; events lost");
		discard_block();
		return 0;
	}
	size_t bound = ZSTD_compressBound(raw_len) + 12;
	if (bound > ct_wr.zcap) {
		uint8_t *z = realloc(ct_wr.zbuf, bound);
		if (!z) {
			ct_once(zoom, CT_LOG_WARN,
			        "out of memory compressing a block; events lost");
			discard_block();
			return 0;
		}
		ct_wr.zbuf = z, ct_wr.zcap = bound;
	}
	size_t z =
	    ZSTD_compress2(ct_wr.cctx, ct_wr.zbuf + 12, ct_wr.zcap - 12, raw, raw_len);
	if (ZSTD_isError(z)) {
		ct_once(zerr, CT_LOG_WARN, "compression failed (%s); events lost",
		        ZSTD_getErrorName(z));
		discard_block();
		return 0;
	}
	uint32_t h[3] = {CT_BLOCK_MAGIC, (uint32_t)z, (uint32_t)raw_len};
	memcpy(ct_wr.zbuf, h, 12);
	return z + 12;
}

void ct_wr_write_block(void)
{
	if (ct_wr.enc.len <= ct_wr.preamble)
		return;
	if (ct_wr.flight && !ct_wr.dumping) { /* to the store, never the disk */
		size_t z = compress_block();
		if (z)
			ct_wr_flight_keep(ct_wr.zbuf, z);
		ct_enc_new_block(&ct_wr.enc);
		ct_wr.last_write = ct_now();
		ct_wr_flight_begin_block();
		return;
	}
	if (ct_wr.out.fd == -1) {
		ct_wr.preamble = 0;
		if (ct_wr.part == 1)
			ct_wr.out.fd = ct_output_open(ct_wr.out.path, sizeof ct_wr.out.path);
		else
			ct_wr.out.fd = ct_output_open_part(ct_wr.first, ct_wr.part, ct_wr.out.path,
			                                   sizeof ct_wr.out.path);
		if (!ct_output_begin(&ct_wr.out, ct_wr.part))
			ct_info("writing %s", ct_wr.out.path);
		else
			ct_wr.out.fd = -2;
	}
	if (ct_wr.out.fd < 0) {
		ct_enc_new_block(&ct_wr.enc);
		return;
	}
	size_t z = compress_block();
	if (!z)
		return;
	ct_output_write(&ct_wr.out, ct_wr.zbuf, z); /* says why it failed */
	ct_enc_new_block(&ct_wr.enc);
	ct_wr.last_write = ct_now();
}

void ct_wr_encode(const struct ct_rec *r)
{
	if (ct_enc_record(&ct_wr.enc, r))
		ct_once(badrec, CT_LOG_WARN, "a record could not be encoded (kind %u)", r->kind);
}

static void on_def_handle(void *ctx, uint64_t h, const char *s, uint32_t len)
{
	(void)ctx;
	ct_enc_handle(&ct_wr.enc, h, s, len);
}

static void on_def_record(void *ctx, int tid, const struct ct_rec *r)
{
	(void)ctx;
	if (ct_wr.watch && !ct_wr.dumping && (r->kind == CT_EV_NCCL_COMM || r->kind == CT_EV_MPI_COMM))
		ct_watch_record(tid, r);
	int64_t cur = ct_wr.enc.tid;
	ct_enc_thread(&ct_wr.enc, tid);
	ct_wr_encode(r);
	if (cur >= 0)
		ct_enc_thread(&ct_wr.enc, cur);
}

const struct ct_defs_sink ct_wr_defs_sink = {on_def_handle, on_def_record, NULL};
