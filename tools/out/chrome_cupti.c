/* GPU activity (CUPTI kinds) as Chrome trace events, as Kineto writes them
 * so that Perfetto and Holistic Trace Analysis read them alike:
 *   - a process per (rank, GPU), a track per CUDA stream ("stream S", tid
 *     S), kernels (cat kernel, demangled names), copies (gpu_memcpy),
 *     memsets (gpu_memset) and syncs (cuda_sync) on them;
 *   - CUDA API calls (cuda_runtime / cuda_driver) on the calling thread's
 *     track of the rank's CPU process;
 *   - an ac2g flow from each launch or copy call to the GPU work it made;
 *   - a "GPU memory used" counter per GPU from allocations and frees.
 * The file holds GPU records grouped by stream and API records in call
 * order, so a GPU record can come before or after its call: both sides
 * wait in bounded tables (memory stays flat in the length of the trace;
 * a call and its GPU work more than 64K calls apart lose their arrow). */
#include "out/chrome_gpu.h"
#include "read/nccl_names.h"

static struct cstate *state(struct chrome *c)
{
	struct cstate *s = c->cupti;
	if (s)
		return s;
	s = calloc(1, sizeof *s);
	if (!s)
		exit(1);
	s->f = gpu_fields();
	s->api = calloc(API_SLOTS, sizeof *s->api);
	s->pend = calloc(PEND_SLOTS, sizeof *s->pend);
	s->shapes = calloc(SHAPE_SLOTS, sizeof *s->shapes);
	s->heads = calloc(HEAD_SLOTS, sizeof *s->heads);
	if (!s->api || !s->pend || !s->shapes || !s->heads)
		exit(1);
	c->cupti = s;
	return s;
}

void chrome_cupti_file_end(struct chrome *c)
{
	struct cstate *s = c->cupti;
	if (!s)
		return;
	for (unsigned d = 0; d < MAXDEV; d++)
		free(s->dev_name[d]);
	for (size_t i = 0; i < SHAPE_SLOTS; i++)
		free(s->shapes[i].head), free(s->shapes[i].tail);
	for (size_t i = 0; i < HEAD_SLOTS; i++)
		free(s->heads[i].text), free(s->heads[i].mid);
	strcache_free(&s->dm);
	free(s->tracks), free(s->api), free(s->pend), free(s->shapes);
	free(s->heads);
	free(s);
	c->cupti = NULL;
}

/* ---- names */

static const char *kernel_name(struct chrome *c, struct cstate *s, const struct ct_event *ev,
                               unsigned i, uint32_t *len)
{
	(void)c;
	return strcache_get(&s->dm, ev->v[i], ev->s[i], ev->sl[i], gpu_demangle, len);
}

static char *take(struct out *m, uint32_t *len)
{
	*len = (uint32_t)m->len;
	char *p = m->buf; /* the in-memory out's buffer becomes ours */
	m->buf = NULL;
	return p;
}

