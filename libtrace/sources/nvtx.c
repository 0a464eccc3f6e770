// SPDX-License-Identifier: MIT
/* NVTX source: the NVTX3 loader calls InitializeInjectionNvtx2 when
 * NVTX_INJECTION64_PATH names this library; we fill its function tables
 * with the recorders below. Ranges keep name, domain, category, color and
 * payload. Push/pop are the hot path: one relaxed load of the gate, the
 * thread's ring pointer, the clock, a copy of the message. */
#define NVTX_NO_IMPL
#include "nvtx3/nvToolsExt.h"

#include "capture.h"
#include "defs.h"
#include "lifecycle.h"
#include "log.h"
#include "record.h"
#include "thread.h"
#include "trace.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Messages longer than this are cut; they must fit one ring chunk. */
#define MSG_MAX (96u << 10)

static _Atomic uint64_t next_range_id = 1;

/* Attributes of one event, read defensively from the caller's struct. */
struct attr {
	uint64_t category, color, ptype, payload, msg_h;
	const char *msg;    /* ASCII message, or NULL */
	const wchar_t *wmsg; /* wide message, or NULL */
};

static void read_attr(const nvtxEventAttributes_t *a, struct attr *o)
{
	memset(o, 0, sizeof *o);
	if (!a || a->size < NVTX_EVENT_ATTRIB_STRUCT_SIZE)
		return;
	o->category = a->category;
	if (a->colorType == NVTX_COLOR_ARGB)
		o->color = CT_COLOR_SET | a->color;
	switch (a->payloadType) {
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
	case NVTX_PAYLOAD_TYPE_INT64:
	case NVTX_PAYLOAD_TYPE_DOUBLE:
		o->ptype = (uint64_t)a->payloadType;
		o->payload = a->payload.ullValue;
		break;
	case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
	case NVTX_PAYLOAD_TYPE_INT32:
	case NVTX_PAYLOAD_TYPE_FLOAT:
		o->ptype = (uint64_t)a->payloadType;
		o->payload = a->payload.uiValue;
		break;
	}
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		o->msg = a->message.ascii;
		break;
	case NVTX_MESSAGE_TYPE_UNICODE:
		o->wmsg = a->message.unicode;
		break;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		o->msg_h = (uint64_t)(uintptr_t)a->message.registered;
		break;
	}
}

/* UTF-8 length of a wide string (code points beyond Unicode become U+FFFD),
 * counting only the characters that fit whole in max bytes; *cut says
 * whether some did not. */
static size_t wide_len_max(const wchar_t *w, size_t max, int *cut)
{
	size_t n = 0;
	*cut = 0;
	for (; *w; w++) {
		uint32_t c = (uint32_t)*w;
		size_t k = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 || c > 0x10ffff ? 3 : 4;
		if (n + k > max) {
			*cut = 1;
			break;
		}
		n += k;
	}
	return n;
}

static size_t wide_len(const wchar_t *w)
{
	int cut;
	return wide_len_max(w, SIZE_MAX, &cut);
}

static void wide_put(char *o, const wchar_t *w, size_t max)
{
	size_t n = 0;
	for (; *w; w++) {
		uint32_t c = (uint32_t)*w;
		char b[4];
		size_t k;
		if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
			c = 0xfffd;
		if (c < 0x80)
			b[0] = (char)c, k = 1;
		else if (c < 0x800)
			b[0] = (char)(0xc0 | c >> 6), b[1] = (char)(0x80 | (c & 0x3f)), k = 2;
		else if (c < 0x10000)
			b[0] = (char)(0xe0 | c >> 12), b[1] = (char)(0x80 | ((c >> 6) & 0x3f)),
			b[2] = (char)(0x80 | (c & 0x3f)), k = 3;
		else
			b[0] = (char)(0xf0 | c >> 18), b[1] = (char)(0x80 | ((c >> 12) & 0x3f)),
			b[2] = (char)(0x80 | ((c >> 6) & 0x3f)), b[3] = (char)(0x80 | (c & 0x3f)), k = 4;
		if (n + k > max)
			return;
		memcpy(o + n, b, k);
		n += k;
	}
}

