// SPDX-License-Identifier: MIT
/* Field layouts of the NCCL kinds (80-111), written by libtrace/sources/nccl.c
 * from NCCL's profiler plugin callbacks, made from their lists in fields.h.
 * Every event carries the handle the plugin returned to NCCL ("id") and
 * the communicator's profiler context ("ctx"); links between events are
 * handles too. GPU timers are NCCL's raw GPU globaltimer values (ns, the
 * GPU's clock, not ours). */
#include "fields.h"

#define K(kname, kind) [CT_EV_##kind - CT_EV_NCCL_FIRST] = CT_SCHEMA(kname, kind)

const struct ct_schema ct_schemas_nccl[CT_EV_NCCL_END - CT_EV_NCCL_FIRST] = {
	K("nccl_comm", NCCL_COMM),
	K("nccl_fini", NCCL_FINI),
	K("nccl_group_api", NCCL_GROUP_API),
	K("nccl_coll_api", NCCL_COLL_API),
	K("nccl_p2p_api", NCCL_P2P_API),
	K("nccl_launch", NCCL_LAUNCH),
	K("nccl_group", NCCL_GROUP),
	K("nccl_coll", NCCL_COLL),
	K("nccl_p2p", NCCL_P2P),
	K("nccl_kernel_ch", NCCL_KERNEL_CH),
	K("nccl_stop", NCCL_STOP),
	K("nccl_state", NCCL_STATE),
};