static void kernel_shape(struct chrome *c, struct cstate *s, const struct ct_event *ev,
                         struct shape *sh)
{
	const struct gpu_fields *f = s->f;
	uint64_t dev = ev->v[f->k.dev], stream = ev->v[f->k.stream];
	int64_t tid = gpu_stream_tid(stream);
	uint32_t nl;
	const char *name = kernel_name(c, s, ev, f->k.name, &nl);
	struct out m;
	out_init_mem(&m);
	out_lit(&m, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"");
	out_mem(&m, name, nl);
	sh->pt_len = gpu_fmt_pt(sh->pt, gpu_pid(c, dev), tid);
	out_lit(&m, "\",");
	out_mem(&m, sh->pt, sh->pt_len);
	sh->head = take(&m, &sh->head_len);
	out_init_mem(&m);
	out_lit(&m, ",\"device\":");
	out_u64(&m, dev);
	out_lit(&m, ",\"context\":");
	out_u64(&m, ev->v[f->k.ctx]);
	out_lit(&m, ",\"stream\":");
	out_u64(&m, stream);
	/* NCCL's kernels are communication, whatever their grid says. */
	if (nccl_kernel_is_comm(name, nl))
		out_lit(&m, ",\"communication\":true");
	out_lit(&m, ",\"registers per thread\":");
	out_u64(&m, ev->v[f->k.regs]);
	out_lit(&m, ",\"shared memory\":");
	out_u64(&m, ev->v[f->k.ssmem] + ev->v[f->k.dsmem]);
	uint64_t g[3], b[3];
	for (int i = 0; i < 3; i++)
		g[i] = ev->v[f->k.grid[i]], b[i] = ev->v[f->k.block[i]];
	unsigned d = dev < MAXDEV ? (unsigned)dev : MAXDEV - 1;
	if (s->dev_sms[d]) {
		/* Kineto's estimates: how much work each SM gets */
		uint64_t blocks = g[0] * g[1] * g[2], threads = b[0] * b[1] * b[2];
		uint64_t warp = s->dev_warp[d] ? s->dev_warp[d] : 32;
		uint64_t bpsm = blocks * 1000 / s->dev_sms[d];
		out_lit(&m, ",\"blocks per SM\":");
		out_us(&m, (int64_t)bpsm);
		out_lit(&m, ",\"warps per SM\":");
		out_us(&m, (int64_t)(bpsm * ((threads + warp - 1) / warp)));
	}
	out_lit(&m, ",\"grid\":[");
	out_u64(&m, g[0]), out_ch(&m, ','), out_u64(&m, g[1]), out_ch(&m, ','), out_u64(&m, g[2]);
	out_lit(&m, "],\"block\":[");
	out_u64(&m, b[0]), out_ch(&m, ','), out_u64(&m, b[1]), out_ch(&m, ','), out_u64(&m, b[2]);
	out_ch(&m, ']');
	if (ev->v[f->k.graph]) {
		out_lit(&m, ",\"graph id\":");
		out_u64(&m, ev->v[f->k.graph]);
	}
	sh->tail = take(&m, &sh->tail_len);
}

/* A slice's cached head ({"ph":"X",... through pid and tid}), then its
 * start as written and its duration. */
static char *put_slice(char *p, const char *head, uint32_t hl, const char *tt, uint32_t tsl,
                       uint64_t dur)
{
	memcpy(p, head, hl);
	p += hl;
	PUT_LIT(p, ",\"ts\":");
	memcpy(p, tt, tsl);
	p += tsl;
	PUT_LIT(p, ",\"dur\":");
	return put_us(p, (int64_t)dur);
}

