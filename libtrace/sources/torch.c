// SPDX-License-Identifier: MIT
/* The torch source: the entry points of include/cuptrace/torch_abi.h,
 * which the Python package's RecordFunction observer finds with dlsym
 * when the traced program imports torch. Operators and memory events go
 * into the calling thread's ring like every other record; CUPTRACE_TRACE
 * names the source (`torch`), CUPTRACE_TORCH what it adds (shapes,
 * memory, stack).
 *
 * cuptrace_torch_op is the hot path: a load of the source's bit, the
 * capture gate and the thread's ring, the record's fields and its text
 * copied in. Its times are the observer's cuptrace_torch_now() readings,
 * ct_stamp(): raw TSC ticks where the record clock is the TSC, flagged
 * as such, and the writer maps both of them (ts and end) to nanoseconds
 * as it maps every record's. cuptrace_torch_enter/exit hand the
 * operator's id to CUPTI (the CUPTI source's functions, cupti_int.h), so
 * that the CUDA calls it makes, and their GPU work, carry it. */
#include "cuptrace/torch_abi.h"

#include "capture.h"
#include "cupti_int.h"
#include "lifecycle.h"
#include "record.h"
#include "thread.h"
#include "trace.h"

#include <stdatomic.h>
#include <string.h>

_Static_assert(CT_TORCH_SHAPES == CUPTRACE_TORCH_SHAPES &&
                   CT_TORCH_MEMORY == CUPTRACE_TORCH_MEMORY &&
                   CT_TORCH_STACK == CUPTRACE_TORCH_STACK,
               "CUPTRACE_TORCH's bits are cuptrace_torch_config()'s");

/* Each text is cut here (the observer cuts it already): four of them
 * always fit one ring chunk. */
#define TEXT_MAX 4096u

/* The length of a text kept: cut at TEXT_MAX, at a UTF-8 character's
 * start (the cut is counted, as NVTX's are). */
static inline uint32_t text_len(const char *s, uint32_t n)
{
	if (!s)
		return 0;
	if (__builtin_expect(n <= TEXT_MAX, 1))
		return n;
	atomic_fetch_add_explicit(&ct.truncated_strings, 1, memory_order_relaxed);
	n = TEXT_MAX;
	/* s[n] is the first byte left out: a continuation byte there means
	 * the character before it would be cut in two. */
	for (int k = 0; k < 3 && n && ((uint8_t)s[n] & 0xc0) == 0x80; k++)
		n--;
	if (((uint8_t)s[n] & 0xc0) == 0x80)
		n = TEXT_MAX; /* not UTF-8: the bytes as they are */
	return n;
}

static inline int torch_on(void)
{
	return (ct.cfg.sources & CT_SRC_TORCH) != 0;
}

CT_API unsigned cuptrace_torch_config(void)
{
	ct_enter();
	if (!ct.active || !torch_on())
		return 0;
	return CUPTRACE_TORCH_ON | (ct.cfg.torch & (CUPTRACE_TORCH_SHAPES | CUPTRACE_TORCH_MEMORY |
	                                            CUPTRACE_TORCH_STACK));
}

CT_API uint64_t cuptrace_torch_now(void)
{
	return ct_stamp();
}

/* Operator ids go to CUPTI's external correlation stack (kind CUSTOM0,
 * as Kineto pushes them) while the CUPTI source has it (cupti.c sets
 * ct_cupti_ext_on), never from a forked child (its CUPTI is the
 * parent's). Without CUPTI: one load and one predictable branch. A pop
 * CUPTI refuses (its stack empty: CUPTI started inside the operator and
 * never saw its push) is no failure. */
static inline int ext_on(void)
{
	return __builtin_expect(atomic_load_explicit(&ct_cupti_ext_on, memory_order_acquire), 0) &&
	       ct.pid == ct_cupti_pid;
}

CT_API void cuptrace_torch_enter(uint64_t id)
{
	if (ext_on())
		ct_cu.push_ext(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, id);
}

CT_API void cuptrace_torch_exit(void)
{
	if (ext_on())
		ct_cu.pop_ext(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL);
}

static inline char *put_text(char *o, const char *s, uint32_t n)
{
	if (n)
		memcpy(o, s, n);
	return o + n;
}

CT_API void cuptrace_torch_op(const struct cuptrace_torch_op *op)
{
	if (__builtin_expect(!torch_on() || !op, 0))
		return;
	struct ct_thread *t = ct_recorder();
	if (!t)
		return;
	unsigned detail = ct.cfg.torch;
	uint32_t nl = text_len(op->name, op->name_len);
	uint32_t dl = detail & CT_TORCH_SHAPES ? text_len(op->dims, op->dims_len) : 0;
	uint32_t tl = detail & CT_TORCH_SHAPES ? text_len(op->types, op->types_len) : 0;
	uint32_t sl = detail & CT_TORCH_STACK ? text_len(op->stack, op->stack_len) : 0;
	struct ct_rec *r = ct_rec_begin(t, CT_EV_TORCH_OP, F_TORCH_OP_N, nl + dl + tl + sl);
	if (!r)
		return;
	r->reserved = ct_tick_flag; /* start and end are ct_stamp()s */
	uint64_t *f = r->f;
	f[F_TORCH_OP_TS] = op->start;
	f[F_TORCH_OP_END] = op->end;
	f[F_TORCH_OP_ID] = op->id;
	f[F_TORCH_OP_SEQ] = op->seq;
	f[F_TORCH_OP_NAME] = nl;
	f[F_TORCH_OP_SCOPE] = op->scope;
	f[F_TORCH_OP_RF_TID] = op->rf_tid;
	f[F_TORCH_OP_FWD_TID] = op->fwd_tid;
	f[F_TORCH_OP_TID] = op->tid;
	f[F_TORCH_OP_DIMS] = dl;
	f[F_TORCH_OP_TYPES] = tl;
	f[F_TORCH_OP_STACK] = sl;
	/* The texts follow the fields, in the order of their fields. */
	char *o = (char *)&f[F_TORCH_OP_N];
	o = put_text(o, op->name, nl);
	o = put_text(o, op->dims, dl);
	o = put_text(o, op->types, tl);
	put_text(o, op->stack, sl);
	ct_commit(t, r->size);
}

CT_API void cuptrace_torch_mem(uint64_t ptr, int64_t bytes, int64_t device, uint64_t allocated,
                               uint64_t reserved, uint64_t op)
{
	if (__builtin_expect(!torch_on() || !(ct.cfg.torch & CT_TORCH_MEMORY), 0))
		return;
	struct ct_thread *t = ct_recorder();
	if (!t)
		return;
	uint64_t f[F_TORCH_MEM_N] = {
	    [F_TORCH_MEM_TS] = ct_stamp(),
	    [F_TORCH_MEM_PTR] = ptr,
	    [F_TORCH_MEM_BYTES] = (uint64_t)bytes,
	    [F_TORCH_MEM_DEVICE] = (uint64_t)device,
	    [F_TORCH_MEM_ALLOCATED] = allocated,
	    [F_TORCH_MEM_RESERVED] = reserved,
	    [F_TORCH_MEM_OP] = op,
	};
	ct_rec_stamped(t, CT_EV_TORCH_MEM, f, F_TORCH_MEM_N);
}
