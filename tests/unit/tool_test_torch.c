// SPDX-License-Identifier: MIT
/* model/model_torch.c and the record_function projection of
 * model/model_annot.c, on a trace written with the real encoder in the
 * order the library writes one: CUPTI's buffers (an ext_corr record just
 * before its call's API record, kernels after) apart from the threads'
 * rings, where the observer writes each operator when it ends (inner ones
 * first), a backward operator on another thread and a scope ended on
 * another thread than the one it began on.
 *   - operators and scopes are slices on the thread they began on, with
 *     their id, sequence number, thread numbers, dims, types, stack;
 *   - the CUDA call and the kernel of a correlation id carry the id of
 *     the operator (ext_corr) - and nothing when the ext_corr is of
 *     another kind or missing;
 *   - allocations are instants on their thread and counters of their
 *     device;
 *   - a scope's GPU work (gpu_user_annotation), from calls that came
 *     before the scope in the file and calls that came after it;
 *   - a forward op joined to the backward op of its sequence number by
 *     a flow, though the backward op's thread comes first in the file.
 * With an argument, writes the trace to that path and exits. */
#include "check.h"
#include "cuptrace/torch_abi.h"
#include "enc.h"
#include "model/model.h"
#include "read/inputs.h"
#include "varint.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

/* ---- writing a trace */

static uint8_t file[1 << 20];
static size_t flen;
static struct ct_enc enc;

static void put(const void *p, size_t n)
{
	CHECK(flen + n <= sizeof file);
	memcpy(file + flen, p, n);
	flen += n;
}

static void header(void)
{
	static const char cfg[] = "CUPTRACE_TRACE=cuda,nvtx,torch\n";
	uint8_t hdr[512], *p = hdr + 16;
	p = ct_tlv_str(p, CT_H_TRACER_VERSION, "0.1.0", 5);
	p = ct_tlv_str(p, CT_H_HOST, "node1", 5);
	p = ct_tlv_u(p, CT_H_PID, 100);
	p = ct_tlv_u(p, CT_H_RANK, ct_zigzag(0));
	p = ct_tlv_u(p, CT_H_WORLD_SIZE, ct_zigzag(1));
	p = ct_tlv_u(p, CT_H_RT_ANCHOR, 1700000000000000000ull);
	p = ct_tlv_u(p, CT_H_MONO_ANCHOR, 500);
	p = ct_tlv_str(p, CT_H_CONFIG, cfg, sizeof cfg - 1);
	put(hdr, ct_header_seal(hdr, p));
	CHECK(!ct_enc_init(&enc, 1 << 20));
}

static void end_block(void)
{
	size_t rn;
	const uint8_t *raw = ct_enc_block(&enc, &rn);
	CHECK(raw);
	static uint8_t z[1 << 18];
	size_t zn = ZSTD_compress(z, sizeof z, raw, rn, 3);
	CHECK(!ZSTD_isError(zn));
	uint32_t h[3] = {CT_BLOCK_MAGIC, (uint32_t)zn, (uint32_t)rn};
	put(h, 12);
	put(z, zn);
	ct_enc_new_block(&enc);
}

/* One record: f by field, each STR field's text from strs in order. */
static void rec(unsigned kind, const uint64_t *f, const char *const *strs)
{
	const struct ct_schema *s = ct_schema_of(kind);
	static uint64_t mem[2048];
	struct ct_rec *r = (struct ct_rec *)mem;
	r->kind = (uint16_t)kind;
	char *text = (char *)&r->f[s->nfields];
	uint32_t tl = 0;
	for (unsigned i = 0, k = 0; i < s->nfields; i++) {
		r->f[i] = f[i];
		if (s->type[i] == CT_F_STR) {
			const char *t = strs && strs[k] ? strs[k] : "";
			k++;
			r->f[i] = strlen(t);
			memcpy(text + tl, t, r->f[i]);
			tl += (uint32_t)r->f[i];
		}
	}
	r->size = ct_rec_size(s->nfields, tl);
	CHECK(r->size <= sizeof mem);
	CHECK(!ct_enc_record(&enc, r));
}

enum { H_LAUNCH = 1, H_KERNEL = 2 };
#define HOSTILE "evil \"q\" \\ \x01\xff\xfe"

static void api(uint64_t corr, int64_t tid, uint64_t ts)
{
	uint64_t f[F_CUDA_API_N] = {[F_CUDA_API_TS] = ts, [F_CUDA_API_END] = ts + 50,
	                            [F_CUDA_API_CORRELATION] = corr, [F_CUDA_API_TID] = (uint64_t)tid,
	                            [F_CUDA_API_NAME] = H_LAUNCH, [F_CUDA_API_CBID] = 211};
	rec(CT_EV_CUDA_API, f, NULL);
}