static void kernel(struct chrome *c, struct cstate *s, const struct ct_event *ev)
{
	const struct gpu_fields *f = s->f;
	if (!c->mine) {
		/* Another worker writes it: keep only the state (its track
		 * named, its call waiting for it). */
		uint64_t dev = ev->v[f->k.dev];
		int64_t tid = gpu_stream_tid(ev->v[f->k.stream]);
		gpu_name_track(c, s, dev, tid);
		gpu_flow(c, s, ev->v[f->k.corr], NULL, 0, NULL, 0, gpu_pid(c, dev), tid,
		         ev->v[f->k.ts]);
		return;
	}
	uint64_t key[14] = {ev->v[f->k.name],     ev->v[f->k.dev],      ev->v[f->k.ctx],
	                    ev->v[f->k.stream],   ev->v[f->k.grid[0]],  ev->v[f->k.grid[1]],
	                    ev->v[f->k.grid[2]],  ev->v[f->k.block[0]], ev->v[f->k.block[1]],
	                    ev->v[f->k.block[2]], ev->v[f->k.regs],     ev->v[f->k.ssmem],
	                    ev->v[f->k.dsmem],    ev->v[f->k.graph]};
	/* a few fields pick the slot (the whole key is compared) */
	uint64_t h = mix(key[0] * 0x9e3779b97f4a7c15ull ^ key[3] * 0xc2b2ae3d27d4eb4full ^
	                 key[4] * 0x165667b19e3779f9ull ^ key[7] ^ key[10] << 20 ^ key[1] << 40);
	struct shape tmp, *sh = &s->shapes[h & (SHAPE_SLOTS - 1)];
	int cacheable = key[0] >= CT_SID_FIRST;
	if (!cacheable) /* (zeroed only here: this runs for every kernel) */
		memset(&tmp, 0, sizeof tmp), sh = &tmp;
	if (!sh->head || memcmp(sh->key, key, sizeof key)) {
		free(sh->head), free(sh->tail);
		memcpy(sh->key, key, sizeof key);
		kernel_shape(c, s, ev, sh);
		gpu_name_track(c, s, key[1], gpu_stream_tid(key[3]));
	}
	uint64_t ts = ev->v[f->k.ts], end = ev->v[f->k.end];
	struct out *o = c->o;
	char tt[28];
	uint32_t tsl = 0;
	int written = chrome_sep(c);
	if (written) {
		tsl = gpu_fmt_ts(c, tt, ts);
		char *p = BEGIN(o, sh->head_len + sh->tail_len + 64 + 4 * NUM_MAX);
		p = put_slice(p, sh->head, sh->head_len, tt, tsl, end > ts ? end - ts : 0);
		PUT_LIT(p, ",\"args\":{\"correlation\":");
		p = out_put_u64(p, ev->v[f->k.corr]);
		memcpy(p, sh->tail, sh->tail_len);
		p += sh->tail_len;
		if (key[13]) {
			PUT_LIT(p, ",\"graph node\":");
			p = out_put_u64(p, ev->v[f->k.node]);
		}
		PUT_LIT(p, "}}");
		END(o, p);
	}
	gpu_flow(c, s, ev->v[f->k.corr], written ? sh->pt : NULL, sh->pt_len, written ? tt : NULL,
	         tsl, gpu_pid(c, key[1]), gpu_stream_tid(key[3]), ts);
	if (!cacheable)
		free(tmp.head), free(tmp.tail);
}

/* Copies and memsets share their layout: common args, then extras. */
static int transfer_head(struct chrome *c, struct cstate *s, const char *cat, uint64_t dev,
                         uint64_t stream)
{
	struct out *o = c->o;
	gpu_name_track(c, s, dev, gpu_stream_tid(stream));
	if (!chrome_sep(c))
		return 0;
	out_lit(o, "{\"ph\":\"X\",\"cat\":\"");
	out_str(o, cat);
	out_lit(o, "\",\"name\":\"");
	return 1;
}

static void transfer_tail(struct chrome *c, uint64_t dev, uint64_t ctx, uint64_t stream,
                          uint64_t corr, uint64_t bytes, uint64_t ts, uint64_t end)
{
	struct out *o = c->o;
	out_ch(o, '"');
	chrome_pid_tid(c, gpu_pid(c, dev), gpu_stream_tid(stream));
	chrome_ts(c, ts);
	out_lit(o, ",\"dur\":");
	uint64_t dur = end > ts ? end - ts : 0;
	out_us(o, (int64_t)dur);
	out_lit(o, ",\"args\":{\"device\":");
	out_u64(o, dev);
	out_lit(o, ",\"context\":");
	out_u64(o, ctx);
	out_lit(o, ",\"stream\":");
	out_u64(o, stream);
	out_lit(o, ",\"correlation\":");
	out_u64(o, corr);
	out_lit(o, ",\"bytes\":");
	out_u64(o, bytes);
	out_lit(o, ",\"memory bandwidth (GB/s)\":");
	/* bytes per ns are GB/s; three decimals */
	out_us(o, dur ? (int64_t)((double)bytes * 1000.0 / (double)dur) : 0);
}

