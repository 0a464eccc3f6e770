// SPDX-License-Identifier: MIT
/* Field layouts of the PyTorch kinds (112-127), written by
 * libtrace/sources/torch.c for the Python package's RecordFunction
 * observer, made from their lists in fields.h. Names, shapes and stacks
 * are STR fields: the observer hands them over as text, and the file keeps
 * each distinct one once. */
#include "fields.h"

#define K(kname, kind) [CT_EV_##kind - CT_EV_TORCH_FIRST] = CT_SCHEMA(kname, kind)

const struct ct_schema ct_schemas_torch[CT_EV_TORCH_END - CT_EV_TORCH_FIRST] = {
	K("torch_op", TORCH_OP),
	K("torch_mem", TORCH_MEM),
};