static void kernel(uint64_t corr, uint64_t ts)
{
	uint64_t f[F_KERNEL_N] = {[F_KERNEL_TS] = ts, [F_KERNEL_END] = ts + 100,
	                          [F_KERNEL_CORRELATION] = corr, [F_KERNEL_STREAM] = 7,
	                          [F_KERNEL_NAME] = H_KERNEL, [F_KERNEL_GRID_X] = 1,
	                          [F_KERNEL_BLOCK_X] = 32};
	rec(CT_EV_KERNEL, f, NULL);
}

static void ext(uint64_t corr, uint64_t id, uint64_t kind)
{
	uint64_t f[F_EXT_CORR_N] = {[F_EXT_CORR_CORRELATION] = corr, [F_EXT_CORR_EXTERNAL] = id,
	                            [F_EXT_CORR_KIND] = kind};
	rec(CT_EV_EXT_CORR, f, NULL);
}

static void op(uint64_t id, uint32_t scope, const char *name, uint64_t ts, uint64_t end,
               uint64_t seq, uint64_t rf_tid, uint64_t fwd_tid, int64_t tid, const char *dims,
               const char *types, const char *stack)
{
	uint64_t f[F_TORCH_OP_N] = {[F_TORCH_OP_TS] = ts,         [F_TORCH_OP_END] = end,
	                            [F_TORCH_OP_ID] = id,         [F_TORCH_OP_SEQ] = seq,
	                            [F_TORCH_OP_SCOPE] = scope,   [F_TORCH_OP_RF_TID] = rf_tid,
	                            [F_TORCH_OP_FWD_TID] = fwd_tid, [F_TORCH_OP_TID] = (uint64_t)tid};
	const char *strs[] = {name, dims, types, stack};
	rec(CT_EV_TORCH_OP, f, strs);
}

static void write_trace(const char *path)
{
	header();
	ct_enc_handle(&enc, H_LAUNCH, "cudaLaunchKernel", 16);
	ct_enc_handle(&enc, H_KERNEL, "_Z4gemmPf", 9);
	/* CUPTI's buffer: calls of thread 100 made inside aten::mm (id 2),
	 * aten::add (3), and one with an ext_corr of another kind */
	ct_enc_thread(&enc, 999);
	ext(10, 2, 3);
	api(10, 100, 1100);
	ext(11, 3, 3);
	api(11, 100, 2100);
	kernel(10, 1300);
	kernel(11, 2300);
	ext(12, 9, 4); /* CUSTOM1: not an operator's id */
	api(12, 100, 2600);
	kernel(12, 2700);
	end_block();
	/* the autograd thread's ring first: a backward op (its forward op,
	 * aten::mm, comes later in the file) and its outer function, which
	 * started before it and so gets the link */
	ct_enc_thread(&enc, 200);
	op(7, CUPTRACE_TORCH_SCOPE_BACKWARD, "MmBackward0", 4000, 4500, 6, 2, 1, 0, "", "", "");
	op(4, CUPTRACE_TORCH_SCOPE_BACKWARD, "evaluate_function: MmBackward0", 3990, 4510, 6, 2, 1, 0,
	   "", "", "");
	end_block();
	/* thread 100's ring: operators as they end, the scope around them last */
	ct_enc_thread(&enc, 100);
	op(2, CUPTRACE_TORCH_SCOPE_OP, "aten::mm", 1000, 1500, 6, 1, 0, 0, "2,3;3,4", "float;float",
	   "train.py(12): forward;train.py(30): <module>");
	uint64_t m[F_TORCH_MEM_N] = {[F_TORCH_MEM_TS] = 1050,        [F_TORCH_MEM_PTR] = 0x7f00,
	                             [F_TORCH_MEM_BYTES] = 512,      [F_TORCH_MEM_DEVICE] = 0,
	                             [F_TORCH_MEM_ALLOCATED] = 4608, [F_TORCH_MEM_RESERVED] = 1 << 20,
	                             [F_TORCH_MEM_OP] = 2};
	rec(CT_EV_TORCH_MEM, m, NULL);
	op(3, CUPTRACE_TORCH_SCOPE_OP, "aten::add", 2000, 2500, 0, 1, 0, 0, "2;;3", "float;int;", "");
	/* text no output may trust: quotes, controls, invalid UTF-8, dims
	 * that are not numbers */
	op(6, CUPTRACE_TORCH_SCOPE_OTHER, HOSTILE, 2550, 2580, 0, 1, 0, 0, "0,1;07", "fl\"oat;\xc3",
	   "f\n\x7f\\");
	op(1, CUPTRACE_TORCH_SCOPE_USER, "my_scope", 900, 3000, 0, 1, 0, 0, "", "", "");
	end_block();
	/* the autograd thread again: a scope begun on thread 100 */
	ct_enc_thread(&enc, 200);
	op(5, CUPTRACE_TORCH_SCOPE_USER, "handoff", 3500, 5000, 0, 1, 0, 100, "", "", "");
	end_block();
	/* CUPTI's next buffer: a call of thread 100 inside "handoff", after it */
	ct_enc_thread(&enc, 999);
	ext(20, 5, 3);
	api(20, 100, 3600);
	kernel(20, 3800);
	end_block();
	uint64_t drops[CT_NKINDS] = {0};
	ct_enc_footer(&enc, drops, 1700000001000000000ull, 9000);
	end_block();
	ct_enc_free(&enc);
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(file, 1, flen, f) == flen && !fclose(f));
}

