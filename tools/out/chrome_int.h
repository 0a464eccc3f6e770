/* Internals shared by the Chrome JSON writer's parts: chrome.c (document,
 * processes, files), chrome_nvtx.c (NVTX spans), chrome_cupti.c (GPU
 * activity), chrome_nccl.c (collectives). */
#ifndef CT_CHROME_INT_H
#define CT_CHROME_INT_H

#include "out/chrome.h"
#include "model/spans.h"

/* Separator before each event object. 0 when the event at hand is not
 * this worker's to write (see chrome.h, shares): the caller then writes
 * nothing, but still keeps its state. Always test it. */
__attribute__((warn_unused_result)) static inline int chrome_sep(struct chrome *c)
{
	if (!c->mine)
		return 0;
	/* The document head always holds an event, so every later one
	 * starts with a comma; chunks handed to the sink end between events. */
	out_chunk(c->o, CHROME_CHUNK);
	out_lit(c->o, ",\n");
	c->nevents++;
	return 1;
}

/* A string reference of the current file, quoted and escaped. */
void chrome_sref(struct chrome *c, const struct sref *r);
/* ,"pid":P,"tid":T */
void chrome_pid_tid(struct chrome *c, uint64_t pid, int64_t tid);
/* ,"ts":<us> for a tracer-clock timestamp of the current file */
void chrome_ts(struct chrome *c, uint64_t t);
/* The process of a GPU of the current file. */
uint64_t chrome_gpu_pid(const struct chrome *c, uint32_t device);

/* Per-source parts. */
void chrome_span(void *ctx, const struct span *s);
void chrome_cupti_event(struct chrome *c, const struct ct_event *ev);
void chrome_cupti_file_end(struct chrome *c);
/* The deviceProperties array of all files, or of `only` when not NULL
 * (reads the beginning of the files that traced CUDA, then rewinds them). */
void chrome_cupti_devices(struct out *o, struct inputs *in, const struct tfile *only);
void chrome_nccl_event(struct chrome *c, const struct ct_event *ev);
void chrome_nccl_file_end(struct chrome *c);
/* Where chrome_cupti.c draws the kernels of a GPU stream (pid and tid);
 * 0 when it does not. NCCL flows end on the NCCL kernel there. */
int chrome_cupti_stream_track(struct chrome *c, uint64_t device, uint64_t context,
			      uint64_t stream, uint64_t *pid, int64_t *tid);

#endif
