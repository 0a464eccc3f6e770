// SPDX-License-Identifier: MIT
/* The flight recorder's writer side (flight.h, docs/flight-recorder.md):
 * blocks kept in the store instead of the file, cut often; triggers
 * served; and a dump, the window written as an ordinary file: header
 * (with the flight tags), a first block that defines what the blocks
 * dropped from the window defined (strings, definitions, thread names),
 * the blocks kept, a footer. Everything on the writer thread. */
#include "clock.h"
#include "defs.h"
#include "flight.h"
#include "log.h"
#include "tnames.h"
#include "trace.h"
#include "writer_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER_TICKS 20 /* the marker is polled once a second */

void ct_wr_flight_start(void)
{
	ct_fl_init();
	ct_wr.flight = 1;
	ct_wr_flight_begin_block();
	ct_info("flight recorder: the last %.9g s kept in at most %lu MB, written on a trigger",
	        ct.cfg.flight, ct.cfg.flight_mb);
}

/* A thread's name at the head of the window, as of its start. */
static uint64_t name_ts;
static void window_name(int64_t tid, struct ct_rec *r)
{
	r->f[F_THREAD_NAME_TS] = name_ts;
	int64_t cur = ct_wr.enc.tid;
	ct_enc_thread(&ct_wr.enc, tid);
	ct_wr_encode(r);
	if (cur >= 0)
		ct_enc_thread(&ct_wr.enc, cur);
}

/* The window's first block: every string the kept blocks use but do not
 * define (ids below the oldest's first), the definitions fetched before
 * it, the threads' names. Strings it needs itself beyond those go inline. */
static void first_block(const struct ct_fl_block *old)
{
	ct_enc_new_block(&ct_wr.enc);
	if (ct_enc_strings_below(&ct_wr.enc, old->sid0))
		ct_once(flstr, CT_LOG_WARN, "out of memory writing a flight window's strings");
	ct_defs_each(old->defs0, &ct_wr_defs_sink);
	name_ts = old->t0;
	ct_tnames_each(window_name);
	ct_wr.enc.sid_limit = 0;
	ct_wr_write_block();
}

/* What the header says of the window. */
static void window_info(struct ct_fl_info *fi, uint64_t now, const char *why)
{
	memset(fi, 0, sizeof *fi);
	fi->want_ns = ct_fl.window_ns;
	fi->from = ct_fl.b[ct_fl.head].t0;
	fi->to = now;
	fi->budget = ct_fl.budget;
	fi->held = ct_fl.peak;
	/* what the budget left out: of the window asked, or of all that was
	 * recorded when the process has not been recording that long (block
	 * spans may overlap where the rings lag: never more than its life) */
	uint64_t could = ct_fl.recorded < ct_fl.window_ns ? ct_fl.recorded : ct_fl.window_ns;
	if (now > ct.mono_anchor && now - ct.mono_anchor < could)
		could = now - ct.mono_anchor;
	uint64_t kept = ct_fl.active;
	if (now > fi->from && now - fi->from < kept)
		kept = now - fi->from;
	if (ct_fl.budget_last && kept < could)
		fi->short_ns = could - kept;
	snprintf(fi->cause, sizeof fi->cause, "%s", why);
}

