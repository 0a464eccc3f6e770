/* Internals shared by the Chrome JSON writer's parts: chrome.c (document,
 * processes, files), chrome_nvtx.c (NVTX spans), chrome_cupti.c (GPU
 * activity), chrome_nccl.c (collectives). */
#ifndef CT_CHROME_INT_H
#define CT_CHROME_INT_H

#include "chrome.h"
#include "spans.h"

struct chrome {
	struct out *o;
	struct inputs *in;
	struct tfile *t; /* file being converted */
	uint64_t nevents;
	void *cupti; /* per-file state of chrome_cupti.c */
	void *nccl;  /* per-file state of chrome_nccl.c */
};

/* Separator before each event object. */
void chrome_sep(struct chrome *c);
/* A string reference of the current file, quoted and escaped. */
void chrome_sref(struct chrome *c, const struct sref *r);
/* ,"pid":P,"tid":T */
void chrome_pid_tid(struct chrome *c, uint64_t pid, int64_t tid);
/* ,"ts":<us> for a tracer-clock timestamp of the current file */
void chrome_ts(struct chrome *c, uint64_t t);

/* Per-source parts. */
void chrome_span(void *ctx, const struct span *s);
void chrome_cupti_event(struct chrome *c, const struct ct_event *ev);
void chrome_cupti_file_end(struct chrome *c);
/* The deviceProperties array of all files, or of `only` when not NULL
 * (reads the beginning of the files that traced CUDA, then rewinds them). */
void chrome_cupti_devices(struct out *o, struct inputs *in, const struct tfile *only);
void chrome_nccl_event(struct chrome *c, const struct ct_event *ev);
void chrome_nccl_file_end(struct chrome *c);

#endif
