// SPDX-License-Identifier: MIT
/* The model's events as rows of Nsight Systems' export tables (and of our
 * own CUPTRACE_* tables where nsys has none): a consumer that formats
 * only. Times are ns on the job's timeline (event ts + the file's offset,
 * as the Chrome output's base); globalPid = file index << 48 | pid << 24
 * and globalTid = globalPid | tid, which nsys's own decoding
 * (globalTid / 0x1000000 % 0x1000000 = pid, globalTid % 0x1000000 = tid)
 * reads back. docs/SQLITE.md lists every table and column. */
#include "write/sqlite/sqlite.h"
#include "write/sqlite/sqlite_int.h"
#include "write/convert_ranks.h"
#include "util/mpirt.h"
#include "model/piece.h"
#include "util/progress.h"
#include "util/tmp_guard.h"
#include "util/xalloc.h"
#include "util/say.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---- the consumer */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static void thread_row(struct sq *q, const struct m_track *tr)
{
	if (!tr->name_len || hmap_get(&q->threads, (uint64_t)tr->tid + 1))
		return;
	hmap_put(&q->threads, (uint64_t)tr->tid + 1, (void *)1);
	struct sdb_row s = sdb_ins(q->db, T_THREADNAMES);
	SB_I(s, 1, sdb_string(q->db, tr->name, tr->name_len));
	SB_NULL(s, 2);
	SB_I(s, 3, gtid(q, tr->tid));
	sdb_row(q->db, T_THREADNAMES);
}

static void on_event(void *ctx, const struct m_event *ev)
{
	struct sq *q = ctx;
	if (!(++q->events & 0xffff))
		progress("exporting", (unsigned long long)q->events, 0);
	if (ev->type == ME_SLICE || ev->type == ME_ASYNC || ev->type == ME_INSTANT ||
	    ev->type == ME_COUNTER)
		sq_span(q, at(q, ev->ts), at(q, ev->end > ev->ts ? ev->end : ev->ts));
	switch (ev->type) {
	case ME_PROCESS:
		if (ev->process.name) {
			struct gpu_info *g = sq_gpu_of(q, ev->process.device);
			if (g && !g->name)
				g->name = xstrdup(ev->process.name);
		}
		return;
	case ME_TRACK:
		if (ev->track->kind == MT_THREAD)
			thread_row(q, ev->track);
		return;
	case ME_FLOW:
		return; /* the correlationId joins */
	case ME_COUNTER:
		if (ev->cat == MC_GPU_MEMORY)
			sq_memory(q, ev);
		return;
	default:
		break;
	}
	switch (ev->cat) {
	case MC_NVTX:
	case MC_MARK:
		sq_nvtx(q, ev);
		break;
	case MC_STEP:
		sq_step(q, ev);
		break;
	case MC_KERNEL:
		sq_kernel(q, ev);
		break;
	case MC_MEMCPY:
		sq_memcpy(q, ev);
		break;
	case MC_MEMSET:
		sq_memset(q, ev);
		break;
	case MC_SYNC:
		sq_sync(q, ev);
		break;
	case MC_RUNTIME:
	case MC_DRIVER:
		sq_api(q, ev);
		if (ev->api.ext && ev->api.corr)
			sq_torch_corr(q, ev->api.corr, ev->api.ext);
		break;
	case MC_TORCH_OP:
	case MC_TORCH_SCOPE:
		sq_torch_op(q, ev);
		break;
	case MC_TORCH_MEM:
		if (ev->type == ME_INSTANT)
			sq_torch_mem(q, ev);
		break;
	case MC_NCCL:
		if (ev->nccl.op)
			sq_nccl(q, ev);
		break;
	case MC_HANG:
		sq_hang(q, ev);
		break;
	case MC_MPI:
		if (ev->type == ME_SLICE)
			sq_mpi(q, ev);
		break;
	case MC_DROPS:
		q->dropped += ev->dropped;
		break;
	default:
		break;
	}
}