/* Writes the window; end: the footer's ending (0 while the process runs). */
static void dump(const char *why, uint64_t end)
{
	ct_wr_write_block(); /* what the rings gave so far joins the store */
	uint64_t now = ct_now();
	if (!ct_fl.n) {
		ct_log_notice("flight recorder: %s, but nothing was recorded", why);
		return;
	}
	struct ct_fl_info fi;
	window_info(&fi, now, why);
	ct_wr.out.fd = ct_wr.part == 1 ? ct_output_open(ct_wr.out.path, sizeof ct_wr.out.path)
	                               : ct_output_open_part(ct_wr.first, ct_wr.part,
	                                                     ct_wr.out.path, sizeof ct_wr.out.path);
	if (ct_output_begin_flight(&ct_wr.out, ct_wr.part, &fi)) {
		ct_wr.out.fd = -1; /* said why; a later trigger tries again */
		return;
	}
	uint64_t saved[CT_NKINDS];
	memcpy(saved, ct_wr.enc.events, sizeof saved);
	memset(ct_wr.enc.events, 0, sizeof ct_wr.enc.events);
	ct_wr.dumping = 1;
	first_block(&ct_fl.b[ct_fl.head]);
	for (size_t i = 0; i < ct_fl.n && ct_wr.out.fd >= 0; i++) {
		const struct ct_fl_block *b = &ct_fl.b[(ct_fl.head + i) % ct_fl.cap];
		ct_output_write(&ct_wr.out, b->data, b->len);
		for (unsigned k = 0; k < b->ncounts; k++)
			ct_wr.enc.events[b->counts[k] >> 24] += b->counts[k] & 0xffffff;
	}
	ct_wr_write_footer(end);
	ct_wr_sync_file();
	int ok = ct_wr.out.fd >= 0;
	char path[sizeof ct_wr.out.path];
	snprintf(path, sizeof path, "%s", ct_wr.out.path);
	if (ct_wr.part == 1)
		snprintf(ct_wr.first, sizeof ct_wr.first, "%s", path);
	ct_wr_close_file();
	ct_wr.out.fd = -1;
	ct_wr.part++;
	ct_wr.dumping = 0;
	ct_wr.enc.end_how = 0;
	memcpy(ct_wr.enc.events, saved, sizeof saved);
	ct_enc_new_block(&ct_wr.enc);
	ct_wr_flight_begin_block();
	ct_fl_dumped(now);
	if (ok)
		ct_log_notice("flight recorder: %s; the last %.1f s written to %s%s", why,
		              (double)(now - fi.from) / 1e9, path,
		              fi.short_ns ? " (less than asked: CUPTRACE_FLIGHT_MB)" : "");
}

/* Serves the trigger asked for, if any; own triggers tell the job. */
static void serve(uint64_t now, uint64_t end)
{
	char why[256];
	int c = ct_fl_take(now, why, sizeof why);
	if (c < 0)
		return;
	if (c != CT_FL_JOB && c != CT_FL_CLEAN)
		ct_fl_fire_marker(why);
	dump(why, end);
}

void ct_wr_flight_tick(uint64_t now, unsigned ticks)
{
	if (!ct_wr.fl_t0 && ct_wr.enc.len) /* its first records came since the last tick */
		ct_wr.fl_t0 = ct_wr.fl_tick ? ct_wr.fl_tick : now;
	if (ticks % MARKER_TICKS == 0)
		ct_fl_poll_marker(now);
	serve(now, 0);
	if (ct_wr.enc.len && now - ct_wr.last_write >= ct_fl.cut_ns)
		ct_wr_write_block();
	/* after the cut of a block that ended in this tick: spans never overlap */
	ct_wr.fl_tick = ct_wr.last_write > now ? ct_wr.last_write : now;
}

void ct_wr_flight_end(uint64_t end)
{
	uint32_t how = (uint32_t)(end >> 32), d = (uint32_t)end;
	if (how == CT_END_SIGNAL)
		ct_fl_ask(CT_FL_FATAL, d);
	else if (how == CT_END_EXIT && (d & CT_EXIT_STATUS_KNOWN) && (d & 0xff))
		ct_fl_ask(CT_FL_EXIT, d & 0xff);
	else if (how == CT_END_EXIT_NOW && d)
		ct_fl_ask(CT_FL_EXIT, d);
	else if ((how == CT_END_EXIT || how == CT_END_EXIT_NOW) && ct.cfg.flight_exit)
		ct_fl_ask(CT_FL_CLEAN, 0);
	serve(ct_now(), end);
}