static size_t msg_len(const struct attr *a)
{
	if (a->msg) {
		size_t n = strlen(a->msg);
		if (n > MSG_MAX) {
			atomic_fetch_add_explicit(&ct.truncated_strings, 1, memory_order_relaxed);
			n = MSG_MAX;
		}
		return n;
	}
	if (!a->wmsg)
		return 0;
	/* Cut at a character boundary: the record holds exactly the bytes
	 * wide_put writes (a cut inside a character left up to 3 bytes of
	 * whatever the ring held before). */
	int cut;
	size_t n = wide_len_max(a->wmsg, MSG_MAX, &cut);
	if (cut)
		atomic_fetch_add_explicit(&ct.truncated_strings, 1, memory_order_relaxed);
	return n;
}

static void msg_put(char *o, const struct attr *a, size_t n)
{
	if (a->msg)
		memcpy(o, a->msg, n);
	else if (a->wmsg)
		wide_put(o, a->wmsg, n);
}

/* Writes an attribute record: push, start or mark. */
static inline int put_attr(struct ct_thread *t, unsigned kind, uint64_t ts, uint64_t id,
			   uint64_t domain, const struct attr *a)
{
	size_t len = msg_len(a);
	unsigned nf = kind == CT_EV_NVTX_START ? F_NVTX_START_N : F_NVTX_PUSH_N; /* mark: as push */
	struct ct_rec *r = ct_rec_begin(t, kind, nf, (uint32_t)len);
	if (!r)
		return -1;
	r->reserved = ct_tick_flag; /* ts is a ct_stamp() */
	uint64_t *f = r->f;
	f[F_TS] = ts;
	if (kind == CT_EV_NVTX_START) {
		f[F_NVTX_START_ID] = id;
		f += F_NVTX_START_DOMAIN;
	} else {
		f += F_NVTX_PUSH_DOMAIN;
	}
	f[F_NVTX_ATTR_DOMAIN] = domain;
	f[F_NVTX_ATTR_CATEGORY] = a->category;
	f[F_NVTX_ATTR_COLOR] = a->color;
	f[F_NVTX_ATTR_PAYLOAD_TYPE] = a->ptype;
	f[F_NVTX_ATTR_PAYLOAD] = a->payload;
	f[F_NVTX_ATTR_MSG_ID] = a->msg_h;
	f[F_NVTX_ATTR_MSG] = len;
	/* the attributes are the last fields: the message's bytes follow */
	msg_put((char *)&f[F_NVTX_ATTR_N], a, len);
	ct_commit(t, r->size);
	return 0;
}

static int watch_begin(struct ct_thread **tp, const struct attr *a, uint64_t domain)
{
	size_t len = a->msg ? strlen(a->msg) : 0;
	int opened = ct_capture_range_begins(a->msg ? a->msg : "", len, a->msg_h, domain);
	*tp = ct_recorder();
	return opened;
}

static int push(uint64_t domain, const struct attr *a)
{
	struct ct_thread *t;
	int trigger = 0;
	if (__builtin_expect(ct_nvtx_watch, 0))
		trigger = watch_begin(&t, a, domain);
	else
		t = ct_recorder();
	if (!t)
		return 0;
	int d = t->depth++;
	if (trigger)
		t->trigger_depth = d + 1;
	if (t->drop_depth) {
		ct_count_drop(t, CT_EV_NVTX_PUSH);
		return d;
	}
	if (put_attr(t, CT_EV_NVTX_PUSH, ct_stamp(), 0, domain, a))
		t->drop_depth = d + 1;
	return d;
}

static int pop(uint64_t domain)
{
	struct ct_thread *t = ct_recorder();
	if (!t)
		return 0;
	if (t->depth > 0)
		t->depth--;
	int d = t->depth;
	if (t->drop_depth) {
		ct_count_drop(t, CT_EV_NVTX_POP);
		if (d < t->drop_depth)
			t->drop_depth = 0;
	} else {
		uint64_t f[F_NVTX_POP_N] = {
		    [F_NVTX_POP_TS] = ct_stamp(), [F_NVTX_POP_DOMAIN] = domain};
		ct_rec_stamped(t, CT_EV_NVTX_POP, f, F_NVTX_POP_N);
	}
	if (t->trigger_depth && d < t->trigger_depth) {
		t->trigger_depth = 0;
		ct_capture_range_ends();
	}
	return d;
}

