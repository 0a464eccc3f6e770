// SPDX-License-Identifier: MIT
/* The writer's file as a whole: its footer, fsync and close, and a
 * rotation (cuptrace_rotate) that ends it and starts the next. */
#include "writer_int.h"
#include "clock.h"
#include "defs.h"
#include "thread.h"
#include "tnames.h"
#include "trace.h"

#include <stdio.h>
#include <string.h>

/* end: how << 32 | detail (enum ct_end) */
void ct_wr_write_footer(uint64_t end)
{
	uint64_t rt, mono;
	ct_clock_anchor(&rt, &mono);
	if (ct_wr.enc.len <= ct_wr.preamble && ct_wr.out.fd == -1)
		return; /* nothing was ever recorded (in this file): no file */
	ct_wr.enc.trunc_str = atomic_load_explicit(&ct.truncated_strings, memory_order_relaxed);
	/* The footer in a block of its own, found through the trailer. */
	ct_wr_write_block();
	ct_wr.enc.end_how = (uint32_t)(end >> 32);
	ct_wr.enc.end_detail = (uint32_t)end;
	uint64_t nr = atomic_load_explicit(&ct.nccl_rank, memory_order_relaxed);
	ct_wr.enc.nccl_nranks = (uint32_t)(nr >> 32);
	ct_wr.enc.nccl_rank = (uint32_t)nr;
	ct_enc_footer(&ct_wr.enc, ct_wr.drops, rt, mono);
	uint64_t at = ct_wr.out.off;
	ct_wr_write_block();
	ct_output_trailer(&ct_wr.out, at);
}

void ct_wr_sync_file(void)
{
	ct_output_sync(&ct_wr.out);
}

void ct_wr_close_file(void)
{
	ct_output_close(&ct_wr.out);
}

/* A thread's name at the head of a new file, as of the rotation. */
static void replay_name(int64_t tid, struct ct_rec *r)
{
	r->f[F_THREAD_NAME_TS] = ct_now();
	int64_t cur = ct_wr.enc.tid;
	ct_enc_thread(&ct_wr.enc, tid);
	ct_wr_encode(r);
	if (cur >= 0)
		ct_enc_thread(&ct_wr.enc, cur);
}

/* A window ended (cuptrace_rotate): the file is finished as at exit
 * (footer, fsync, close) and what comes next goes to a new file, opened
 * with its first block. Each file stands alone: the string table starts
 * over, every definition and thread name goes in again, event and drop
 * counts start from zero. Recording threads never wait: their rings are
 * drained into the old file up to here (ct_wr_cycle), the rest into the new. */
void ct_wr_rotate(void)
{
	ct_wr.rotated[0] = 0;
	if (ct_wr.flight)
		return; /* nothing is written but windows (cuptrace_dump) */
	if (ct_wr.out.fd == -2 || (ct_wr.out.fd == -1 && ct_wr.enc.len <= ct_wr.preamble))
		return; /* tracing failed, or nothing since the last file: no file */
	ct_wr_write_footer((uint64_t)CT_END_ROTATE << 32 | ct_wr.part);
	ct_wr_sync_file();
	if (ct_wr.out.fd < 0)
		return; /* the file failed (said so); tracing stops */
	snprintf(ct_wr.rotated, sizeof ct_wr.rotated, "%s", ct_wr.out.path);
	if (ct_wr.part == 1)
		snprintf(ct_wr.first, sizeof ct_wr.first, "%s", ct_wr.out.path);
	ct_wr_close_file();
	ct_wr.out.fd = -1;
	ct_wr.part++;
	memset(ct_wr.enc.events, 0, sizeof ct_wr.enc.events);
	memset(ct_wr.drops, 0, sizeof ct_wr.drops);
	ct_threads_rebase_drops();
	ct_enc_forget_strings(&ct_wr.enc);
	ct_enc_new_block(&ct_wr.enc);
	ct_defs_replay();
	ct_defs_drain(&ct_wr_defs_sink);
	ct_tnames_each(replay_name);
	ct_wr.preamble = ct_wr.enc.len;
}
