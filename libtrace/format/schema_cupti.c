// SPDX-License-Identifier: MIT
/* Field layouts of the CUPTI kinds (48-79): GPU activity and CUDA API calls
 * as libtrace/sources/cupti_rec.c writes them, made from their lists in
 * fields.h (what each field holds is said there).
 *
 * Field order matters for size on disk: the fields that change from one
 * record to the next (times, correlation id) come first and the ones that
 * repeat (device, stream, name, shape) last, so that zstd sees one literal
 * run and one long match per record.
 *
 * "end" is a TS field, not a DUR: both decode to the absolute end, but as
 * TS it also becomes the thread's last timestamp, so the next record's
 * start is stored as the gap after this one's end. Work on one stream and
 * calls of one thread follow each other, so that gap is small and regular
 * (a few bits) where start-to-start deltas carry every duration's jitter.
 *
 * Correlation ids are DELTA fields: they count up call after call, and as
 * plain varints their changing low byte costs about two bytes per record
 * after compression; as deltas from the previous record of the kind, a
 * few bits. */
#include "fields.h"

#define K(kname, kind) [CT_EV_##kind - CT_EV_CUPTI_FIRST] = CT_SCHEMA(kname, kind)

const struct ct_schema ct_schemas_cupti[CT_EV_CUPTI_END - CT_EV_CUPTI_FIRST] = {
	K("kernel", KERNEL),
	K("memcpy", MEMCPY),
	K("memset", MEMSET),
	K("sync", SYNC),
	K("cuda_api", CUDA_API),
	K("gpu_memory", GPU_MEMORY),
	K("gpu_device", GPU_DEVICE),
	K("gpu_context", GPU_CONTEXT),
	K("cuda_event", CUDA_EVENT),
	K("cupti_dropped", CUPTI_DROPPED),
	K("ext_corr", EXT_CORR),
};