static _Atomic uint64_t trigger_range;

static nvtxRangeId_t start(uint64_t domain, const struct attr *a)
{
	struct ct_thread *t;
	int trigger = 0;
	if (__builtin_expect(ct_nvtx_watch, 0))
		trigger = watch_begin(&t, a, domain);
	else
		t = ct_recorder();
	if (!t)
		return 0;
	uint64_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);
	if (trigger)
		atomic_store(&trigger_range, id);
	put_attr(t, CT_EV_NVTX_START, ct_stamp(), id, domain, a);
	return id;
}

static void end(uint64_t domain, nvtxRangeId_t id)
{
	struct ct_thread *t = ct_recorder();
	if (!t || !id)
		return;
	uint64_t f[F_NVTX_END_N] = {
	    [F_NVTX_END_TS] = ct_stamp(), [F_NVTX_END_ID] = id, [F_NVTX_END_DOMAIN] = domain};
	ct_rec_stamped(t, CT_EV_NVTX_END, f, F_NVTX_END_N);
	uint64_t want = id;
	if (atomic_load_explicit(&trigger_range, memory_order_relaxed) == id &&
	    atomic_compare_exchange_strong(&trigger_range, &want, 0))
		ct_capture_range_ends();
}

static void mark(uint64_t domain, const struct attr *a)
{
	struct ct_thread *t = ct_recorder();
	if (t)
		put_attr(t, CT_EV_NVTX_MARK, ct_stamp(), 0, domain, a);
}

static uint64_t dom(nvtxDomainHandle_t d)
{
	return (uint64_t)(uintptr_t)d;
}

/* ---- the functions the NVTX tables point at ---- */

static void MarkEx(const nvtxEventAttributes_t *e)
{
	struct attr a;
	read_attr(e, &a);
	mark(0, &a);
}
static void MarkA(const char *m)
{
	struct attr a = {.msg = m};
	mark(0, &a);
}
static void MarkW(const wchar_t *m)
{
	struct attr a = {.wmsg = m};
	mark(0, &a);
}
static nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t *e)
{
	struct attr a;
	read_attr(e, &a);
	return start(0, &a);
}
static nvtxRangeId_t RangeStartA(const char *m)
{
	struct attr a = {.msg = m};
	return start(0, &a);
}
static nvtxRangeId_t RangeStartW(const wchar_t *m)
{
	struct attr a = {.wmsg = m};
	return start(0, &a);
}
static void RangeEnd(nvtxRangeId_t id)
{
	end(0, id);
}
static int RangePushEx(const nvtxEventAttributes_t *e)
{
	struct attr a;
	read_attr(e, &a);
	return push(0, &a);
}
static int RangePushA(const char *m)
{
	struct attr a = {.msg = m};
	return push(0, &a);
}
static int RangePushW(const wchar_t *m)
{
	struct attr a = {.wmsg = m};
	return push(0, &a);
}
static int RangePop(void)
{
	return pop(0);
}

/* Category names go through the definitions queue: other threads use them
 * and must find them ahead of their events in the file. */
static void name_category(uint64_t domain, uint32_t cat, const char *name, size_t len)
{
	struct ct_thread *t = ct_self();
	if (!t)
		return;
	if (len > MSG_MAX)
		len = MSG_MAX;
	struct ct_rec *r = ct_rec_new(CT_EV_CATEGORY, F_CATEGORY_N, (uint32_t)len);
	if (!r)
		return;
	r->f[F_CATEGORY_DOMAIN] = domain;
	r->f[F_CATEGORY_CATEGORY] = cat;
	r->f[F_CATEGORY_NAME] = len;
	memcpy(&r->f[F_CATEGORY_N], name, len);
	ct_defs_add_record(t->tid, r);
	free(r);
}

