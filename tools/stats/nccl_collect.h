// SPDX-License-Identifier: MIT
/* The NCCL operations that the nccl_* reports summarise, collected once
 * for all of them: from trace files (the model's NCCL operations, one file
 * after the other) and from NCCL_DEBUG logs. The first report that begins feeds
 * the collection; the others read it. */
#ifndef CT_NCCL_COLLECT_H
#define CT_NCCL_COLLECT_H

#include "read/inputs.h"
#include "stats/nccl_agg.h"
#include "stats/stats.h"

/* 1 when the caller is the one that feeds events and logs. */
int nccl_collect_begin(const struct stats_opts *opts);
/* One file's totals, summed where its events are read (any thread) and
 * added to the collection in file order (nccl_collect_merge), so that the
 * totals (bus bytes are a floating-point sum) come out the same however the
 * files were shared out; memory is the file's rows, not its operations. */
struct nccl_adds {
	struct nccl_agg agg;
	const struct tfile *t; /* the file, once it gave an operation */
};
void nccl_collect_event(struct nccl_adds *j, struct tfile *t, const struct m_event *ev);
/* Adds j's totals to the collection and frees them. */
void nccl_collect_merge(struct nccl_adds *j);
/* Reads a log's operations. A process whose trace gave operations is left
 * out of it (one note per log): its calls are counted from the trace.
 * With --steps, the calls in those steps of the log's step marks
 * (read/nccl_log.h), none of a log without marks. */
void nccl_collect_log(const char *path);
/* With --steps: how many logs read so far hold no step mark (their calls
 * were left out). */
size_t nccl_collect_stepless_logs(void);
/* The totals; the first call finishes the collection. */
const struct nccl_agg *nccl_collect_result(void);
/* Each report that began calls this once; the last one frees. */
void nccl_collect_release(void);

#endif