static void begin_file(void *ctx, struct tfile *t)
{
	struct sq *q = ctx;
	q->t = t;
	q->off = t->off_ns;
	q->gpid = (int64_t)((uint64_t)(tfile_place(t) & 0x7fff) << 48 | (t->f.h.pid & 0xffffff) << 24);
	if (!q->nfiles)
		q->vid = q->gpid & ~(int64_t)0xffffffffffff; /* nsys's globalVid: no pid, no tid */
	q->cbase = (int64_t)(q->nfiles++ & 0x7fffffff) << 32;
	/* the capture starts when the tracer did */
	sq_span(q, at(q, t->f.h.mono_anchor), at(q, t->f.h.mono_anchor));
}

/* A (name, value) row of META_DATA_CAPTURE or META_DATA_EXPORT. */
static void meta_row(struct sq *q, enum sdb_table t, const char *name, const char *v, size_t n)
{
	struct sdb_row s = sdb_ins(q->db, t);
	SB_T(s, 1, name, strlen(name));
	SB_T(s, 2, v, n);
	sdb_row(q->db, t);
}

/* The file's rows of nsys's session tables: its command line as
 * META_DATA_CAPTURE's PROCESS_<n>:COMMAND and PROCESS_<n>:ARGUMENT_<k> (n:
 * the file's place in the database; the arguments are NUL-separated), its
 * host in TARGET_INFO_SYSTEM_ENV, its input in META_DATA_EXPORT, the
 * streams its GPU work ran on, and the end of its capture. */
static void session_rows(struct sq *q, const struct tfile *t)
{
	const struct ct_header *h = &t->f.h;
	unsigned n = q->nfiles - 1;
	char name[64];
	const char *cmd = h->cmdline ? h->cmdline : "";
	size_t len = h->cmdline ? h->cmdline_len : 0;
	long k = -1;
	for (size_t a = 0; a < len; k++) {
		size_t e = a;
		while (e < len && cmd[e])
			e++;
		if (k < 0)
			snprintf(name, sizeof name, "PROCESS_%u:COMMAND", n);
		else
			snprintf(name, sizeof name, "PROCESS_%u:ARGUMENT_%ld", n, k);
		meta_row(q, T_META_CAPTURE, name, cmd + a, e - a);
		a = e + 1;
	}
	meta_row(q, T_META_EXPORT, "EXPORT_PARAM_INPUT_FILE", t->f.path, strlen(t->f.path));
	if (h->host && h->host[0]) {
		struct sdb_row s = sdb_ins(q->db, T_SYSTEM_ENV);
		SB_I(s, 1, q->gpid & ~(int64_t)0xffffffffffff);
		SB_NULL(s, 2);
		SB_T(s, 3, "Hostname", 8);
		SB_NULL(s, 4);
		SB_T(s, 5, h->host, strlen(h->host));
		sdb_row(q->db, T_SYSTEM_ENV);
	}
	/* streams in (context, stream) order; hwId and vmId are the top bits
	 * of globalPid, as nsys's GlobalId has them (hw << 56 | vm << 48) */
	uint64_t *keys = xcalloc(q->streams.n + 1, sizeof *keys);
	size_t nk = 0;
	for (size_t i = 0; i < q->streams.cap; i++)
		if (q->streams.keys[i])
			keys[nk++] = q->streams.keys[i] - 1;
	qsort(keys, nk, sizeof *keys, cmp_u64);
	uint64_t top = (uint64_t)q->gpid >> 48;
	for (size_t i = 0; i < nk; i++) {
		struct sdb_row s = sdb_ins(q->db, T_STREAM);
		SB_I(s, 1, keys[i] & 0xffffffffu);
		SB_I(s, 2, top >> 8);
		SB_I(s, 3, top & 0xff);
		SB_I(s, 4, h->pid);
		SB_I(s, 5, keys[i] >> 32);
		SB_NULL(s, 6);
		SB_NULL(s, 7);
		sdb_row(q->db, T_STREAM);
	}
	free(keys);
	if (t->f.have_footer && t->f.mono_end > h->mono_anchor)
		sq_span(q, at(q, t->f.mono_end), at(q, t->f.mono_end));
}

