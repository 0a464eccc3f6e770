// SPDX-License-Identifier: MIT
/* The resolved events themselves, one per line, tab-separated: what
 * `cuptrace events` prints for scripts (awk, pandas) and what the
 * consumer-agreement test compares the other outputs with.
 *   file type cat track track_kind track_name ts_ns end_ns name [to_track to_ts_ns]
 * Times are ns on the job's timeline (as the Chrome trace's ts, in ns);
 * process and track lines, which name a track, have none (empty). */
#include "write/tsv/events_tsv.h"
#include "util/term_escape.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const type_name[] = {"process", "track", "slice", "async", "instant", "counter", "flow"};
static const char *const kind_name[] = {"thread", "stream", "stream_sync", "gpu_other", "nccl", "nccl_gpu", "mpi"};

/* Whether valid UTF-8 text holds a control character other than tab,
 * newline and return: C0, DEL, or C1 (U+0080..U+009F, bytes C2 80..9F). */
static int has_control(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f ||
		    (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] >= 0x80 &&
		     (unsigned char)s[i + 1] <= 0x9f))
			return 1;
	}
	return 0;
}

/* Text of a field: tabs and newlines of the traced program's strings
 * become spaces, invalid UTF-8 U+FFFD (util/utf8.h, as in the JSON), so
 * that a reader decoding UTF-8 (pandas) reads every line; other control
 * characters are written as escapes (util/term_escape.h, as the stats
 * tables and info write them), so that an ESC in a range's name cannot
 * drive the terminal the events are printed on. */
static void field(FILE *f, const char *s, size_t n)
{
	char *tmp;
	s = utf8_clean(s, &n, &tmp);
	if (has_control(s, n)) {
		char *flat = xcalloc(n + 1, 1);
		for (size_t i = 0; i < n; i++)
			flat[i] = s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ? ' ' : s[i];
		size_t cols;
		char *esc = term_escape(flat, n, &cols);
		fputs(esc, f);
		free(esc);
		free(flat);
	} else {
		for (size_t i = 0; i < n; i++)
			fputc(s[i] == '\t' || s[i] == '\n' || s[i] == '\r' ? ' ' : s[i], f);
	}
	free(tmp);
}

static void name_of(FILE *f, const struct m_event *ev)
{
	switch (ev->cat) {
	case MC_NVTX:
	case MC_MARK:
	case MC_GPU_ANNOTATION:
		field(f, ev->span->name.s, ev->span->name.len);
		break;
	case MC_STEP:
		fprintf(f, "ProfilerStep#%llu", (unsigned long long)ev->span->id);
		break;
	case MC_CAPTURE:
		fputs(ev->span->id ? "capture on" : "capture off", f);
		break;
	case MC_KERNEL:
		field(f, ev->gpu.name.s, ev->gpu.name.len);
		break;
	case MC_RUNTIME:
	case MC_DRIVER:
		field(f, ev->api.name.s, ev->api.name.len);
		break;
	case MC_NCCL:
	case MC_NCCL_GPU:
	case MC_NCCL_GROUP: {
		char buf[64];
		fputs(m_nccl_name(ev, buf, sizeof buf), f);
		break;
	}
	case MC_TORCH_OP:
	case MC_TORCH_SCOPE:
		field(f, ev->torch.name.s, ev->torch.name.len);
		break;
	case MC_TORCH_MEM:
		fprintf(f, "%s %lld B", ev->tmem.bytes < 0 ? "free" : "alloc",
		        (long long)(ev->tmem.bytes < 0 ? -(uint64_t)ev->tmem.bytes : (uint64_t)ev->tmem.bytes));
		break;
	case MC_HANG:
		fputs("hang_suspected ", f);
		field(f, ev->hang.func.s ? ev->hang.func.s : "", ev->hang.func.s ? ev->hang.func.len : 0);
		if (ev->hang.has_seq)
			fprintf(f, " #%llu", (unsigned long long)ev->hang.seq);
		break;
	case MC_MPI:
		field(f, ev->mpi->func.s, ev->mpi->func.len);
		break;
	case MC_MPI_HANG:
		fputs("hang_suspected ", f);
		field(f, ev->mpi->func.s, ev->mpi->func.len);
		if (ev->mpi->seq)
			fprintf(f, " #%llu", (unsigned long long)ev->mpi->seq);
		break;
	case MC_MPI_COMM: {
		const struct mpi_comm *c = ev->mpi->comm;
		if (c->name[0])
			field(f, c->name, strlen(c->name));
		fprintf(f, "%s%016llx rank %lld/%llu", c->name[0] ? " " : "", (unsigned long long)c->id,
		        (long long)c->rank, (unsigned long long)c->size);
		break;
	}
	case MC_NONE:
		if (ev->type == ME_PROCESS)
			field(f, ev->process.name ? ev->process.name : "",
			      ev->process.name ? strlen(ev->process.name) : 0);
		else
			field(f, ev->track->name, ev->track->name_len);
		break;
	default:
		break;
	}
}

static void on_event(void *ctx, const struct m_event *ev)
{
	struct events_tsv *e = ctx;
	FILE *f = e->f;
	const struct m_track *tr = ev->track;
	int64_t off = e->t->off_ns;
	fprintf(f, "%zu\t%s\t%s\t", tfile_place(e->t), type_name[ev->type], m_cat_name[ev->cat]);
	if (tr) {
		fprintf(f, "%u\t%s\t", tr->id, kind_name[tr->kind]);
		field(f, tr->name ? tr->name : "", tr->name ? tr->name_len : 0);
	} else {
		fputs("0\t\t", f);
	}
	if (ev->type == ME_TRACK || ev->type == ME_PROCESS) /* a name, no time */
		fputs("\t\t\t", f);
	else
		fprintf(f, "\t%lld\t%lld\t", (long long)((int64_t)ev->ts + off),
			(long long)((int64_t)ev->end + off));
	name_of(f, ev);
	if (ev->type == ME_FLOW)
		fprintf(f, "\t%u\t%lld", ev->flow.to->id, (long long)((int64_t)ev->flow.to_ts + off));
	if (ev->type == ME_ASYNC)
		fprintf(f, "\t%u\t", ev->end_track->id);
	fputc('\n', f);
}

/* Each file begins with a process line that names its rank as every
 * output shows it: "rank R (host:pid)" (the model's process lines name
 * the GPUs). */
static void begin_file(void *ctx, struct tfile *t)
{
	struct events_tsv *e = ctx;
	e->t = t;
	fprintf(e->f, "%zu\tprocess\tnone\t0\t\t\t\t\t", tfile_place(t));
	field(e->f, t->label, strlen(t->label));
	fputc('\n', e->f);
}

const struct m_consumer events_tsv_consumer = {begin_file, on_event, NULL};

void events_tsv_head(FILE *f)
{
	fputs("file\ttype\tcat\ttrack\ttrack_kind\ttrack_name\tts_ns\tend_ns\tname\tto_track\tto_ts_ns\n", f);
}
