// SPDX-License-Identifier: MIT
/* breakdown: where each GPU's time goes (docs/ANALYSIS.md). Per rank and
 * GPU, over the window from its first work's start to its last work's end
 * (and per step with --by step): the length of the union of compute
 * kernels, of communication (NCCL kernels, and the GPU time the NCCL join
 * gives operations), of memory operations (copies, memsets), of all of
 * them; idle = window - that union; overlap = communication during which
 * compute also ran; exposed communication = communication without compute;
 * compute-memory and communication-memory overlaps = time in which compute
 * (communication) and a copy or memset ran at once.
 * The union is streamed by busy.c; per step, segments wait until the step
 * that holds them is known (steps are handed out when they end). */
#include "read/gpu_fields.h"
#include "stats/busy.h"
#include "stats/mpi_wait.h"
#include "stats/stats.h"
#include "stats/tbuckets.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_GPUS 64
#define MAX_HELD (1u << 16) /* segments waiting for their step */

struct acc {
	uint64_t window, compute, comm, mem, busy, overlap, exposed, comp_mem, comm_mem;
};

struct seg {
	uint64_t a, b;
	unsigned mask;
};

struct step {
	int64_t num;
	uint64_t ts, end;
	struct acc *acc; /* per GPU of the file, [MAX_GPUS] */
};

struct gpu {
	uint64_t device;
	struct busy *busy;
	struct acc whole;
	struct seg *held;
	size_t nheld, capheld;
	size_t cursor; /* first step that may hold the next segment */
	struct bd *bd;
	unsigned index;
	struct tbuckets tb; /* --by time: busy ns per bucket of the job's timeline */
};

struct trow {
	int64_t rank;
	uint64_t gpu;
	struct tbuckets tb;
};

struct row {
	int64_t rank, step; /* step -1: the whole window */
	uint64_t gpu;
	struct acc a;
};

struct bd {
	const struct stats_opts *opts;
	struct tfile *t; /* the file being read */
	int kernels;     /* its NCCL GPU time is its NCCL kernels' (category()) */
	struct gpu gpus[MAX_GPUS];
	unsigned ngpu;
	struct step *steps;
	size_t nsteps, capsteps;
	uint64_t covered; /* end of the last step known */
	struct row *rows;
	size_t nrows, caprows;
	struct trow *trows; /* --by time */
	size_t ntrows, captrows;
	struct busy_late late; /* work the sweep had passed, all files */
	struct mpi_wait mpi;   /* the CPU's time in MPI calls per rank */
};

static void add(struct acc *a, uint64_t len, unsigned mask)
{
	a->window += len;
	if (!mask)
		return;
	a->busy += len;
	if (mask & BUSY_COMPUTE)
		a->compute += len;
	if (mask & BUSY_COMM)
		a->comm += len;
	if (mask & BUSY_MEMORY)
		a->mem += len;
	if ((mask & BUSY_COMM) && (mask & BUSY_COMPUTE))
		a->overlap += len;
	if ((mask & BUSY_COMM) && !(mask & BUSY_COMPUTE))
		a->exposed += len;
	if ((mask & BUSY_COMPUTE) && (mask & BUSY_MEMORY))
		a->comp_mem += len;
	if ((mask & BUSY_COMM) && (mask & BUSY_MEMORY))
		a->comm_mem += len;
}

/* Segment [a, b) into the steps it meets (steps are in time order). */
static void to_steps(struct bd *bd, struct gpu *g, uint64_t a, uint64_t b, unsigned mask)
{
	while (g->cursor < bd->nsteps && bd->steps[g->cursor].end <= a)
		g->cursor++;
	for (size_t i = g->cursor; i < bd->nsteps && bd->steps[i].ts < b; i++) {
		struct step *s = &bd->steps[i];
		uint64_t lo = a > s->ts ? a : s->ts, hi = b < s->end ? b : s->end;
		if (hi > lo)
			add(&s->acc[g->index], hi - lo, mask);
	}
}

static void flush_held(struct bd *bd, struct gpu *g, int all)
{
	if (!g->nheld)
		return;
	size_t i = 0;
	for (; i < g->nheld && (all || g->held[i].b <= bd->covered); i++)
		to_steps(bd, g, g->held[i].a, g->held[i].b, g->held[i].mask);
	memmove(g->held, g->held + i, (g->nheld - i) * sizeof *g->held);
	g->nheld -= i;
}

