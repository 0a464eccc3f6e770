// SPDX-License-Identifier: MIT
/* CUDA calls and GPU activity of the model as Chrome trace events, as
 * Kineto writes them so that Perfetto and Holistic Trace Analysis read
 * them alike: kernels (cat kernel, demangled names), copies (gpu_memcpy),
 * memsets (gpu_memset) and syncs (cuda_sync) on their stream's track in
 * the process of their GPU; calls (cuda_runtime / cuda_driver) on the
 * calling thread's track; a "GPU memory used" counter per GPU. The
 * constant parts of kernels and calls are formatted once and reused:
 * this loop writes hundreds of MB of JSON per second. */
#include "write/chrome/chrome_int.h"
#include "read/gpu_fields.h"
#include "util/hmap.h"
#include "util/xalloc.h"

#include <stdlib.h>

#define SHAPE_SLOTS 4096
#define HEAD_SLOTS  1024

/* A kernel's constant part, formatted once. */
struct shape {
	uint64_t key[15];
	char *head, *tail;
	uint32_t head_len, tail_len;
};

/* A call's constant part, formatted once per (name, thread, cbid, api). */
struct api_head {
	uint64_t key[4];
	char *text, *mid;
	uint32_t len, mid_len;
};

static struct cfile *caches(struct chrome *c)
{
	struct cfile *cf = c->cf;
	if (!cf->shapes) {
		cf->shapes = xcalloc(SHAPE_SLOTS, sizeof *cf->shapes);
		cf->heads = xcalloc(HEAD_SLOTS, sizeof *cf->heads);
	}
	return cf;
}

void chrome_cupti_free(struct cfile *cf)
{
	if (cf->shapes)
		for (size_t i = 0; i < SHAPE_SLOTS; i++)
			free(cf->shapes[i].head), free(cf->shapes[i].tail);
	if (cf->heads)
		for (size_t i = 0; i < HEAD_SLOTS; i++)
			free(cf->heads[i].text), free(cf->heads[i].mid);
	free(cf->shapes);
	free(cf->heads);
}

static char *take(struct out *m, uint32_t *len)
{
	*len = (uint32_t)m->len;
	char *p = m->buf; /* the in-memory out's buffer becomes ours */
	m->buf = NULL;
	return p;
}

