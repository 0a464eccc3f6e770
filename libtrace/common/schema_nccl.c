/* Field layouts of the NCCL kinds (80-111). */
#include "cuptrace/format.h"

const struct ct_schema ct_schemas_nccl[CT_EV_NCCL_END - CT_EV_NCCL_FIRST] = {
	{0},
};