/* A device's TARGET_INFO_GPU row, unless one with its id and model is in
 * the database already (the ranks of a node, or of a cluster of one GPU
 * model): nsys joins it on deviceId alone, one row per device id. */
static int gpu_row_new(struct sq *q, const struct gpu_info *g)
{
	for (unsigned i = 0; i < q->nwritten; i++) {
		const struct gpu_info *w = &q->written[i];
		if (w->dev == g->dev && w->sms == g->sms && w->warp == g->warp &&
		    !strcmp(w->name ? w->name : "", g->name ? g->name : ""))
			return 0;
	}
	if (q->nwritten < MAXGPU) {
		struct gpu_info *w = &q->written[q->nwritten++];
		*w = *g;
		w->name = g->name ? xstrdup(g->name) : NULL;
	}
	return 1;
}

static void free_file(struct sq *q)
{
	for (size_t i = 0; i < q->knames.cap; i++)
		if (q->knames.keys[i])
			free(q->knames.vals[i]);
	hmap_free(&q->knames);
	hmap_free(&q->anames);
	hmap_free(&q->domains);
	hmap_free(&q->cats);
	hmap_free(&q->threads);
	hmap_free(&q->streams);
	hmap_free(&q->mpi_tids);
	for (unsigned i = 0; i < q->ngpus; i++)
		free(q->gpus[i].name);
	q->ngpus = 0;
	q->ndomains = 0;
	q->dropped = 0;
}

static void end_file(void *ctx, struct tfile *t)
{
	struct sq *q = ctx;
	const struct ct_header *h = &t->f.h;
	struct sdb_row s;
	for (unsigned i = 0; i < q->ngpus; i++) {
		const struct gpu_info *g = &q->gpus[i];
		if (!gpu_row_new(q, g))
			continue;
		s = sdb_ins(q->db, T_GPU);
		SB_I(s, 1, g->dev);
		if (g->name)
			SB_T(s, 2, g->name, strlen(g->name));
		else
			SB_NULL(s, 2);
		sq_opt_i(s, 3, (int64_t)g->sms, g->sms != 0);
		sq_opt_i(s, 4, (int64_t)g->warp, g->warp != 0);
		SB_I(s, 5, q->gpid);
		sdb_row(q->db, T_GPU);
	}
	/* the process's name: argv[0] (the command line's arguments are
	 * NUL-separated; a path may hold spaces), without directories */
	const char *cmd = h->cmdline ? h->cmdline : "";
	size_t cl = strnlen(cmd, h->cmdline_len);
	const char *base = cmd;
	for (size_t i = 0; i < cl; i++)
		if (cmd[i] == '/')
			base = cmd + i + 1;
	s = sdb_ins(q->db, T_PROCESSES);
	SB_I(s, 1, q->gpid);
	SB_I(s, 2, h->pid);
	SB_T(s, 3, base, cl - (size_t)(base - cmd));
	sdb_row(q->db, T_PROCESSES);

	s = sdb_ins(q->db, T_RANKS);
	SB_I(s, 1, q->gpid);
	SB_I(s, 2, t->shown_rank);
	sq_opt_i(s, 3, h->local_rank, h->local_rank >= 0);
	sq_opt_i(s, 4, h->world_size, h->world_size > 0);
	sq_opt_i(s, 5, h->local_size, h->local_size > 0);
	if (h->host)
		SB_T(s, 6, h->host, strlen(h->host));
	else
		SB_NULL(s, 6);
	SB_I(s, 7, h->pid);
	SB_I(s, 8, t->off_ns);
	SB_T(s, 9, t->f.path, strlen(t->f.path));
	const char *st = ct_status_name(t->f.status);
	SB_T(s, 10, st, strlen(st));
	SB_I(s, 11, q->dropped);
	/* where the rank came from: the launcher's variable, NCCL, or none
	 * (numbered after the ranks; docs/CHOICES.md) */
	const char *src = h->rank >= 0 ? h->rank_source : t->nccl_shown ? "NCCL" : "none";
	SB_T(s, 12, src, strlen(src));
	sdb_row(q->db, T_RANKS);
	session_rows(q, t);
	free_file(q);
}