static void memcpy_ev(struct chrome *c, struct cstate *s, const struct ct_event *ev)
{
	const struct gpu_fields *f = s->f;
	const uint64_t *v = ev->v;
	uint64_t dev = v[f->m.dev], stream = v[f->m.stream], ts = v[f->m.ts], end = v[f->m.end];
	struct out *o = c->o;
	if (!transfer_head(c, s, "gpu_memcpy", dev, stream))
		goto flow;
	out_lit(o, "Memcpy ");
	out_str(o, gpu_copy_kind(v[f->m.kind]));
	out_lit(o, " (");
	out_str(o, gpu_memory_kind(v[f->m.src_kind]));
	out_lit(o, " -> ");
	out_str(o, gpu_memory_kind(v[f->m.dst_kind]));
	out_ch(o, ')');
	transfer_tail(c, dev, v[f->m.ctx], stream, v[f->m.corr], v[f->m.bytes], ts, end);
	out_lit(o, ",\"kind\":\"");
	out_str(o, gpu_copy_kind(v[f->m.kind]));
	out_ch(o, '"');
	if (v[f->m.src_dev] != dev || v[f->m.dst_dev] != dev) {
		out_lit(o, ",\"src device\":");
		out_u64(o, v[f->m.src_dev]);
		out_lit(o, ",\"dst device\":");
		out_u64(o, v[f->m.dst_dev]);
	}
	out_lit(o, "}}");
flow:
	gpu_flow_num(c, s, v[f->m.corr], gpu_pid(c, dev), gpu_stream_tid(stream), ts);
}

static void memset_ev(struct chrome *c, struct cstate *s, const struct ct_event *ev)
{
	const struct gpu_fields *f = s->f;
	const uint64_t *v = ev->v;
	uint64_t dev = v[f->s.dev], stream = v[f->s.stream], ts = v[f->s.ts], end = v[f->s.end];
	struct out *o = c->o;
	if (!transfer_head(c, s, "gpu_memset", dev, stream))
		goto flow;
	out_lit(o, "Memset (");
	out_str(o, gpu_memory_kind(v[f->s.mem_kind]));
	out_ch(o, ')');
	transfer_tail(c, dev, v[f->s.ctx], stream, v[f->s.corr], v[f->s.bytes], ts, end);
	out_lit(o, ",\"value\":");
	out_u64(o, v[f->s.value]);
	out_lit(o, "}}");
flow:
	gpu_flow_num(c, s, v[f->s.corr], gpu_pid(c, dev), gpu_stream_tid(stream), ts);
}

static uint64_t device_of_context(struct cstate *s, uint64_t ctx)
{
	for (unsigned i = 0; i < s->nctx; i++)
		if (s->ctxmap[i].ctx == ctx)
			return s->ctxmap[i].dev;
	return 0;
}

