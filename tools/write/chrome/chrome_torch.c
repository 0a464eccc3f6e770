// SPDX-License-Identifier: MIT
/* PyTorch's operators, record_function scopes and memory in the model as
 * Kineto writes them (torch.profiler's trace), so that HTA and
 * TensorBoard's profiler plugin read them as theirs:
 *   - an operator: "cat":"cpu_op", args "External id" (the id its CUDA
 *     work carries), "Sequence number" and "Fwd thread id" (where torch
 *     gave a sequence number), "Input Dims" ([[2, 3], [3]]), "Input type"
 *     (["float", "float"]), "Call stack";
 *   - a scope: "cat":"user_annotation" with its "External id"
 *     (ProfilerStep#N is a scope of that name, as in torch);
 *   - an allocation or free: a "[memory]" instant ("s":"t") on its thread,
 *     args "Device Type" (0 CPU, 1 CUDA), "Device Id", "Addr", "Bytes",
 *     "Total Allocated", "Total Reserved"; and the allocator's total as a
 *     counter ("torch allocated") of the CPU's or the GPU's process.
 * Every string is escaped; the sizes of dims are written as JSON numbers
 * only when all of them are (digits, no leading zero; else "Input Dims"
 * is left out). */
#include "cuptrace/torch_abi.h"
#include "write/chrome/chrome_int.h"

#define DIM_DIGITS 19 /* a size longer than this is not a size */

/* Whether text is inputs by ';', each of sizes by ',' that are JSON
 * numbers: digits, no leading zero. */
static int dims_valid(const char *s, size_t n)
{
	size_t digits = 0;
	int need = 0, zero = 0; /* need: a size must follow (after a ','); zero: it began with 0 */
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch >= '0' && ch <= '9') {
			if (zero || ++digits > DIM_DIGITS)
				return 0;
			zero = digits == 1 && ch == '0';
			need = 0;
		} else if (ch == ',') {
			if (!digits)
				return 0;
			digits = 0, need = 1, zero = 0;
		} else if (ch == ';') {
			if (need)
				return 0;
			digits = 0, zero = 0;
		} else {
			return 0;
		}
	}
	return !need;
}

/* "Input Dims":[[2,3],[3],[]] from "2,3;3;" (validated) */
static void dims_json(struct out *o, const char *s, size_t n)
{
	out_lit(o, ",\"Input Dims\":[[");
	for (size_t i = 0; i < n; i++) {
		if (s[i] == ';')
			out_lit(o, "],[");
		else
			out_ch(o, s[i]);
	}
	out_lit(o, "]]");
}

/* "Input type":["float","float"] from "float;float" */
static void types_json(struct out *o, const char *s, size_t n)
{
	out_lit(o, ",\"Input type\":[");
	size_t from = 0;
	for (size_t i = 0; i <= n; i++)
		if (i == n || s[i] == ';') {
			if (from)
				out_ch(o, ',');
			out_json_str(o, s + from, i - from);
			from = i + 1;
		}
	out_ch(o, ']');
}

static void op(struct chrome *c, const struct m_event *ev)
{
	const struct m_torch *t = &ev->torch;
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	if (ev->cat == MC_TORCH_SCOPE)
		out_lit(o, "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":");
	else
		out_lit(o, "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":");
	chrome_sref(c, &t->name);
	chrome_track_pt(c, ev->track);
	chrome_ts(c, ev->ts);
	out_lit(o, ",\"dur\":");
	out_us(o, (int64_t)(ev->end - ev->ts));
	out_lit(o, ",\"args\":{\"External id\":");
	out_u64(o, t->id);
	if (t->seq) { /* torch's number + 1 in the file */
		out_lit(o, ",\"Sequence number\":");
		out_u64(o, t->seq - 1);
		out_lit(o, ",\"Fwd thread id\":");
		out_u64(o, t->fwd_tid);
	}
	if (t->dims.len && dims_valid(t->dims.s, t->dims.len))
		dims_json(o, t->dims.s, t->dims.len);
	if (t->types.len)
		types_json(o, t->types.s, t->types.len);
	if (t->stack.len) {
		out_lit(o, ",\"Call stack\":");
		out_json_str(o, t->stack.s, t->stack.len);
	}
	if (t->end_track) {
		out_lit(o, ",\"ended on thread\":");
		out_i64(o, t->end_track->tid);
	}
	out_lit(o, "}}");
}

static void mem(struct chrome *c, const struct m_event *ev)
{
	const struct m_tmem *a = &ev->tmem;
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	if (ev->type == ME_COUNTER) {
		out_lit(o, "{\"ph\":\"C\",\"name\":\"torch allocated\",\"pid\":");
		out_u64(o, a->device < 0 ? c->t->pid : chrome_gpu_pid(c, (uint64_t)a->device));
		chrome_ts(c, ev->ts);
		out_lit(o, ",\"args\":{\"bytes\":");
		out_u64(o, a->allocated);
		out_lit(o, "}}");
		return;
	}
	out_lit(o, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"cpu_instant_event\",\"name\":\"[memory]\"");
	chrome_track_pt(c, ev->track);
	chrome_ts(c, ev->ts);
	out_lit(o, ",\"args\":{\"Device Type\":");
	out_ch(o, a->device < 0 ? '0' : '1');
	out_lit(o, ",\"Device Id\":");
	out_i64(o, a->device);
	out_lit(o, ",\"Addr\":");
	out_u64(o, a->ptr);
	out_lit(o, ",\"Bytes\":");
	out_i64(o, a->bytes);
	out_lit(o, ",\"Total Allocated\":");
	out_u64(o, a->allocated);
	out_lit(o, ",\"Total Reserved\":");
	out_u64(o, a->reserved);
	if (a->op) {
		out_lit(o, ",\"External id\":");
		out_u64(o, a->op);
	}
	out_lit(o, "}}");
}

void chrome_torch(struct chrome *c, const struct m_event *ev)
{
	if (ev->cat == MC_TORCH_MEM)
		mem(c, ev);
	else if (ev->type == ME_SLICE)
		op(c, ev);
}