static void on_seg(void *ctx, uint64_t a, uint64_t b, unsigned mask, const struct busy_iv *next)
{
	(void)next;
	struct gpu *g = ctx;
	struct bd *bd = g->bd;
	add(&g->whole, b - a, mask);
	if (mask && bd->opts->by_time) /* on the job's timeline, as every rank's */
		tb_add(&g->tb, (uint64_t)((int64_t)a + bd->t->off_ns),
		       (uint64_t)((int64_t)b + bd->t->off_ns));
	if (!bd->opts->by_step)
		return;
	if (b <= bd->covered && !g->nheld) {
		to_steps(bd, g, a, b, mask);
		return;
	}
	if (g->nheld && g->held[g->nheld - 1].mask == mask && g->held[g->nheld - 1].b == a) {
		g->held[g->nheld - 1].b = b;
		return;
	}
	if (g->nheld == MAX_HELD) /* no step ends here for long: place what can be */
		flush_held(bd, g, 1);
	if (g->nheld == g->capheld) {
		g->capheld = g->capheld ? g->capheld * 2 : 256;
		g->held = xrealloc(g->held, g->capheld * sizeof *g->held);
	}
	g->held[g->nheld++] = (struct seg){a, b, mask};
}

static struct gpu *gpu_of(struct bd *bd, uint64_t device)
{
	for (unsigned i = 0; i < bd->ngpu; i++)
		if (bd->gpus[i].device == device)
			return &bd->gpus[i];
	if (bd->ngpu == MAX_GPUS)
		return &bd->gpus[MAX_GPUS - 1]; /* more GPUs than that share the last */
	struct gpu *g = &bd->gpus[bd->ngpu];
	memset(g, 0, sizeof *g);
	g->device = device;
	g->bd = bd;
	g->index = bd->ngpu++;
	g->busy = busy_new(on_seg, g);
	return g;
}

static void push_row(struct bd *bd, int64_t step, uint64_t gpu, const struct acc *a)
{
	if (bd->nrows == bd->caprows) {
		bd->caprows = bd->caprows ? bd->caprows * 2 : 64;
		bd->rows = xrealloc(bd->rows, bd->caprows * sizeof *bd->rows);
	}
	bd->rows[bd->nrows++] = (struct row){bd->t->shown_rank, step, gpu, *a};
}

static int by_device(const void *x, const void *y)
{
	const struct gpu *a = x, *b = y;
	return a->device < b->device ? -1 : a->device > b->device;
}

/* The file ended: its rows. */
static void end_file(struct bd *bd)
{
	if (!bd->t)
		return;
	for (unsigned i = 0; i < bd->ngpu; i++) {
		struct gpu *g = &bd->gpus[i];
		busy_finish(g->busy);
		flush_held(bd, g, 1);
		struct busy_late l = busy_late(g->busy);
		bd->late.n += l.n, bd->late.ns += l.ns;
	}
	/* rows by GPU: its steps, then its whole window */
	unsigned order[MAX_GPUS];
	struct gpu sorted[MAX_GPUS];
	memcpy(sorted, bd->gpus, bd->ngpu * sizeof *sorted);
	qsort(sorted, bd->ngpu, sizeof *sorted, by_device);
	for (unsigned i = 0; i < bd->ngpu; i++)
		order[i] = sorted[i].index;
	for (unsigned k = 0; k < bd->ngpu; k++) {
		struct gpu *g = &bd->gpus[order[k]];
		if (bd->opts->by_step)
			for (size_t s = 0; s < bd->nsteps; s++) {
				struct acc a = bd->steps[s].acc[g->index];
				a.window = bd->steps[s].end - bd->steps[s].ts; /* idle is in the step too */
				push_row(bd, bd->steps[s].num, g->device, &a);
			}
		push_row(bd, -1, g->device, &g->whole);
		if (bd->opts->by_time) {
			if (bd->ntrows == bd->captrows) {
				bd->captrows = bd->captrows ? bd->captrows * 2 : 16;
				bd->trows = xrealloc(bd->trows, bd->captrows * sizeof *bd->trows);
			}
			bd->trows[bd->ntrows++] = (struct trow){bd->t->shown_rank, g->device, g->tb};
		}
		busy_free(g->busy);
		free(g->held);
	}
	for (size_t s = 0; s < bd->nsteps; s++)
		free(bd->steps[s].acc);
	free(bd->steps);
	bd->steps = NULL;
	bd->nsteps = bd->capsteps = 0;
	bd->covered = 0;
	bd->ngpu = 0;
	bd->t = NULL;
}

