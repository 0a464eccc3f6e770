// SPDX-License-Identifier: MIT
/* Records the writer makes itself, in nanoseconds already: the hang
 * watchdog's hang_suspected records in its pass after the rings were
 * drained, and (writer.c) the capture timer's switches. */
#include "writer_int.h"
#include "clock.h"
#include "flight.h"
#include "log.h"
#include "watchdog.h"

#include <string.h>

/* A record the writer makes itself (times in ns already), on thread tid. */
void ct_wr_own_record(unsigned kind, int64_t tid, const uint64_t *f, unsigned n)
{
	_Static_assert(F_HANG_N <= 8 && F_CAPTURE_N <= 8 && F_MPI_HANG_N <= 8,
	               "the kinds it makes fit buf");
	uint64_t buf[1 + 8];
	struct ct_rec *r = (struct ct_rec *)buf;
	r->size = ct_rec_size(n, 0);
	r->kind = (uint16_t)kind;
	r->reserved = 0;
	memcpy(r->f, f, n * sizeof *f);
	int64_t cur = ct_wr.enc.tid;
	ct_enc_thread(&ct_wr.enc, tid);
	ct_wr_encode(r);
	if (cur >= 0)
		ct_enc_thread(&ct_wr.enc, cur);
}

/* The watchdog's pass, after the rings were drained: each operation in
 * flight too long gets its hang_suspected record (on the thread that
 * started it), then everything held goes to disk, then one line each. */
#define WATCH_LINES 8
void ct_wr_watch_pass(void)
{
	struct ct_watch_hit hit[WATCH_LINES];
	size_t n = 0;
	uint64_t now = ct_now();
	while (n < WATCH_LINES && ct_watch_due(now, &hit[n])) {
		if (hit[n].mpi) {
			uint64_t m[F_MPI_HANG_N] = {
			    [F_MPI_HANG_TS] = now,
			    [F_MPI_HANG_COMM] = hit[n].ctx,
			    [F_MPI_HANG_SEQ] = hit[n].seq,
			    [F_MPI_HANG_FUNC] = hit[n].func,
			    [F_MPI_HANG_REQ] = hit[n].task,
			    [F_MPI_HANG_IN_FLIGHT] = hit[n].in_flight,
			};
			ct_wr_own_record(CT_EV_MPI_HANG, hit[n].tid, m, F_MPI_HANG_N);
			n++;
			continue;
		}
		uint64_t f[F_HANG_N] = {
		    [F_HANG_TS] = now,
		    [F_HANG_CTX] = hit[n].ctx,
		    [F_HANG_TASK] = hit[n].task,
		    [F_HANG_HAS_SEQ] = (uint64_t)hit[n].has_seq,
		    [F_HANG_SEQ] = hit[n].seq,
		    [F_HANG_FUNC] = hit[n].func,
		    [F_HANG_IN_FLIGHT] = hit[n].in_flight,
		};
		ct_wr_own_record(CT_EV_HANG, hit[n].tid, f, F_HANG_N);
		n++;
	}
	if (!n)
		return;
	if (ct_wr.flight) { /* the window is written in this tick's flight pass */
		ct_fl_ask(CT_FL_HANG, 0);
		for (size_t i = 0; i < n; i++)
			ct_log_notice("%s; flight window to be written", hit[i].line);
		return;
	}
	ct_wr_write_block();
	ct_wr_sync_file();
	for (size_t i = 0; i < n; i++)
		ct_log_notice("%s; trace flushed%s", hit[i].line,
		              ct_wr.out.fd >= 0 ? "" : " (but the file could not be written)");
}