static void sync_ev(struct chrome *c, struct cstate *s, const struct ct_event *ev)
{
	const struct gpu_fields *f = s->f;
	const uint64_t *v = ev->v;
	uint64_t ctx = v[f->y.ctx], stream = v[f->y.stream], ts = v[f->y.ts], end = v[f->y.end];
	uint64_t dev = device_of_context(s, ctx);
	/* A sync spans the host's wait, which overlaps the stream's kernels:
	 * it gets a track of its own next to the stream's, so that both stay
	 * properly nested (Kineto puts it on the stream's track itself). */
	int64_t tid = gpu_stream_tid(stream);
	if (tid != GPU_TID_NONE && tid < GPU_TID_SYNC)
		tid += GPU_TID_SYNC;
	gpu_name_track(c, s, dev, tid);
	struct out *o = c->o;
	if (!chrome_sep(c))
		goto flow;
	out_lit(o, "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"");
	out_str(o, gpu_sync_name(v[f->y.type]));
	out_ch(o, '"');
	chrome_pid_tid(c, gpu_pid(c, dev), tid);
	chrome_ts(c, ts);
	out_lit(o, ",\"dur\":");
	out_us(o, end > ts ? (int64_t)(end - ts) : 0);
	out_lit(o, ",\"args\":{\"device\":");
	out_u64(o, dev);
	out_lit(o, ",\"context\":");
	out_u64(o, ctx);
	if (stream < 0xffffffffull) {
		out_lit(o, ",\"stream\":");
		out_u64(o, stream);
	}
	out_lit(o, ",\"correlation\":");
	out_u64(o, v[f->y.corr]);
	if (v[f->y.event] < 0xffffffffull) {
		out_lit(o, ",\"cuda event\":");
		out_u64(o, v[f->y.event]);
	}
	out_lit(o, "}}");
flow:
	gpu_flow_num(c, s, v[f->y.corr], gpu_pid(c, dev), tid, ts);
}

/* A call's constant part (category, name, track, cbid), formatted once. */
static void api_head(struct chrome *c, struct cstate *s, const struct ct_event *ev,
                     struct api_head *h)
{
	const struct gpu_fields *f = s->f;
	const uint64_t *v = ev->v;
	struct out m;
	out_init_mem(&m);
	out_lit(&m, "{\"ph\":\"X\",\"cat\":\"");
	out_str(&m, v[f->a.api] == 1 ? "cuda_driver" : "cuda_runtime");
	out_lit(&m, "\",\"name\":\"");
	uint32_t n;
	const char *e = tfile_esc(c->t, v[f->a.name], ev->s[f->a.name], ev->sl[f->a.name], &n);
	out_mem(&m, e, n);
	h->pt_len = gpu_fmt_pt(h->pt, c->t->pid, (int64_t)v[f->a.tid]);
	out_lit(&m, "\",");
	out_mem(&m, h->pt, h->pt_len);
	h->text = take(&m, &h->len);
	out_init_mem(&m);
	out_lit(&m, ",\"args\":{\"cbid\":");
	out_u64(&m, v[f->a.cbid]);
	out_lit(&m, ",\"correlation\":");
	h->mid = take(&m, &h->mid_len);
}

static void api_ev(struct chrome *c, struct cstate *s, const struct ct_event *ev)
{
	const struct gpu_fields *f = s->f;
	const uint64_t *v = ev->v;
	uint64_t ts = v[f->a.ts], end = v[f->a.end];
	if (!c->mine) { /* another worker writes it */
		gpu_api_seen(c, s, v[f->a.corr], c->t->pid, (int64_t)v[f->a.tid], ts, NULL, 0, NULL, 0);
		return;
	}
	uint64_t key[4] = {v[f->a.name], v[f->a.tid], v[f->a.cbid], v[f->a.api]};
	struct api_head tmp;
	struct api_head *h =
	    &s->heads[mix(key[0] ^ mix(key[1] ^ mix(key[2] ^ key[3]))) & (HEAD_SLOTS - 1)];
	int cacheable = key[0] >= CT_SID_FIRST;
	if (!cacheable)
		memset(&tmp, 0, sizeof tmp), h = &tmp;
	if (!h->text || memcmp(h->key, key, sizeof key)) {
		free(h->text), free(h->mid);
		memcpy(h->key, key, sizeof key);
		api_head(c, s, ev, h);
	}
	struct out *o = c->o;
	char tt[28];
	uint32_t tsl = 0;
	int written = chrome_sep(c);
	if (written) {
		tsl = gpu_fmt_ts(c, tt, ts);
		char *p = BEGIN(o, h->len + h->mid_len + 64 + 4 * NUM_MAX);
		p = put_slice(p, h->text, h->len, tt, tsl, end > ts ? end - ts : 0);
		memcpy(p, h->mid, h->mid_len);
		p += h->mid_len;
		p = out_put_u64(p, v[f->a.corr]);
		if (v[f->a.status]) {
			PUT_LIT(p, ",\"return\":");
			p = out_put_u64(p, v[f->a.status]);
		}
		PUT_LIT(p, "}}");
		END(o, p);
	}
	gpu_api_seen(c, s, v[f->a.corr], c->t->pid, (int64_t)v[f->a.tid], ts,
	             written ? h->pt : NULL, h->pt_len, tt, tsl);
	if (!cacheable)
		free(tmp.text), free(tmp.mid);
}

static void memory_ev(struct chrome *c, struct cstate *s, const struct ct_event *ev)
{
	const struct gpu_fields *f = s->f;
	const uint64_t *v = ev->v;
	if (!gpu_memory_on_device(v[f->mem.mem_kind]))
		return;
	uint64_t dev = v[f->mem.dev];
	unsigned d = dev < MAXDEV ? (unsigned)dev : MAXDEV - 1;
	if (v[f->mem.op] == 1)
		s->mem[d] += (int64_t)v[f->mem.bytes];
	else if (v[f->mem.op] == 2)
		s->mem[d] -= (int64_t)v[f->mem.bytes];
	else
		return;
	if (s->mem[d] < 0)
		s->mem[d] = 0; /* freed what was allocated before tracing began */
	gpu_name_process(c, s, dev);
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"C\",\"name\":\"GPU memory used\",\"pid\":");
	out_u64(o, gpu_pid(c, dev));
	chrome_ts(c, v[f->mem.ts]);
	out_lit(o, ",\"args\":{\"bytes\":");
	out_i64(o, s->mem[d]);
	out_lit(o, "}}");
}