static void *begin(const struct stats_opts *opts)
{
	struct bd *bd = xcalloc(1, sizeof *bd);
	bd->opts = opts;
	return bd;
}

static unsigned category(const struct bd *bd, const struct m_event *ev, uint64_t *device)
{
	switch (ev->cat) {
	case MC_KERNEL:
		*device = ev->gpu.device;
		return ev->gpu.comm ? BUSY_COMM : BUSY_COMPUTE;
	case MC_MEMCPY:
	case MC_MEMSET:
		*device = ev->gpu.device;
		return BUSY_MEMORY;
	case MC_NCCL_GPU:
		/* The profiler plugin's GPU time of an operation, only where CUPTI
		 * records no kernels: else its NCCL kernel is its GPU time. These
		 * slices come when the NCCL join hands its plans out, long after
		 * the kernels around them: the sweep would have passed their start
		 * and cut them (busy.h), and a kernel the join did not tie to its
		 * plan would count twice. */
		if (bd->kernels)
			return 0;
		*device = ev->nccl.plan && ev->nccl.plan->has_kernel ? ev->nccl.plan->kernel.device : 0;
		return BUSY_COMM;
	default:
		return 0;
	}
}

static void event(void *p, struct tfile *t, const struct m_event *ev)
{
	struct bd *bd = p;
	if (bd->t != t) {
		end_file(bd);
		bd->t = t;
		bd->kernels = gpu_file_records_kernels(&t->f);
	}
	mpi_wait_event(&bd->mpi, t->shown_rank, ev);
	if (ev->type != ME_SLICE)
		return;
	if (ev->cat == MC_STEP) {
		if (!bd->opts->by_step)
			return;
		if (bd->nsteps == bd->capsteps) {
			bd->capsteps = bd->capsteps ? bd->capsteps * 2 : 64;
			bd->steps = xrealloc(bd->steps, bd->capsteps * sizeof *bd->steps);
		}
		struct step *s = &bd->steps[bd->nsteps++];
		s->num = (int64_t)ev->span->id;
		s->ts = ev->ts, s->end = ev->end > ev->ts ? ev->end : ev->ts;
		s->acc = xcalloc(MAX_GPUS, sizeof *s->acc);
		if (s->end > bd->covered)
			bd->covered = s->end;
		for (unsigned i = 0; i < bd->ngpu; i++)
			if (bd->gpus[i].nheld)
				flush_held(bd, &bd->gpus[i], 0);
		return;
	}
	uint64_t device = 0;
	unsigned cat = category(bd, ev, &device);
	if (!cat)
		return;
	busy_add(gpu_of(bd, device)->busy, ev->track, ev->ts, ev->end, cat, 0);
}

/* Rows are per file: a part's come after those of the files before. */
static void merge(void *p, void *part)
{
	struct bd *bd = p, *q = part;
	end_file(q);
	mpi_wait_merge(&bd->mpi, &q->mpi);
	for (size_t i = 0; i < q->nrows; i++) {
		if (bd->nrows == bd->caprows) {
			bd->caprows = bd->caprows ? bd->caprows * 2 : 64;
			bd->rows = xrealloc(bd->rows, bd->caprows * sizeof *bd->rows);
		}
		bd->rows[bd->nrows++] = q->rows[i];
	}
	for (size_t i = 0; i < q->ntrows; i++) {
		if (bd->ntrows == bd->captrows) {
			bd->captrows = bd->captrows ? bd->captrows * 2 : 16;
			bd->trows = xrealloc(bd->trows, bd->captrows * sizeof *bd->trows);
		}
		bd->trows[bd->ntrows++] = q->trows[i]; /* its buckets move over */
	}
	bd->late.n += q->late.n, bd->late.ns += q->late.ns;
	free(q->rows);
	free(q->trows);
	free(q);
}

