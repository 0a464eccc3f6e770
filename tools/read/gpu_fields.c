// SPDX-License-Identifier: MIT
/* Shared helpers for GPU events: field lookup, names, demangling. */
#include "read/gpu_fields.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* libstdc++'s demangler (C linkage): the traced process never demangles,
 * the tools do. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

unsigned gpu_field(unsigned kind, const char *name)
{
	const struct ct_schema *s = ct_schema_of(kind);
	for (unsigned i = 0; s && i < s->nfields; i++)
		if (!strcmp(s->field[i], name))
			return i;
	fprintf(stderr, "cuptrace: internal error: kind %u has no field '%s'\n", kind, name);
	exit(1);
}

static struct gpu_fields f;

/* Once, whatever thread converts first (ranks convert in parallel). */
static void find_fields(void)
{
#define F(kind, name) gpu_field(kind, name)
	unsigned k = CT_EV_KERNEL;
	f.k.ts = F(k, "ts"), f.k.end = F(k, "end"), f.k.corr = F(k, "correlation");
	f.k.dev = F(k, "device"), f.k.ctx = F(k, "context"), f.k.stream = F(k, "stream");
	f.k.name = F(k, "name");
	f.k.grid[0] = F(k, "grid_x"), f.k.grid[1] = F(k, "grid_y"), f.k.grid[2] = F(k, "grid_z");
	f.k.block[0] = F(k, "block_x"), f.k.block[1] = F(k, "block_y"),
	f.k.block[2] = F(k, "block_z");
	f.k.regs = F(k, "registers"), f.k.ssmem = F(k, "static_smem"),
	f.k.dsmem = F(k, "dynamic_smem");
	f.k.graph = F(k, "graph_id"), f.k.node = F(k, "graph_node");
	k = CT_EV_MEMCPY;
	f.m.ts = F(k, "ts"), f.m.end = F(k, "end"), f.m.corr = F(k, "correlation");
	f.m.bytes = F(k, "bytes"), f.m.dev = F(k, "device"), f.m.ctx = F(k, "context");
	f.m.stream = F(k, "stream"), f.m.kind = F(k, "copy_kind"), f.m.src_kind = F(k, "src_kind");
	f.m.dst_kind = F(k, "dst_kind"), f.m.src_dev = F(k, "src_device");
	f.m.dst_dev = F(k, "dst_device"), f.m.graph = F(k, "graph_id");
	k = CT_EV_MEMSET;
	f.s.ts = F(k, "ts"), f.s.end = F(k, "end"), f.s.corr = F(k, "correlation");
	f.s.bytes = F(k, "bytes"), f.s.dev = F(k, "device"), f.s.ctx = F(k, "context");
	f.s.stream = F(k, "stream"), f.s.value = F(k, "value"), f.s.mem_kind = F(k, "memory_kind");
	k = CT_EV_SYNC;
	f.y.ts = F(k, "ts"), f.y.end = F(k, "end"), f.y.corr = F(k, "correlation");
	f.y.ctx = F(k, "context"), f.y.stream = F(k, "stream"), f.y.type = F(k, "type");
	f.y.event = F(k, "event");
	k = CT_EV_CUDA_API;
	f.a.ts = F(k, "ts"), f.a.end = F(k, "end"), f.a.corr = F(k, "correlation");
	f.a.tid = F(k, "tid"), f.a.name = F(k, "name"), f.a.status = F(k, "status");
	f.a.api = F(k, "api"), f.a.cbid = F(k, "cbid");
	k = CT_EV_GPU_MEMORY;
	f.mem.ts = F(k, "ts"), f.mem.corr = F(k, "correlation"), f.mem.op = F(k, "op");
	f.mem.bytes = F(k, "bytes"), f.mem.dev = F(k, "device"),
	f.mem.mem_kind = F(k, "memory_kind");
	k = CT_EV_GPU_DEVICE;
	f.d.dev = F(k, "device"), f.d.name = F(k, "name"), f.d.gmem = F(k, "global_memory");
	f.d.ccmaj = F(k, "cc_major"), f.d.ccmin = F(k, "cc_minor"), f.d.sms = F(k, "sms");
	f.d.tpb = F(k, "max_threads_per_block"), f.d.wpsm = F(k, "max_warps_per_sm");
	f.d.regs_block = F(k, "regs_per_block"), f.d.regs_sm = F(k, "regs_per_sm");
	f.d.smem_block = F(k, "smem_per_block"), f.d.smem_sm = F(k, "smem_per_sm");
	f.d.warp = F(k, "warp_size"), f.d.l2 = F(k, "l2_cache"), f.d.clock = F(k, "core_clock_khz");
	f.d.bw = F(k, "memory_bandwidth_kbs"), f.d.uuid = F(k, "uuid");
	k = CT_EV_GPU_CONTEXT;
	f.c.ctx = F(k, "context"), f.c.dev = F(k, "device");
	k = CT_EV_CUDA_EVENT;
	f.e.corr = F(k, "correlation"), f.e.ctx = F(k, "context"), f.e.stream = F(k, "stream");
	f.e.event = F(k, "event");
#undef F
}

