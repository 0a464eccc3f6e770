/* Field layouts of every event kind; enc.c and dec.c both read this table. */
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

static const struct ct_schema schemas[CT_EV_LAST - CT_EV_FIRST] = {
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
};

const struct ct_schema *ct_schema_of(unsigned kind)
{
	if (kind < CT_EV_FIRST || kind >= CT_EV_LAST)
		return NULL;
	const struct ct_schema *s = &schemas[kind - CT_EV_FIRST];
	return s->name ? s : NULL;
}
