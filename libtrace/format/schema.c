// SPDX-License-Identifier: MIT
/* Field layouts of the NVTX and control kinds (16-47), made from their
 * lists in fields.h. enc.c and dec.c find every kind's layout through
 * ct_schema_of(). */
#include "fields.h"

#include <stddef.h>

#define K(kname, kind) [CT_EV_##kind - CT_EV_FIRST] = CT_SCHEMA(kname, kind)

const struct ct_schema ct_schemas_core[CT_EV_CUPTI_FIRST - CT_EV_FIRST] = {
	K("nvtx_push", NVTX_PUSH),
	K("nvtx_pop", NVTX_POP),
	K("nvtx_start", NVTX_START),
	K("nvtx_end", NVTX_END),
	K("nvtx_mark", NVTX_MARK),
	K("thread_name", THREAD_NAME),
	K("category", CATEGORY),
	K("capture", CAPTURE),
	K("step", STEP),
	K("reset", RESET),
	K("hang_suspected", HANG),
};

/* Tables of the other sources, all-empty until a source defines them. */
extern const struct ct_schema ct_schemas_cupti[CT_EV_CUPTI_END - CT_EV_CUPTI_FIRST];
extern const struct ct_schema ct_schemas_nccl[CT_EV_NCCL_END - CT_EV_NCCL_FIRST];
extern const struct ct_schema ct_schemas_torch[CT_EV_TORCH_END - CT_EV_TORCH_FIRST];
extern const struct ct_schema ct_schemas_mpi[CT_EV_MPI_END - CT_EV_MPI_FIRST];

const struct ct_schema *ct_schema_of(unsigned kind)
{
	const struct ct_schema *s;
	if (kind < CT_EV_FIRST)
		return NULL;
	else if (kind < CT_EV_CUPTI_FIRST)
		s = &ct_schemas_core[kind - CT_EV_FIRST];
	else if (kind < CT_EV_CUPTI_END)
		s = &ct_schemas_cupti[kind - CT_EV_CUPTI_FIRST];
	else if (kind < CT_EV_NCCL_END)
		s = &ct_schemas_nccl[kind - CT_EV_NCCL_FIRST];
	else if (kind < CT_EV_TORCH_END)
		s = &ct_schemas_torch[kind - CT_EV_TORCH_FIRST];
	else if (kind < CT_EV_MPI_END)
		s = &ct_schemas_mpi[kind - CT_EV_MPI_FIRST];
	else
		return NULL;
	return s->name ? s : NULL;
}