const struct gpu_fields *gpu_fields(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, find_fields);
	return &f;
}

const char *gpu_copy_kind(uint64_t k)
{
	static const char *const n[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
	                                "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
	return k < sizeof n / sizeof *n ? n[k] : "Unknown";
}

const char *gpu_memory_kind(uint64_t k)
{
	static const char *const n[] = {"Unknown", "Pageable", "Pinned",        "Device",
	                                "Array",   "Managed",  "Device Static", "Managed Static"};
	return k < sizeof n / sizeof *n ? n[k] : "Unknown";
}

int gpu_memory_on_device(uint64_t k)
{
	return k == 3 || k == 4 || k == 5 || k == 6 || k == 7;
}

const char *gpu_sync_name(uint64_t type)
{
	switch (type) {
	case 1:
		return "Event Sync";
	case 2:
		return "Stream Wait Event";
	case 3:
		return "Stream Sync";
	case 4:
		return "Context Sync";
	default:
		return "Unknown Sync";
	}
}

char *gpu_demangle(const char *s, size_t n, size_t *outlen)
{
	char *z = malloc(n + 1);
	if (!z)
		exit(1);
	memcpy(z, s, n);
	z[n] = 0;
	if (n > 2 && s[0] == '_' && s[1] == 'Z' && !memchr(s, 0, n)) {
		int status = -1;
		char *d = __cxa_demangle(z, NULL, NULL, &status);
		if (d && status == 0) {
			free(z);
			*outlen = strlen(d);
			return d;
		}
		free(d);
	}
	*outlen = n;
	return z;
}

/* Whether the configuration's CUPTRACE_TRACE names one of src (absent:
 * when the header has no such line). */
static int traces_any(const struct ct_header *h, const char *const *src, size_t nsrc, int absent)
{
	const char *p = h->config ? strstr(h->config, "CUPTRACE_TRACE=") : NULL;
	if (!p)
		return absent;
	p += strlen("CUPTRACE_TRACE=");
	size_t n = strcspn(p, "\n");
	for (size_t i = 0; i < nsrc; i++) {
		size_t m = strlen(src[i]);
		for (const char *q = p; q + m <= p + n; q++)
			if (!memcmp(q, src[i], m) && (q == p || q[-1] == ',') &&
			    (q + m == p + n || q[m] == ','))
				return 1;
	}
	return 0;
}

int gpu_file_traces_cuda(const struct ct_header *h)
{
	static const char *const src[] = {"kernel", "memcpy", "api", "sync", "memory", "cuda"};
	return traces_any(h, src, sizeof src / sizeof *src, 0);
}

int gpu_file_records_kernels(const struct ct_file *file)
{
	if (file->final_footer)
		return file->f_events[CT_EV_KERNEL] > 0;
	static const char *const src[] = {"kernel", "cuda"};
	return traces_any(&file->h, src, 2, 1); /* the default records kernels */
}