static const struct m_consumer sqlite_consumer = {begin_file, on_event, end_file};

/* Exports the files of the output `lead` leads (all when NULL) into path. */
static int export_files(struct inputs *in, const struct tfile *lead, const char *path)
{
	struct sdb db;
	if (sdb_open(&db, path))
		return -1;
	struct sdb_row s = sdb_ins(&db, T_SESSION_START);
	SB_I(s, 1, in->base_ns);
	sdb_row(&db, T_SESSION_START);
	struct sq q;
	memset(&q, 0, sizeof q);
	q.db = &db;
	meta_row(&q, T_META_EXPORT, "EXPORT_PRODUCT_NAME", "cuptrace", 8);
	meta_row(&q, T_META_EXPORT, "EXPORT_PRODUCT_VERSION", CT_VERSION, strlen(CT_VERSION));
	int bad = 0;
	for (size_t k = 0; k < in->n && !db.failed; k++) {
		if (!tfile_in_output(&in->v[k], lead))
			continue;
		if (model_file(&in->v[k], &sqlite_consumer, &q, NULL)) {
			say("%s", in->v[k].f.err);
			bad = 1;
		}
		tfile_release(&in->v[k]);
	}
	progress("exporting", (unsigned long long)q.events, 1);
	if (in->piece) { /* what a piece of the job kept and left out (model/piece.h) */
		char text[512];
		piece_describe(in, lead, text, sizeof text);
		meta_row(&q, T_META_EXPORT, "CUPTRACE_PIECE", text, strlen(text));
	}
	/* one row, as nsys writes for its session: the span of every file */
	s = sdb_ins(&db, T_ANALYSIS);
	SB_I(s, 1, q.vid);
	SB_I(s, 2, q.hi - q.lo);
	SB_I(s, 3, q.lo);
	SB_I(s, 4, q.hi);
	sdb_row(&db, T_ANALYSIS);
	for (unsigned i = 0; i < q.nwritten; i++)
		free(q.written[i].name);
	if (sdb_close(&db, 1))
		return -1;
	return bad;
}

int export_sqlite(struct inputs *in, const char *path, size_t *written)
{
	int rc = export_files(in, NULL, path);
	*written = rc >= 0;
	return rc ? 1 : 0;
}

int export_sqlite_split(struct inputs *in, const char *dir, size_t *written)
{
	*written = 0;
	int made;
	if (cranks_mkdir(dir, &made)) {
		if (!mpirt_rank())
			say("%s: %s", dir, strerror(errno));
		return 1;
	}
	struct cranks cr; /* an MPI job's: each rank writes its share of the databases */
	cranks_begin(&cr, in, 1);
	int rc = 0;
	for (size_t i = 0; i < in->n; i++) {
		if (in->v[i].lead != (int)i || (cr.mine && !cr.mine[i]))
			continue; /* in its lead's database, or another rank's */
		char path[4200];
		inputs_split_path(in, i, dir, ".sqlite", path, sizeof path);
		int r = export_files(in, &in->v[i], path);
		if (r)
			rc = 1;
		for (size_t k = 0; k < in->n && r >= 0; k++)
			*written += in->v[k].lead == (int)i;
	}
	return cranks_split_end(&cr, in, rc, written, dir, made);
}
