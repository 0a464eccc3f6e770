// SPDX-License-Identifier: MIT
/* Field layouts of the NCCL kinds (80-111), written by libtrace/nccl.c
 * from NCCL's profiler plugin callbacks. Every event carries the handle
 * the plugin returned to NCCL ("id") and the communicator's profiler
 * context ("ctx"); links between events are handles too. GPU timers are
 * NCCL's raw GPU globaltimer values (ns, the GPU's clock, not ours). */
#include "cuptrace/format.h"

#define TS  CT_F_TS
#define U   CT_F_U
#define I   CT_F_I
#define SID CT_F_SID
#define STR CT_F_STR

#define K(kind) [CT_EV_NCCL_##kind - CT_EV_NCCL_FIRST]

const struct ct_schema ct_schemas_nccl[CT_EV_NCCL_END - CT_EV_NCCL_FIRST] = {
    K(COMM) = {"nccl_comm",
               8,
               {TS, U, U, U, U, I, U, STR},
               {"ts", "ctx", "comm", "nnodes", "nranks", "rank", "abi", "name"}},
    K(FINI) = {"nccl_fini", 2, {TS, U}, {"ts", "ctx"}},
    K(GROUP_API) = {"nccl_group_api", 5, {TS, U, U, U, U}, {"ts", "id", "ctx", "depth", "graph"}},
    K(COLL_API) = {"nccl_coll_api",
                   10,
                   {TS, U, U, U, SID, SID, U, I, U, U},
                   {"ts", "id", "ctx", "parent", "func", "datatype", "count", "root", "stream",
                    "graph"}},
    K(P2P_API) = {"nccl_p2p_api",
                  9,
                  {TS, U, U, U, SID, SID, U, U, U},
                  {"ts", "id", "ctx", "parent", "func", "datatype", "count", "stream", "graph"}},
    K(LAUNCH) = {"nccl_launch", 5, {TS, U, U, U, U}, {"ts", "id", "ctx", "parent", "stream"}},
    K(GROUP) = {"nccl_group", 4, {TS, U, U, U}, {"ts", "id", "ctx", "launch"}},
    K(COLL) = {"nccl_coll",
               15,
               {TS, U, U, U, U, U, SID, SID, U, I, U, U, SID, SID, I},
               {"ts", "id", "ctx", "parent", "group", "seq", "func", "datatype", "count", "root",
                "channels", "warps", "algo", "proto", "rank"}},
    K(P2P) = {"nccl_p2p",
              11,
              {TS, U, U, U, U, SID, SID, U, I, U, I},
              {"ts", "id", "ctx", "parent", "group", "func", "datatype", "count", "peer",
               "channels", "rank"}},
    K(KERNEL_CH) = {"nccl_kernel_ch",
                    6,
                    {TS, U, U, U, U, U},
                    {"ts", "id", "ctx", "parent", "channel", "gpu_start"}},
    K(STOP) = {"nccl_stop", 2, {TS, U}, {"ts", "id"}},
    K(STATE) = {"nccl_state", 4, {TS, U, U, U}, {"ts", "id", "state", "value"}},
};