/* ---- what the model hands out */

struct seen {
	uint8_t type, cat;
	int64_t tid, end_tid;
	uint64_t ts, end, corr, ext;
	struct m_torch t;
	struct m_tmem mem;
	char name[64], dims[64], types[64], stack[128];
	int torch_part;
};

static struct seen ev[256];
static int nev;
static struct { /* MC_FWDBWD flows */
	int64_t from, to;
	uint64_t ts, to_ts;
} links[8];
static int nlinks;

static void copy(char *d, size_t cap, const struct sref *r)
{
	size_t n = r->len < cap - 1 ? r->len : cap - 1;
	memcpy(d, r->s, n);
	d[n] = 0;
}

static void on_event(void *ctx, const struct m_event *e)
{
	(void)ctx;
	if (e->type == ME_FLOW && e->cat == MC_FWDBWD && nlinks < 8)
		links[nlinks++] = (typeof(links[0])){e->track->tid, e->flow.to->tid, e->ts, e->flow.to_ts};
	if (e->type == ME_TRACK || e->type == ME_PROCESS || e->type == ME_FLOW)
		return;
	CHECK(nev < 256);
	struct seen *s = &ev[nev++];
	memset(s, 0, sizeof *s);
	s->type = e->type, s->cat = e->cat, s->ts = e->ts, s->end = e->end;
	s->tid = e->track ? e->track->tid : 0;
	switch (e->cat) {
	case MC_TORCH_OP:
	case MC_TORCH_SCOPE:
		s->t = e->torch;
		s->end_tid = e->torch.end_track ? e->torch.end_track->tid : 0;
		copy(s->name, sizeof s->name, &e->torch.name);
		copy(s->dims, sizeof s->dims, &e->torch.dims);
		copy(s->types, sizeof s->types, &e->torch.types);
		copy(s->stack, sizeof s->stack, &e->torch.stack);
		break;
	case MC_TORCH_MEM:
		s->mem = e->tmem;
		break;
	case MC_KERNEL:
		s->corr = e->gpu.corr, s->ext = e->gpu.ext;
		break;
	case MC_RUNTIME:
		s->corr = e->api.corr, s->ext = e->api.ext;
		break;
	case MC_GPU_ANNOTATION:
		copy(s->name, sizeof s->name, &e->span->name);
		s->torch_part = e->annot.torch;
		s->corr = e->annot.ops;
		break;
	default:
		break;
	}
}

