/* Field layouts of the CUPTI kinds (48-79). */
#include "cuptrace/format.h"

const struct ct_schema ct_schemas_cupti[CT_EV_CUPTI_END - CT_EV_CUPTI_FIRST] = {
	{0},
};
