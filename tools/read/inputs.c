#include "read/inputs.h"
#include "read/nccl_log.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

struct names {
	char **v;
	size_t n, cap;
};

static void add_name(struct names *nm, const char *path)
{
	if (nm->n == nm->cap) {
		nm->cap = nm->cap ? nm->cap * 2 : 16;
		char **v = realloc(nm->v, nm->cap * sizeof *v);
		if (!v)
			exit(1);
		nm->v = v;
	}
	nm->v[nm->n++] = strdup(path);
}

/* What a file holds, by its first bytes: a trace (magic), an NCCL log
 * (text with NCCL's log markers), or neither. */
enum content { C_OTHER, C_TRACE, C_LOG };

static enum content content_of(const char *path)
{
	static char buf[64 << 10];
	FILE *f = fopen(path, "rb");
	if (!f)
		return C_OTHER;
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	if (n >= 8 && !memcmp(buf, CT_MAGIC, 8))
		return C_TRACE;
	return nccl_log_sniff(buf, n) ? C_LOG : C_OTHER;
}

/* Collects *.ctr files below dir (recursively, in name order), and NCCL
 * logs when logs is set. */
static void scan_dir(struct names *nm, struct names *logs, const char *dir, int depth)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		return;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		if (name[0] != '.') {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", dir, name);
			struct stat st;
			if (!stat(path, &st)) {
				if (S_ISDIR(st.st_mode) && depth < 8)
					scan_dir(nm, logs, path, depth + 1);
				else if (S_ISREG(st.st_mode) && ends_with(name, ".ctr"))
					add_name(nm, path);
				else if (S_ISREG(st.st_mode) && logs && content_of(path) == C_LOG)
					add_name(logs, path);
			}
		}
		free(ents[i]);
	}
	free(ents);
}

static int cmp_files(const void *a, const void *b)
{
	const struct tfile *x = a, *y = b;
	int64_t rx = x->rank < 0 ? INT64_MAX : x->rank, ry = y->rank < 0 ? INT64_MAX : y->rank;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	int c = strcmp(x->f.h.host, y->f.h.host);
	if (c)
		return c;
	if (x->f.h.rt_anchor != y->f.h.rt_anchor)
		return x->f.h.rt_anchor < y->f.h.rt_anchor ? -1 : 1;
	return x->f.h.pid < y->f.h.pid ? -1 : x->f.h.pid > y->f.h.pid;
}

static int open_inputs(struct inputs *in, char **args, int nargs, int with_logs)
{
	memset(in, 0, sizeof *in);
	struct names nm = {0}, logs = {0};
	int bad = 0;
	for (int i = 0; i < nargs; i++) {
		struct stat st;
		if (stat(args[i], &st)) {
			fprintf(stderr, "cuptrace: %s: %s\n", args[i], strerror(errno));
			bad = 1;
		} else if (S_ISDIR(st.st_mode)) {
			size_t before = nm.n + logs.n;
			scan_dir(&nm, with_logs ? &logs : NULL, args[i], 0);
			if (nm.n + logs.n == before) {
				fprintf(stderr, "cuptrace: %s: no .ctr trace files in this directory\n", args[i]);
				bad = 1;
			}
		} else if (!S_ISREG(st.st_mode)) {
			fprintf(stderr, "cuptrace: %s: not a regular file\n", args[i]);
			bad = 1;
		} else if (with_logs && content_of(args[i]) == C_LOG) {
			add_name(&logs, args[i]);
		} else {
			add_name(&nm, args[i]);
		}
	}
	if (nm.n && !bad) {
		in->v = calloc(nm.n, sizeof *in->v);
		if (!in->v)
			exit(1);
		for (size_t i = 0; i < nm.n; i++) {
			struct tfile *t = &in->v[in->n];
			if (ct_file_open(&t->f, nm.v[i])) {
				fprintf(stderr, "cuptrace: %s\n", t->f.err);
				bad = 1;
				continue;
			}
			t->rank = t->f.h.rank;
			in->n++;
		}
	}
	for (size_t i = 0; i < nm.n; i++)
		free(nm.v[i]);
	free(nm.v);
	in->logs = logs.v;
	in->nlogs = logs.n;
	if (bad || (!in->n && !in->nlogs)) {
		if (!bad)
			fprintf(stderr, "cuptrace: no input files\n");
		inputs_close(in);
		return -1;
	}
	if (in->n) /* none when the inputs are logs only */
		qsort(in->v, in->n, sizeof *in->v, cmp_files);
	in->base_ns = UINT64_MAX;
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].f.h.rt_anchor < in->base_ns)
			in->base_ns = in->v[i].f.h.rt_anchor;
	for (size_t i = 0; i < in->n; i++) {
		struct tfile *t = &in->v[i];
		const struct ct_header *h = &t->f.h;
		t->index = (int)i;
		t->off_ns = (int64_t)(h->rt_anchor - in->base_ns) - (int64_t)h->mono_anchor;
		t->pid = (uint64_t)(i + 1) * 1000000u;
		snprintf(t->label, sizeof t->label, "rank %lld (%.200s:%llu)",
			 (long long)(h->rank < 0 ? 0 : h->rank), h->host, (unsigned long long)h->pid);
		if (h->world_size > in->world_size)
			in->world_size = h->world_size;
	}
	if (in->world_size < (int64_t)in->n)
		in->world_size = (int64_t)in->n;
	return 0;
}

static void free_esc(struct tfile *t)
{
	strcache_free(&t->esc);
}

int inputs_open(struct inputs *in, char **args, int nargs)
{
	return open_inputs(in, args, nargs, 0);
}

int inputs_open_logs(struct inputs *in, char **args, int nargs)
{
	return open_inputs(in, args, nargs, 1);
}

void inputs_close(struct inputs *in)
{
	for (size_t i = 0; i < in->nlogs; i++)
		free(in->logs[i]);
	free(in->logs);
	for (size_t i = 0; i < in->n; i++) {
		ct_file_close(&in->v[i].f);
		free_esc(&in->v[i]);
	}
	free(in->v);
	memset(in, 0, sizeof *in);
}

void tfile_release(struct tfile *t)
{
	ct_file_release(&t->f);
	free_esc(t);
}

int inputs_rewind(struct inputs *in, size_t i)
{
	struct tfile *t = &in->v[i];
	char path[4096];
	snprintf(path, sizeof path, "%s", t->f.path);
	ct_file_close(&t->f);
	free_esc(t);
	if (ct_file_open(&t->f, path)) {
		fprintf(stderr, "cuptrace: %s\n", t->f.err);
		return -1;
	}
	return 0;
}

const char *tfile_esc(struct tfile *t, uint64_t sid, const char *s, uint32_t len, uint32_t *outlen)
{
	return strcache_get(&t->esc, sid, s, len, NULL, outlen);
}
