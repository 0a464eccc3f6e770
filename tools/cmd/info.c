/* cuptrace info: what a trace file holds and whether it ended cleanly. */
#include "cmd/cmd.h"
#include "read/inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
	fputs("usage: cuptrace info INPUT...\n\n"
	      "For one file: its header, configuration, events and drops per kind, and\n"
	      "whether it ended cleanly, is truncated or had damaged blocks skipped. For\n"
	      "several: one row per file, and the ranks missing from the job.\n",
	      f);
}

static uint64_t sum(const uint64_t *v)
{
	uint64_t s = 0;
	for (unsigned k = 0; k < CT_NKINDS; k++)
		s += v[k];
	return s;
}

static void detail(struct tfile *t)
{
	const struct ct_header *h = &t->f.h;
	printf("file:        %s\n", t->f.path);
	printf("format:      %u.%u (written by cuptrace %s)\n", h->major, h->minor, h->version);
	printf("host:        %s\n", h->host);
	printf("pid:         %llu (parent %llu)\n", (unsigned long long)h->pid,
	       (unsigned long long)h->ppid);
	if (h->rank < 0)
		printf("rank:        none (not started by a launcher)\n");
	else
		printf("rank:        %lld (local %lld, world size %lld, from %s)\n", (long long)h->rank,
		       (long long)h->local_rank, (long long)h->world_size, h->rank_source);
	printf("command:    ");
	for (size_t i = 0; i < h->cmdline_len; i++)
		putchar(h->cmdline[i] ? h->cmdline[i] : ' ');
	printf("\n");
	printf("started:     %llu ns (CLOCK_REALTIME)\n", (unsigned long long)h->rt_anchor);
	if (t->f.have_footer && t->f.mono_end > h->mono_anchor)
		printf("duration:    %.3f s\n", (double)(t->f.mono_end - h->mono_anchor) / 1e9);
	printf("config:\n");
	for (const char *p = h->config; *p;) {
		size_t n = strcspn(p, "\n");
		printf("  %.*s\n", (int)n, p);
		p += n + (p[n] ? 1 : 0);
	}
	printf("blocks:      %llu (%llu bytes decoded)\n", (unsigned long long)t->f.nblocks,
	       (unsigned long long)t->f.bytes);
	printf("events:      %llu\n", (unsigned long long)sum(t->f.events));
	for (unsigned k = 0; k < CT_NKINDS; k++) {
		const struct ct_schema *s = ct_schema_of(k);
		if (s && (t->f.events[k] || t->f.drops[k]))
			printf("  %-14s %12llu   dropped %llu\n", s->name,
			       (unsigned long long)t->f.events[k], (unsigned long long)t->f.drops[k]);
	}
	printf("dropped:     %llu\n", (unsigned long long)sum(t->f.drops));
	if (t->f.trunc_str)
		printf("cut strings: %llu (longer than the recorder keeps)\n",
		       (unsigned long long)t->f.trunc_str);
	if (t->f.damaged) {
		uint64_t want = sum(t->f.f_events), got = sum(t->f.events);
		printf("damaged:     %llu damaged block%s skipped (%llu bytes)", (unsigned long long)t->f.damaged,
		       t->f.damaged > 1 ? "s" : "", (unsigned long long)t->f.damaged_bytes);
		if (t->f.final_footer && want > got)
			printf(", %llu of %llu events lost", (unsigned long long)(want - got),
			       (unsigned long long)want);
		if (t->f.lost_refs)
			printf(", %llu references to strings lost with them (read as \"?\")",
			       (unsigned long long)t->f.lost_refs);
		printf("\n");
	}
	printf("status:      %s%s%s\n", ct_status_name(t->f.status), t->f.err[0] ? ": " : "",
	       t->f.status == CT_CLEAN ? "" : t->f.err);
}

static void missing_ranks(struct inputs *in)
{
	int64_t world = 0;
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].f.h.world_size > world)
			world = in->v[i].f.h.world_size;
	if (world <= 0 || world > 1 << 24)
		return;
	char *seen = calloc((size_t)world, 1);
	if (!seen)
		return;
	for (size_t i = 0; i < in->n; i++)
		if (in->v[i].rank >= 0 && in->v[i].rank < world)
			seen[in->v[i].rank] = 1;
	int printed = 0;
	for (int64_t r = 0; r < world; r++) {
		if (seen[r])
			continue;
		int64_t e = r;
		while (e + 1 < world && !seen[e + 1])
			e++;
		printf("%s%lld", printed ? "," : "missing ranks: ", (long long)r);
		if (e > r)
			printf("-%lld", (long long)e);
		printed = 1;
		r = e;
	}
	if (printed)
		printf(" (world size %lld)\n", (long long)world);
	free(seen);
}

int cmd_info(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	struct inputs in;
	if (inputs_open(&in, argv + 1, argc - 1))
		return 1;
	int rc = 0;
	for (size_t i = 0; i < in.n; i++) {
		struct ct_event ev;
		while (ct_file_next(&in.v[i].f, &ev) == 1)
			;
		if (in.v[i].f.status == CT_CORRUPT || in.v[i].f.status == CT_DAMAGED)
			rc = 1;
	}
	if (in.n == 1) {
		detail(&in.v[0]);
	} else {
		printf("%5s  %-20s %8s %12s %10s  %-9s  %s\n", "rank", "host", "pid", "events", "dropped",
		       "status", "file");
		for (size_t i = 0; i < in.n; i++) {
			struct tfile *t = &in.v[i];
			printf("%5lld  %-20.20s %8llu %12llu %10llu  %-9s  %s\n", (long long)t->rank,
			       t->f.h.host, (unsigned long long)t->f.h.pid,
			       (unsigned long long)sum(t->f.events), (unsigned long long)sum(t->f.drops),
			       ct_status_name(t->f.status), t->f.path);
		}
		missing_ranks(&in);
	}
	inputs_close(&in);
	return rc;
}