/* A wide string as a malloc'd UTF-8 string (rare calls only). */
static char *utf8_of(const wchar_t *w)
{
	size_t n = w ? wide_len(w) : 0;
	char *s = malloc(n + 1);
	if (!s)
		return NULL;
	if (w)
		wide_put(s, w, n);
	s[n] = 0;
	return s;
}

static void NameCategoryA(uint32_t cat, const char *name)
{
	if (name)
		name_category(0, cat, name, strlen(name));
}
static void NameCategoryW(uint32_t cat, const wchar_t *name)
{
	char *s = utf8_of(name);
	if (s)
		name_category(0, cat, s, strlen(s));
	free(s);
}
static void NameOsThreadA(uint32_t tid, const char *name)
{
	struct ct_thread *t = ct_self();
	if (t && name)
		ct_rec_thread_name(t, tid, name, strlen(name), 1);
}
static void NameOsThreadW(uint32_t tid, const wchar_t *name)
{
	char *s = utf8_of(name);
	struct ct_thread *t = ct_self();
	if (t && s)
		ct_rec_thread_name(t, tid, s, strlen(s), 1);
	free(s);
}

static void DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *e)
{
	struct attr a;
	read_attr(e, &a);
	mark(dom(d), &a);
}
static nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *e)
{
	struct attr a;
	read_attr(e, &a);
	return start(dom(d), &a);
}
static void DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	end(dom(d), id);
}
static int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *e)
{
	struct attr a;
	read_attr(e, &a);
	return push(dom(d), &a);
}
static int DomainRangePop(nvtxDomainHandle_t d)
{
	return pop(dom(d));
}

static char resource_dummy;
static nvtxResourceHandle_t DomainResourceCreate(nvtxDomainHandle_t d, nvtxResourceAttributes_t *a)
{
	(void)d, (void)a;
	return (nvtxResourceHandle_t)&resource_dummy;
}
static void DomainResourceDestroy(nvtxResourceHandle_t r)
{
	(void)r;
}
static void DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t cat, const char *name)
{
	if (name)
		name_category(dom(d), cat, name, strlen(name));
}
static void DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t cat, const wchar_t *name)
{
	char *s = utf8_of(name);
	if (s)
		name_category(dom(d), cat, s, strlen(s));
	free(s);
}
static nvtxStringHandle_t register_string(const char *s)
{
	size_t len = strlen(s);
	uint64_t h = ct_handle_new(s, len);
	if (h && ct_nvtx_watch)
		ct_capture_note_string(h, s, len);
	return (nvtxStringHandle_t)(uintptr_t)h;
}
static nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
	(void)d;
	return s ? register_string(s) : NULL;
}
static nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t d, const wchar_t *w)
{
	(void)d;
	char *s = utf8_of(w);
	nvtxStringHandle_t h = s ? register_string(s) : NULL;
	free(s);
	return h;
}
static nvtxDomainHandle_t DomainCreateA(const char *name)
{
	if (!name)
		return NULL;
	return (nvtxDomainHandle_t)(uintptr_t)ct_domain_handle(name, strlen(name));
}
static nvtxDomainHandle_t DomainCreateW(const wchar_t *name)
{
	char *s = utf8_of(name);
	nvtxDomainHandle_t h = s ? DomainCreateA(s) : NULL;
	free(s);
	return h;
}
static void DomainDestroy(nvtxDomainHandle_t d)
{
	(void)d;
}
static void Initialize(const void *reserved)
{
	(void)reserved;
}

/* ---- attaching to the NVTX loader ---- */

struct slot {
	unsigned id;
	NvtxFunctionPointer fn;
};

#define FN(f) ((NvtxFunctionPointer)(void (*)(void))(f))