static void kernel_shape(struct chrome *c, struct cfile *cf, const struct m_event *ev,
                         struct shape *sh)
{
	const struct m_gpu *k = &ev->gpu;
	uint32_t nl, ptl;
	const char *name = strcache_get(&cf->dm, k->name.sid, k->name.s, k->name.len, NULL, &nl);
	const char *pt = chrome_pt(c, ev->track, &ptl);
	struct out m;
	out_init_mem(&m);
	out_lit(&m, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"");
	out_mem(&m, name, nl);
	out_lit(&m, "\",");
	out_mem(&m, pt, ptl);
	sh->head = take(&m, &sh->head_len);
	out_init_mem(&m);
	out_lit(&m, ",\"device\":");
	out_u64(&m, k->device);
	out_lit(&m, ",\"context\":");
	out_u64(&m, k->context);
	out_lit(&m, ",\"stream\":");
	out_u64(&m, k->stream);
	if (k->comm)
		out_lit(&m, ",\"communication\":true");
	out_lit(&m, ",\"registers per thread\":");
	out_u64(&m, k->regs);
	out_lit(&m, ",\"shared memory\":");
	out_u64(&m, k->ssmem + k->dsmem);
	const uint64_t *g = k->grid, *b = k->block;
	if (k->sms) {
		/* Kineto's estimates: how much work each SM gets */
		uint64_t blocks = g[0] * g[1] * g[2], threads = b[0] * b[1] * b[2];
		uint64_t warp = k->warp ? k->warp : 32;
		uint64_t bpsm = blocks * 1000 / k->sms;
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
	if (k->graph) {
		out_lit(&m, ",\"graph id\":");
		out_u64(&m, k->graph);
	}
	sh->tail = take(&m, &sh->tail_len);
}

/* A slice's cached head ({"ph":"X",... through pid and tid}), then its
 * start (as text when given) and duration. */
static inline __attribute__((always_inline)) char *put_slice(struct chrome *c, char *p, const char *head, uint32_t hl, uint64_t ts,
                       uint64_t end, const char *tt, uint32_t tsl)
{
	memcpy(p, head, hl);
	p += hl;
	PUT_LIT(p, ",\"ts\":");
	if (tt) {
		memcpy(p, tt, TS_TEXT);
		p += tsl;
	} else {
		p += chrome_fmt_ts(c, p, ts);
	}
	PUT_LIT(p, ",\"dur\":");
	return put_us(p, end > ts ? (int64_t)(end - ts) : 0);
}

void chrome_kernel(struct chrome *c, const struct m_event *ev)
{
	const struct m_gpu *k = &ev->gpu;
	struct cfile *cf = caches(c);
	uint64_t key[15] = {k->name.sid, k->device,   k->context,  k->stream, k->grid[0],
	                    k->grid[1],  k->grid[2],  k->block[0], k->block[1], k->block[2],
	                    k->regs,     k->ssmem,    k->dsmem,    k->graph,  k->sms};
	/* a few fields pick the slot (the whole key is compared) */
	uint64_t h = hmap_mix(key[0] * 0x9e3779b97f4a7c15ull ^ key[3] * 0xc2b2ae3d27d4eb4full ^
	                 key[4] * 0x165667b19e3779f9ull ^ key[7] ^ key[10] << 20 ^ key[1] << 40);
	struct shape tmp, *sh = &cf->shapes[h & (SHAPE_SLOTS - 1)];
	int cacheable = key[0] >= CT_SID_FIRST;
	if (!cacheable) /* (zeroed only here: this runs for every kernel) */
		memset(&tmp, 0, sizeof tmp), sh = &tmp;
	if (!sh->head || memcmp(sh->key, key, sizeof key)) {
		free(sh->head), free(sh->tail);
		memcpy(sh->key, key, sizeof key);
		kernel_shape(c, cf, ev, sh);
	}
	if (chrome_sep(c)) {
		struct out *o = c->o;
		char *p = BEGIN(o, sh->head_len + sh->tail_len + 96 + 6 * NUM_MAX);
		/* its flow ends at this time: keep it as written */
		cf->gpu_ts = ev->ts;
		cf->gpu_ts_len = (uint8_t)chrome_fmt_ts(c, cf->gpu_ts_text, ev->ts);
		p = put_slice(c, p, sh->head, sh->head_len, ev->ts, ev->end, cf->gpu_ts_text,
		              cf->gpu_ts_len);
		PUT_LIT(p, ",\"args\":{\"correlation\":");
		p = out_put_u64(p, k->corr);
		if (k->ext) { /* the PyTorch operator that launched it */
			PUT_LIT(p, ",\"External id\":");
			p = out_put_u64(p, k->ext);
		}
		memcpy(p, sh->tail, sh->tail_len);
		p += sh->tail_len;
		if (k->graph) {
			PUT_LIT(p, ",\"graph node\":");
			p = out_put_u64(p, k->node);
		}
		PUT_LIT(p, "}}");
		END(o, p);
	}
	if (!cacheable)
		free(tmp.head), free(tmp.tail);
}

/* Copies and memsets share their layout: common args, then extras. */
static void transfer_tail(struct chrome *c, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct out *o = c->o;
	out_ch(o, '"');
	chrome_track_pt(c, ev->track);
	chrome_ts(c, ev->ts);
	out_lit(o, ",\"dur\":");
	uint64_t dur = ev->end > ev->ts ? ev->end - ev->ts : 0;
	out_us(o, (int64_t)dur);
	out_lit(o, ",\"args\":{\"device\":");
	out_u64(o, g->device);
	out_lit(o, ",\"context\":");
	out_u64(o, g->context);
	out_lit(o, ",\"stream\":");
	out_u64(o, g->stream);
	out_lit(o, ",\"correlation\":");
	out_u64(o, g->corr);
	if (g->ext) {
		out_lit(o, ",\"External id\":");
		out_u64(o, g->ext);
	}
	out_lit(o, ",\"bytes\":");
	out_u64(o, g->bytes);
	out_lit(o, ",\"memory bandwidth (GB/s)\":");
	/* bytes per ns are GB/s; three decimals */
	out_us(o, dur ? (int64_t)((double)g->bytes * 1000.0 / (double)dur) : 0);
}

static void copy(struct chrome *c, const struct m_event *ev)
{
	const struct m_gpu *g = &ev->gpu;
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy ");
	out_str(o, gpu_copy_kind(g->kind));
	out_lit(o, " (");
	out_str(o, gpu_memory_kind(g->src_kind));
	out_lit(o, " -> ");
	out_str(o, gpu_memory_kind(g->dst_kind));
	out_ch(o, ')');
	transfer_tail(c, ev);
	out_lit(o, ",\"kind\":\"");
	out_str(o, gpu_copy_kind(g->kind));
	out_ch(o, '"');
	if (g->src_dev != g->device || g->dst_dev != g->device) {
		out_lit(o, ",\"src device\":");
		out_u64(o, g->src_dev);
		out_lit(o, ",\"dst device\":");
		out_u64(o, g->dst_dev);
	}
	out_lit(o, "}}");
}

static void memset_slice(struct chrome *c, const struct m_event *ev)
{
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"X\",\"cat\":\"gpu_memset\",\"name\":\"Memset (");
	out_str(o, gpu_memory_kind(ev->gpu.mem_kind));
	out_ch(o, ')');
	transfer_tail(c, ev);
	out_lit(o, ",\"value\":");
	out_u64(o, ev->gpu.value);
	out_lit(o, "}}");
}