static void device_ev(struct chrome *c, struct cstate *s, const struct ct_event *ev)
{
	const struct gpu_fields *f = s->f;
	uint64_t dev = ev->v[f->d.dev];
	unsigned d = dev < MAXDEV ? (unsigned)dev : MAXDEV - 1;
	free(s->dev_name[d]);
	s->dev_name[d] = strndup(ev->s[f->d.name], ev->sl[f->d.name]);
	s->dev_sms[d] = ev->v[f->d.sms];
	s->dev_warp[d] = ev->v[f->d.warp];
	gpu_name_process(c, s, dev);
}

void chrome_cupti_event(struct chrome *c, const struct ct_event *ev)
{
	struct cstate *s = state(c);
	switch (ev->kind) {
	case CT_EV_KERNEL:
		kernel(c, s, ev);
		break;
	case CT_EV_MEMCPY:
		memcpy_ev(c, s, ev);
		break;
	case CT_EV_MEMSET:
		memset_ev(c, s, ev);
		break;
	case CT_EV_SYNC:
		sync_ev(c, s, ev);
		break;
	case CT_EV_CUDA_API:
		api_ev(c, s, ev);
		break;
	case CT_EV_GPU_MEMORY:
		memory_ev(c, s, ev);
		break;
	case CT_EV_GPU_DEVICE:
		device_ev(c, s, ev);
		break;
	case CT_EV_GPU_CONTEXT:
		if (s->nctx < sizeof s->ctxmap / sizeof *s->ctxmap) {
			s->ctxmap[s->nctx].ctx = ev->v[s->f->c.ctx];
			s->ctxmap[s->nctx++].dev = ev->v[s->f->c.dev];
		}
		break;
	default:
		break;
	}
}

/* The track a kernel of (device, stream) is drawn on: NCCL's flows from an
 * operation to its kernel end there. */
int chrome_cupti_stream_track(struct chrome *c, uint64_t device, uint64_t context, uint64_t stream,
			      uint64_t *pid, int64_t *tid)
{
	(void)context;
	int64_t t = gpu_stream_tid(stream);
	if (t == GPU_TID_NONE)
		return 0;
	*pid = gpu_pid(c, device);
	*tid = t;
	return 1;
}