/* A file's part, its rows made (end_file: merge's own call finds it done). */
static void pack(void *part, struct pack *b)
{
	struct bd *q = part;
	end_file(q);
	pk_array(b, q->rows, q->nrows, sizeof *q->rows);
	pk_array(b, q->trows, q->ntrows, sizeof *q->trows);
	PK(b, q->late);
	pk_array(b, q->mpi.v, q->mpi.n, sizeof *q->mpi.v);
}

static void *unpack(void *p, struct pack *b, struct inputs *in)
{
	(void)in;
	struct bd *q = begin(((struct bd *)p)->opts);
	q->rows = up_array(b, &q->nrows, sizeof *q->rows);
	q->caprows = q->nrows;
	q->trows = up_array(b, &q->ntrows, sizeof *q->trows);
	q->captrows = q->ntrows;
	UP(b, q->late);
	q->mpi.v = up_array(b, &q->mpi.n, sizeof *q->mpi.v);
	q->mpi.cap = q->mpi.n;
	return q;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static const char *const COLS[] = {
    "Rank",	     "GPU",	       "Step",	       "Window (ns)",	"Compute (ns)",
    "Communication (ns)", "Memory (ns)", "Idle (ns)", "Compute (%)", "Communication (%)",
    "Memory (%)",   "Idle (%)",    "Overlap (%)",  "Exposed Comm (ns)",
    "Compute-Memory Overlap (ns)", "Comm-Memory Overlap (ns)"};
#define NCOLS ((int)(sizeof COLS / sizeof *COLS))

enum { M_WINDOW, M_COMPUTE, M_COMM, M_MEM, M_IDLE, M_PCOMP, M_PCOMM, M_PMEM, M_PIDLE, M_OVERLAP,
       M_EXPOSED, M_COMP_MEM, M_COMM_MEM, M_N };

/* The figures of a row, by metric (Overlap: -1 when there is no communication). */
static void metrics(const struct acc *a, double *m)
{
	uint64_t idle = a->window - (a->busy < a->window ? a->busy : a->window);
	m[M_WINDOW] = (double)a->window, m[M_COMPUTE] = (double)a->compute;
	m[M_COMM] = (double)a->comm, m[M_MEM] = (double)a->mem, m[M_IDLE] = (double)idle;
	m[M_PCOMP] = pct(a->compute, a->window), m[M_PCOMM] = pct(a->comm, a->window);
	m[M_PMEM] = pct(a->mem, a->window), m[M_PIDLE] = pct(idle, a->window);
	m[M_OVERLAP] = a->comm ? pct(a->overlap, a->comm) : -1;
	m[M_EXPOSED] = (double)a->exposed;
	m[M_COMP_MEM] = (double)a->comp_mem, m[M_COMM_MEM] = (double)a->comm_mem;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* --by time: each GPU's busy time (the union of its work) per bucket of
 * the job's timeline, one width for all (the widest any GPU needed). */
/* A row's first cells: Rank (the shown rank: struct tfile) and GPU. */
static void row_head(struct table *t, int64_t rank, uint64_t gpu)
{
	table_row(t);
	table_i64(t, rank);
	table_u64(t, gpu);
}

static struct table *time_table(struct bd *bd)
{
	static const char *const TCOLS[] = {"Rank", "GPU", "Start (ns)", "Width (ns)", "Busy (ns)",
					    "Busy (%)"};
	struct table *t = table_new("breakdown: GPU busy time per time bucket", 6, TCOLS);
	uint64_t width = 0;
	unsigned n = 0;
	for (size_t i = 0; i < bd->ntrows; i++)
		width = bd->trows[i].tb.width > width ? bd->trows[i].tb.width : width;
	for (size_t i = 0; i < bd->ntrows; i++) {
		tb_widen(&bd->trows[i].tb, width);
		n = bd->trows[i].tb.n > n ? bd->trows[i].tb.n : n;
	}
	for (size_t i = 0; i < bd->ntrows; i++) {
		const struct trow *r = &bd->trows[i];
		for (unsigned k = 0; k < n; k++) {
			row_head(t, r->rank, r->gpu);
			table_u64(t, k * width);
			table_u64(t, width);
			table_u64(t, r->tb.v[k]);
			table_f(t, pct(r->tb.v[k], width), 1);
		}
	}
	if (!n)
		table_note(t, "(no GPU work in the inputs)");
	return t;
}

static int end(void *p, struct table **out)
{
	struct bd *bd = p;
	end_file(bd);
	int n = 0;
	struct table *mpi = mpi_wait_table(&bd->mpi);
	if (!bd->nrows && !mpi && !bd->opts->explicit_list) { /* the report does not apply */
		free(bd);
		return 0;
	}
	struct table *t = table_new("breakdown: GPU time by compute, communication, memory, idle",
	                            NCOLS, COLS);
	for (size_t i = 0; i < bd->nrows; i++) {
		const struct row *r = &bd->rows[i];
		double m[M_N];
		metrics(&r->a, m);
		row_head(t, r->rank, r->gpu);
		if (r->step >= 0)
			table_i64(t, r->step);
		else
			table_null(t);
		for (int k = M_WINDOW; k <= M_IDLE; k++)
			table_u64(t, (uint64_t)m[k]);
		for (int k = M_PCOMP; k <= M_PIDLE; k++)
			table_f(t, m[k], 1);
		if (m[M_OVERLAP] < 0)
			table_null(t);
		else
			table_f(t, m[M_OVERLAP], 1);
		for (int k = M_EXPOSED; k < M_N; k++)
			table_u64(t, (uint64_t)m[k]);
	}
	if (!bd->nrows)
		table_note(t, "(no GPU kernels, copies, memsets or NCCL GPU time in the inputs)");
	if (bd->late.n) {
		char note[BUSY_LATE_NOTE];
		busy_late_note(note, sizeof note, bd->late);
		table_note(t, note);
	}
	out[n++] = t;
	/* the summary over ranks: whole-window rows */
	static const char *const SCOLS[] = {"Metric", "Min", "Median", "Max", "Rank of Max"};
	struct table *s = table_new("breakdown: summary over ranks (whole window)", 5, SCOLS);
	size_t nw = 0;
	for (size_t i = 0; i < bd->nrows; i++)
		nw += bd->rows[i].step < 0;
	double *v = xcalloc(nw ? nw : 1, sizeof *v);
	for (int k = 0; k < M_N && nw; k++) {
		size_t c = 0;
		int64_t max_rank = -1;
		double max = 0;
		for (size_t i = 0; i < bd->nrows; i++) {
			if (bd->rows[i].step >= 0)
				continue;
			double m[M_N];
			metrics(&bd->rows[i].a, m);
			if (m[k] < 0)
				continue; /* unknown */
			if (!c || m[k] > max)
				max = m[k], max_rank = bd->rows[i].rank;
			v[c++] = m[k];
		}
		table_row(s);
		table_str(s, COLS[3 + k]);
		if (!c) {
			table_null(s), table_null(s), table_null(s), table_null(s);
			continue;
		}
		qsort(v, c, sizeof *v, cmp_d);
		double med = (v[(c - 1) / 2] + v[c / 2]) / 2;
		int dec = k >= M_PCOMP && k <= M_OVERLAP ? 1 : 0;
		table_f(s, v[0], dec);
		table_f(s, med, dec);
		table_f(s, v[c - 1], dec);
		if (max_rank >= 0)
			table_i64(s, max_rank);
		else
			table_null(s);
	}
	if (!nw)
		table_note(s, "(no GPU work in the inputs)");
	free(v);
	out[n++] = s;
	if (bd->opts->by_time)
		out[n++] = time_table(bd);
	if (mpi)
		out[n++] = mpi;
	free(bd->rows);
	free(bd->trows);
	free(bd);
	return n;
}

const struct report report_breakdown = {
    "breakdown",
    "GPU time per rank and GPU (--by step: per step; --by time: busy per time bucket): compute,\n"
    "               communication, memory, idle, overlap",
    begin, event, end,
    .merge = merge, .pack = pack, .unpack = unpack,
};
