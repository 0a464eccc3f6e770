// SPDX-License-Identifier: MIT
/* deviceProperties: the GPUs of the traced processes, listed at the top of
 * the document, before traceEvents, as Kineto writes them (HTA reads SM
 * counts and limits from there). The library files device records through
 * its definition queue, so they come ahead of every GPU record translated
 * after them: reading a file up to its first kernel or copy on a device
 * already described is enough. Files without a CUDA source are not read,
 * nor are cleanly closed files whose footer (read at open, through the
 * trailer) counts no device record. */
#include "write/chrome/chrome_int.h"
#include "read/gpu_fields.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define SCAN_MAX 1000000 /* events read at most per file */
#define MAXDEV   256

struct dev {
	uint64_t id;
	char *name, *uuid;
	uint64_t gmem, ccmaj, ccmin, sms, tpb, wpsm, regs_block, regs_sm, smem_block, smem_sm, warp;
};

static void scan(struct tfile *t, struct dev *devs, size_t *ndev)
{
	uint8_t known[MAXDEV] = {0};
	struct ct_event ev;
	for (unsigned long n = 0; n < SCAN_MAX && ct_file_next(&t->f, &ev) == 1; n++) {
		if (ev.kind == CT_EV_GPU_DEVICE) {
			uint64_t id = ev.v[F_GPU_DEVICE_DEVICE];
			if (id < MAXDEV)
				known[id] = 1;
			size_t i;
			for (i = 0; i < *ndev && devs[i].id != id; i++)
				;
			if (i < *ndev || *ndev == MAXDEV)
				continue; /* first description of an id wins */
			struct dev *d = &devs[(*ndev)++];
			d->id = id;
			d->name = xstrndup(ev.s[F_GPU_DEVICE_NAME], ev.sl[F_GPU_DEVICE_NAME]);
			d->uuid = xstrndup(ev.s[F_GPU_DEVICE_UUID], ev.sl[F_GPU_DEVICE_UUID]);
			d->gmem = ev.v[F_GPU_DEVICE_GLOBAL_MEMORY];
			d->ccmaj = ev.v[F_GPU_DEVICE_CC_MAJOR];
			d->ccmin = ev.v[F_GPU_DEVICE_CC_MINOR];
			d->sms = ev.v[F_GPU_DEVICE_SMS];
			d->tpb = ev.v[F_GPU_DEVICE_MAX_THREADS_PER_BLOCK];
			d->wpsm = ev.v[F_GPU_DEVICE_MAX_WARPS_PER_SM];
			d->regs_block = ev.v[F_GPU_DEVICE_REGS_PER_BLOCK];
			d->regs_sm = ev.v[F_GPU_DEVICE_REGS_PER_SM];
			d->smem_block = ev.v[F_GPU_DEVICE_SMEM_PER_BLOCK];
			d->smem_sm = ev.v[F_GPU_DEVICE_SMEM_PER_SM];
			d->warp = ev.v[F_GPU_DEVICE_WARP_SIZE];
		} else if (ev.kind == CT_EV_KERNEL || ev.kind == CT_EV_MEMCPY ||
		           ev.kind == CT_EV_MEMSET) {
			unsigned i = ev.kind == CT_EV_KERNEL   ? F_KERNEL_DEVICE
			             : ev.kind == CT_EV_MEMCPY ? F_MEMCPY_DEVICE
			                                       : F_MEMSET_DEVICE;
			if (ev.v[i] < MAXDEV && known[ev.v[i]])
				return;
		}
	}
}

#define KEY_U(k, v)                                                                                \
	do {                                                                                       \
		out_lit(o, ", \"" k "\": ");                                                       \
		out_u64(o, (v));                                                                   \
	} while (0)

void chrome_cupti_devices(struct out *o, struct inputs *in, const struct tfile *only)
{
	struct dev devs[MAXDEV];
	size_t ndev = 0;
	for (size_t i = 0; i < in->n; i++) {
		if (!tfile_in_output(&in->v[i], only) || !gpu_file_traces_cuda(&in->v[i].f.h))
			continue;
		/* A cleanly closed file says up front whether it has devices. */
		if (in->v[i].f.final_footer && !in->v[i].f.f_events[CT_EV_GPU_DEVICE])
			continue;
		scan(&in->v[i], devs, &ndev);
		if (inputs_rewind(in, i))
			exit(1);
	}
	out_ch(o, '[');
	for (size_t i = 0; i < ndev; i++) {
		struct dev *d = &devs[i];
		if (i)
			out_ch(o, ',');
		out_lit(o, "\n    {");
		out_lit(o, "\"id\": ");
		out_u64(o, d->id);
		out_lit(o, ", \"name\": ");
		out_json_str(o, d->name, strlen(d->name));
		KEY_U("totalGlobalMem", d->gmem);
		KEY_U("computeMajor", d->ccmaj);
		KEY_U("computeMinor", d->ccmin);
		KEY_U("maxThreadsPerBlock", d->tpb);
		KEY_U("maxThreadsPerMultiprocessor", d->wpsm * d->warp);
		KEY_U("regsPerBlock", d->regs_block);
		KEY_U("regsPerMultiprocessor", d->regs_sm);
		KEY_U("warpSize", d->warp);
		KEY_U("sharedMemPerBlock", d->smem_block);
		KEY_U("sharedMemPerMultiprocessor", d->smem_sm);
		KEY_U("numSms", d->sms);
		out_lit(o, ", \"uuid\": ");
		out_json_str(o, d->uuid, strlen(d->uuid));
		out_ch(o, '}');
		free(d->name);
		free(d->uuid);
	}
	if (ndev)
		out_lit(o, "\n  ");
	out_ch(o, ']');
}