static const struct slot core[] = {
	{NVTX_CBID_CORE_MarkEx, FN(MarkEx)},
	{NVTX_CBID_CORE_MarkA, FN(MarkA)},
	{NVTX_CBID_CORE_MarkW, FN(MarkW)},
	{NVTX_CBID_CORE_RangeStartEx, FN(RangeStartEx)},
	{NVTX_CBID_CORE_RangeStartA, FN(RangeStartA)},
	{NVTX_CBID_CORE_RangeStartW, FN(RangeStartW)},
	{NVTX_CBID_CORE_RangeEnd, FN(RangeEnd)},
	{NVTX_CBID_CORE_RangePushEx, FN(RangePushEx)},
	{NVTX_CBID_CORE_RangePushA, FN(RangePushA)},
	{NVTX_CBID_CORE_RangePushW, FN(RangePushW)},
	{NVTX_CBID_CORE_RangePop, FN(RangePop)},
	{NVTX_CBID_CORE_NameCategoryA, FN(NameCategoryA)},
	{NVTX_CBID_CORE_NameCategoryW, FN(NameCategoryW)},
	{NVTX_CBID_CORE_NameOsThreadA, FN(NameOsThreadA)},
	{NVTX_CBID_CORE_NameOsThreadW, FN(NameOsThreadW)},
};

static const struct slot core2[] = {
	{NVTX_CBID_CORE2_DomainMarkEx, FN(DomainMarkEx)},
	{NVTX_CBID_CORE2_DomainRangeStartEx, FN(DomainRangeStartEx)},
	{NVTX_CBID_CORE2_DomainRangeEnd, FN(DomainRangeEnd)},
	{NVTX_CBID_CORE2_DomainRangePushEx, FN(DomainRangePushEx)},
	{NVTX_CBID_CORE2_DomainRangePop, FN(DomainRangePop)},
	{NVTX_CBID_CORE2_DomainResourceCreate, FN(DomainResourceCreate)},
	{NVTX_CBID_CORE2_DomainResourceDestroy, FN(DomainResourceDestroy)},
	{NVTX_CBID_CORE2_DomainNameCategoryA, FN(DomainNameCategoryA)},
	{NVTX_CBID_CORE2_DomainNameCategoryW, FN(DomainNameCategoryW)},
	{NVTX_CBID_CORE2_DomainRegisterStringA, FN(DomainRegisterStringA)},
	{NVTX_CBID_CORE2_DomainRegisterStringW, FN(DomainRegisterStringW)},
	{NVTX_CBID_CORE2_DomainCreateA, FN(DomainCreateA)},
	{NVTX_CBID_CORE2_DomainCreateW, FN(DomainCreateW)},
	{NVTX_CBID_CORE2_DomainDestroy, FN(DomainDestroy)},
	{NVTX_CBID_CORE2_Initialize, FN(Initialize)},
};

static int fill(const NvtxExportTableCallbacks *cb, NvtxCallbackModule m, const struct slot *s,
		size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned size = 0;
	if (!cb->GetModuleFunctionTable(m, &table, &size) || !table)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (s[i].id < size && table[s[i].id])
			*table[s[i].id] = s[i].fn;
	return 0;
}

CT_API int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	ct_enter();
	if (!ct.active || !(ct.cfg.sources & CT_SRC_NVTX) || !get)
		return 0; /* NVTX turns every call into a no-op */
	const NvtxExportTableCallbacks *cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof *cb || !cb->GetModuleFunctionTable) {
		ct_warn("NVTX export table not understood; NVTX ranges are not traced");
		return 0;
	}
	if (fill(cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof *core) ||
	    fill(cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof *core2)) {
		ct_warn("NVTX function tables not available; NVTX ranges are not traced");
		return 0;
	}
	const NvtxExportTableVersionInfo *vi = get(NVTX_ETID_VERSIONINFO);
	if (vi && vi->struct_size >= sizeof *vi && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
	ct_debug("NVTX attached");
	return 1;
}

/* The control API's ranges use the same recorders, in the default domain. */
int ct_nvtx_push_ascii(const char *msg)
{
	struct attr a = {.msg = msg};
	return push(0, &a);
}
int ct_nvtx_pop(void)
{
	return pop(0);
}
void ct_nvtx_mark_ascii(const char *msg)
{
	struct attr a = {.msg = msg};
	mark(0, &a);
}