static void sync_slice(struct chrome *c, const struct m_event *ev)
{
	const struct m_gpu *y = &ev->gpu;
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"");
	out_str(o, gpu_sync_name(y->sync_type));
	out_ch(o, '"');
	chrome_track_pt(c, ev->track);
	chrome_ts(c, ev->ts);
	out_lit(o, ",\"dur\":");
	out_us(o, ev->end > ev->ts ? (int64_t)(ev->end - ev->ts) : 0);
	out_lit(o, ",\"args\":{\"device\":");
	out_u64(o, y->device);
	out_lit(o, ",\"context\":");
	out_u64(o, y->context);
	if (y->stream < 0xffffffffull) {
		out_lit(o, ",\"stream\":");
		out_u64(o, y->stream);
	}
	out_lit(o, ",\"correlation\":");
	out_u64(o, y->corr);
	if (y->ext) {
		out_lit(o, ",\"External id\":");
		out_u64(o, y->ext);
	}
	if (y->event < 0xffffffffull) {
		out_lit(o, ",\"cuda event\":");
		out_u64(o, y->event);
	}
	if (gpu_sync_on_event(y->sync_type)) {
		/* Kineto's names (HTA's critical path joins the wait to the
		 * cudaEventRecord call and the stream it recorded on); -1 when
		 * the record was not seen */
		out_lit(o, ",\"wait_on_stream\":");
		out_i64(o, y->wait_stream);
		out_lit(o, ",\"wait_on_cuda_event_record_corr_id\":");
		out_i64(o, y->wait_corr);
		out_lit(o, ",\"wait_on_cuda_event_id\":");
		out_i64(o, y->event < 0xffffffffull ? (int64_t)y->event : -1);
	}
	out_lit(o, "}}");
}

void chrome_gpu_slice(struct chrome *c, const struct m_event *ev)
{
	switch (ev->cat) {
	case MC_MEMCPY:
		copy(c, ev);
		break;
	case MC_MEMSET:
		memset_slice(c, ev);
		break;
	default:
		sync_slice(c, ev);
		break;
	}
}

/* A call's constant part (category, name, track, cbid), formatted once. */
static void api_head(struct chrome *c, const struct m_event *ev, struct api_head *h)
{
	const struct m_api *a = &ev->api;
	struct out m;
	out_init_mem(&m);
	out_lit(&m, "{\"ph\":\"X\",\"cat\":\"");
	out_str(&m, ev->cat == MC_DRIVER ? "cuda_driver" : "cuda_runtime");
	out_lit(&m, "\",\"name\":\"");
	uint32_t n, ptl;
	const char *e = tfile_esc(c->t, a->name.sid, a->name.s, a->name.len, &n);
	out_mem(&m, e, n);
	out_lit(&m, "\",");
	const char *pt = chrome_pt(c, ev->track, &ptl);
	out_mem(&m, pt, ptl);
	h->text = take(&m, &h->len);
	out_init_mem(&m);
	out_lit(&m, ",\"args\":{\"cbid\":");
	out_u64(&m, a->cbid);
	out_lit(&m, ",\"correlation\":");
	h->mid = take(&m, &h->mid_len);
}

void chrome_api(struct chrome *c, const struct m_event *ev)
{
	const struct m_api *a = &ev->api;
	struct cfile *cf = caches(c);
	uint64_t key[4] = {a->name.sid, ev->track->id, a->cbid, ev->cat};
	struct api_head tmp;
	struct api_head *h =
	    &cf->heads[hmap_mix(key[0] ^ hmap_mix(key[1] ^ hmap_mix(key[2] ^ key[3]))) & (HEAD_SLOTS - 1)];
	int cacheable = key[0] >= CT_SID_FIRST;
	if (!cacheable)
		memset(&tmp, 0, sizeof tmp), h = &tmp;
	if (!h->text || memcmp(h->key, key, sizeof key)) {
		free(h->text), free(h->mid);
		memcpy(h->key, key, sizeof key);
		api_head(c, ev, h);
	}
	if (chrome_sep(c)) {
		struct out *o = c->o;
		char *p = BEGIN(o, h->len + h->mid_len + 96 + 6 * NUM_MAX);
		p = put_slice(c, p, h->text, h->len, ev->ts, ev->end, NULL, 0);
		memcpy(p, h->mid, h->mid_len);
		p += h->mid_len;
		p = out_put_u64(p, a->corr);
		if (a->ext) {
			PUT_LIT(p, ",\"External id\":");
			p = out_put_u64(p, a->ext);
		}
		if (a->status) {
			PUT_LIT(p, ",\"return\":");
			p = out_put_u64(p, a->status);
		}
		PUT_LIT(p, "}}");
		END(o, p);
	}
	if (!cacheable)
		free(tmp.text), free(tmp.mid);
}

void chrome_memory(struct chrome *c, const struct m_event *ev)
{
	struct out *o = c->o;
	if (!chrome_sep(c))
		return;
	out_lit(o, "{\"ph\":\"C\",\"name\":\"GPU memory used\",\"pid\":");
	out_u64(o, chrome_gpu_pid(c, ev->counter.device));
	chrome_ts(c, ev->ts);
	out_lit(o, ",\"args\":{\"bytes\":");
	out_i64(o, ev->counter.value);
	out_lit(o, "}}");
}