static const struct seen *find(uint8_t cat, const char *name, uint64_t corr)
{
	for (int i = 0; i < nev; i++)
		if (ev[i].cat == cat && (!name || !strcmp(ev[i].name, name)) &&
		    (!corr || ev[i].corr == corr))
			return &ev[i];
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 2) {
		write_trace(argv[1]);
		return 0;
	}
	char path[] = "/tmp/tool_test_torch_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);
	write_trace(path);
	struct inputs in;
	char *args[] = {path};
	CHECK(!inputs_open(&in, args, 1, 1));
	const struct m_consumer c = {NULL, on_event, NULL};
	CHECK(!model_file(&in.v[0], &c, NULL, NULL));
	inputs_close(&in);
	unlink(path);

	/* operators and scopes, on the thread they began on */
	const struct seen *mm = find(MC_TORCH_OP, "aten::mm", 0);
	CHECK(mm && mm->type == ME_SLICE && mm->tid == 100 && mm->ts == 1000 && mm->end == 1500);
	CHECK(mm->t.id == 2 && mm->t.seq == 6 && mm->t.rf_tid == 1 && mm->t.fwd_tid == 0);
	CHECK(mm->t.scope == CUPTRACE_TORCH_SCOPE_OP && !mm->end_tid);
	CHECK(!strcmp(mm->dims, "2,3;3,4") && !strcmp(mm->types, "float;float"));
	CHECK(!strcmp(mm->stack, "train.py(12): forward;train.py(30): <module>"));
	const struct seen *sc = find(MC_TORCH_SCOPE, "my_scope", 0);
	CHECK(sc && sc->tid == 100 && sc->ts == 900 && sc->end == 3000 && sc->t.id == 1);
	CHECK(sc->t.scope == CUPTRACE_TORCH_SCOPE_USER);
	CHECK(sc > mm); /* handed out as the file has them: the outer one after */
	const struct seen *bw = find(MC_TORCH_OP, "MmBackward0", 0);
	CHECK(bw && bw->tid == 200 && bw->t.scope == CUPTRACE_TORCH_SCOPE_BACKWARD);
	CHECK(bw->t.seq == 6 && bw->t.fwd_tid == 1 && bw->t.rf_tid == 2);
	/* aten::mm -> the backward op of its sequence number that began first */
	CHECK(nlinks == 1 && links[0].from == 100 && links[0].ts == 1000);
	CHECK(links[0].to == 200 && links[0].to_ts == 3990);
	const struct seen *ad = find(MC_TORCH_OP, "aten::add", 0);
	CHECK(ad && !strcmp(ad->dims, "2;;3") && !strcmp(ad->types, "float;int;") && !ad->t.seq);
	const struct seen *ev6 = find(MC_TORCH_OP, HOSTILE, 0); /* passed on as bytes */
	CHECK(ev6 && ev6->t.scope == CUPTRACE_TORCH_SCOPE_OTHER && !strcmp(ev6->dims, "0,1;07"));
	const struct seen *ho = find(MC_TORCH_SCOPE, "handoff", 0);
	CHECK(ho && ho->tid == 100 && ho->end_tid == 200 && ho->ts == 3500 && ho->end == 5000);

	/* calls and kernels carry their operator's id */
	const struct seen *k10 = find(MC_KERNEL, NULL, 10), *a10 = find(MC_RUNTIME, NULL, 10);
	CHECK(k10 && a10 && k10->ext == 2 && a10->ext == 2);
	CHECK(find(MC_KERNEL, NULL, 11)->ext == 3 && find(MC_RUNTIME, NULL, 11)->ext == 3);
	CHECK(find(MC_KERNEL, NULL, 12)->ext == 0 && find(MC_RUNTIME, NULL, 12)->ext == 0);
	CHECK(find(MC_KERNEL, NULL, 20)->ext == 5 && find(MC_RUNTIME, NULL, 20)->ext == 5);

	/* an allocation: an instant on its thread, a counter of its device */
	const struct seen *al = NULL, *ct = NULL;
	for (int i = 0; i < nev; i++)
		if (ev[i].cat == MC_TORCH_MEM)
			*(ev[i].type == ME_INSTANT ? &al : &ct) = &ev[i];
	CHECK(al && ct && ct->type == ME_COUNTER && al->tid == 100 && al->ts == 1050);
	CHECK(al->mem.ptr == 0x7f00 && al->mem.bytes == 512 && al->mem.device == 0);
	CHECK(al->mem.allocated == 4608 && al->mem.reserved == 1 << 20 && al->mem.op == 2);
	CHECK(ct->mem.allocated == 4608 && ct->tid == 0);

	/* scopes' GPU work: my_scope's calls came before it (kernels 10, 11,
	 * 12: 1300 to 2800), handoff's after it (kernel 20) */
	const struct seen *g1 = find(MC_GPU_ANNOTATION, "my_scope", 0);
	CHECK(g1 && g1->torch_part && g1->tid == 7 && g1->ts == 1300 && g1->end == 2800);
	CHECK(g1->corr == 3);
	const struct seen *g2 = find(MC_GPU_ANNOTATION, "handoff", 0);
	CHECK(g2 && g2->torch_part && g2->ts == 3800 && g2->end == 3900 && g2->corr == 1);
	CHECK(!find(MC_GPU_ANNOTATION, "aten::mm", 0)); /* operators are not projected */
	printf("tool_test_torch: ok (%d events)\n", nev);
	return 0;
}
