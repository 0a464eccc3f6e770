// SPDX-License-Identifier: MIT
/* Field layouts of the NVTX and control kinds (16-47). enc.c and dec.c
 * find every kind's layout through ct_schema_of(). */
#include "cuptrace/format.h"

#include <stddef.h>

#define TS CT_F_TS
#define DUR CT_F_DUR
#define U CT_F_U
#define I CT_F_I
#define SID CT_F_SID
#define STR CT_F_STR

/* Attribute fields shared by push, start and mark (NVTX event attributes). */
#define ATTR_T SID, U, U, U, U, SID, STR
#define ATTR_N "domain", "category", "color", "payload_type", "payload", "msg_id", "msg"

const struct ct_schema ct_schemas_core[CT_EV_CUPTI_FIRST - CT_EV_FIRST] = {
	[CT_EV_NVTX_PUSH - CT_EV_FIRST] = {"nvtx_push", 8, {TS, ATTR_T}, {"ts", ATTR_N}},
	[CT_EV_NVTX_POP - CT_EV_FIRST] = {"nvtx_pop", 2, {TS, SID}, {"ts", "domain"}},
	[CT_EV_NVTX_START - CT_EV_FIRST] = {"nvtx_start", 9, {TS, U, ATTR_T}, {"ts", "id", ATTR_N}},
	[CT_EV_NVTX_END - CT_EV_FIRST] = {"nvtx_end", 3, {TS, U, SID}, {"ts", "id", "domain"}},
	[CT_EV_NVTX_MARK - CT_EV_FIRST] = {"nvtx_mark", 8, {TS, ATTR_T}, {"ts", ATTR_N}},
	[CT_EV_THREAD_NAME - CT_EV_FIRST] = {"thread_name", 4, {TS, U, STR, U}, {"ts", "tid", "name", "user"}},
	[CT_EV_CATEGORY - CT_EV_FIRST] = {"category", 4, {TS, SID, U, STR}, {"ts", "domain", "category", "name"}},
	[CT_EV_CAPTURE - CT_EV_FIRST] = {"capture", 2, {TS, U}, {"ts", "on"}},
	[CT_EV_STEP - CT_EV_FIRST] = {"step", 2, {TS, U}, {"ts", "step"}},
	[CT_EV_RESET - CT_EV_FIRST] = {"reset", 1, {TS}, {"ts"}},
	/* The watchdog (watchdog.c): the NCCL context and task ids as the
	 * nccl_* kinds have them; seq only when has_seq; in_flight ns. */
	[CT_EV_HANG - CT_EV_FIRST] = {"hang_suspected", 7, {TS, U, U, U, U, SID, U},
				      {"ts", "ctx", "task", "has_seq", "seq", "func", "in_flight"}},
};

/* Tables of the other sources, all-empty until a source defines them. */
extern const struct ct_schema ct_schemas_cupti[CT_EV_CUPTI_END - CT_EV_CUPTI_FIRST];
extern const struct ct_schema ct_schemas_nccl[CT_EV_NCCL_END - CT_EV_NCCL_FIRST];

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
	else
		return NULL;
	return s->name ? s : NULL;
}
